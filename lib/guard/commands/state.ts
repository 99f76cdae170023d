/**
 * context-guard `state` (`references/context-guard.md#ratchet-state`): the ratchet state file of
 * context-slim, built from two context-scan documents (before and after the run) and the drop
 * ledger; `--check` reports whether one exists (the virgin-surface test).
 *
 * @module
 */

import { firstLine } from "../../_fs/errors.ts";
import { existsFollow, isFileFollow, physicalPath, refusedBySandbox } from "../../_fs/inspect.ts";
import { readRegular } from "../../_fs/read.ts";
import { UsageError } from "../../errors.ts";
import { fsyncDirectories, writeFileAtomic } from "../../_fs/write.ts";
import { makeDirsBelow, parentsOf } from "../../_fs/dirs.ts";
import { Sha256 } from "../../_fs/sha256.ts";
import { dirname, isBelow, logicalCwd, normalizeLexical } from "../../paths.ts";
import { text, verbatim } from "../../text.ts";
import {
  asFileSystemError,
  LedgerError,
  sandboxRefused,
  ScanRejectedError,
  StateWriteError,
} from "../errors.ts";
import { writePathProblem } from "../run_dir.ts";
import { keepStateBefore, rootStatePath } from "../run_state.ts";
import { layerRuns, type Run, scanRuns, warnIgnored } from "../runs.ts";
import type { Reporter } from "../report.ts";
import {
  buildStateDocument,
  countOnce,
  renderStateDocument,
  StateDocumentSchema,
} from "../state/document.ts";
import { checkScanFile, type StateScanInput } from "../state/scan_input.ts";

/** Where the state file is: `--out`, else under `--root` or the project root. */
export interface StateLocation {
  /** `--root` (empty = not given). */
  root?: string;
  /** `--out` (empty = not given). */
  out?: string;
}

/** Inputs of {@linkcode writeState}. */
export interface StateOptions extends StateLocation {
  /** `--mode`: the run's mode word. */
  mode: string;
  /** `--before`: the context-scan document of phase 1. */
  before: string;
  /** `--after`: the context-scan document of phase 6. */
  after: string;
  /** `--flags` (default `""`). */
  flags?: string;
  /** `--ledger`: the drop ledger, copied into `drops`. */
  ledger?: string;
  /** Clock (default: now). */
  now?: Date;
}

/** The state file path: `out` if non-empty, else `<root or project>/.claude/brewtools/context-slim/state.json`. */
export function statePath(location: StateLocation, projectRoot: string): string {
  if (location.out !== undefined && location.out !== "") return location.out;
  const root = location.root !== undefined && location.root !== "" ? location.root : projectRoot;
  return `${root}/.claude/brewtools/context-slim/state.json`;
}

/**
 * `state --check`: true when a state file (a regular file, links followed) is at `path`. A path
 * the Deno sandbox refuses is a {@linkcode PathRefusedError}: "absent" would be a guess.
 */
export function stateExists(path: string): boolean {
  if (refusedBySandbox(path)) throw sandboxRefused(path, "check");
  return isFileFollow(path);
}

const PROBLEMS = {
  symlink: "refusing to write through a symbolic link",
  "not-directory": "a path component is not a directory",
  "special-file": "not a regular file",
} as const;

/**
 * Refuse to write `path` through a link or into a non-regular file, checked component by component
 * below `root` (or, for a path outside it, at the path itself).
 */
function checkStatePath(shown: string, abs: string, root: string): void {
  const problem = writePathProblem(root, abs);
  if (problem === undefined) return;
  const where = problem.at === abs ? "" : `: ${problem.at}`;
  throw new StateWriteError(shown, `${PROBLEMS[problem.problem]}${where}`);
}

/**
 * Make the missing directories of `path` below `root` (`0777` minus the umask: ordinary project
 * directories), never through a link; returns those made.
 */
function makeStateDirs(path: string, root: string): string[] {
  // From the nearest existing ancestor of the root: a root that does not exist yet is made too.
  let base = root;
  while (!existsFollow(base) && base !== "/") base = dirname(base);
  return makeDirsBelow(base, dirname(path));
}

function writeStateFile(path: string, abs: string, root: string, content: string): string[] {
  checkStatePath(path, abs, root);
  let made: string[];
  try {
    made = makeStateDirs(abs, root);
    checkStatePath(path, abs, root); // nothing was linked in meanwhile
    // 0666 minus the umask: the state file is an ordinary project file, not a private backup.
    writeFileAtomic(abs, content, { mode: 0o666 });
  } catch (e) {
    if (e instanceof StateWriteError) throw e;
    throw new StateWriteError(path, firstLine(e));
  }
  let reread: unknown;
  try {
    reread = JSON.parse(new TextDecoder().decode(readRegular(path)));
  } catch (e) {
    throw new StateWriteError(path, `written file does not parse: ${firstLine(e)}`);
  }
  if (!StateDocumentSchema.safeParse(reread).success) {
    throw new StateWriteError(path, "written file does not match the state schema");
  }
  return made;
}

/**
 * `--before`/`--after` must be given and name a regular file (links followed); each problem is named
 * as it is: `state needs --before <context-scan JSON>` when the option is missing or empty, else
 * `cannot read --before <path>: <reason>` (`No such file or directory`, `not a regular file`…).
 */
function checkScanInput(option: "--before" | "--after", path: string): void {
  if (path === "") throw new UsageError(text`state needs ${verbatim(option)} <context-scan JSON>`);
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch (e) {
    throw asFileSystemError(e, `read ${option}`, path);
  }
  if (!info.isFile) {
    throw new UsageError(text`cannot read ${verbatim(option)} ${path}: not a regular file`);
  }
}

/** Where `state` may write and whose run keeps the state's "before". */
export interface StateContext {
  /** The root the path is checked from (`--root`, else the project root). */
  root: string;
  /** The backup root, whose newest project run of `root` keeps the previous state. */
  backups: string;
}

/**
 * Validate both scans and the ledger, then write the state file atomically to `path`, never through
 * a link or into a non-regular file; the state as it was before is kept in the newest project run
 * of the root, so restoring that run puts it back. Usage problems are {@linkcode UsageError}s, a
 * rejected scan a {@linkcode ScanRejectedError}, a refused path a {@linkcode StateWriteError}.
 */
export async function writeState(
  options: StateOptions,
  path: string,
  context: StateContext,
  reporter: Reporter,
): Promise<void> {
  if (options.mode === "") throw new UsageError(text`state needs --mode`);
  checkScanInput("--before", options.before);
  checkScanInput("--after", options.after);
  const ledger = options.ledger !== undefined && options.ledger !== "" ? options.ledger : undefined;
  const noLedger = (l: string) => new LedgerError(l, text`no such ledger file: ${l}`);
  if (ledger !== undefined && !isFileFollow(ledger)) throw noLedger(ledger);
  const scans: StateScanInput[] = [];
  for (const scanPath of [options.before, options.after]) {
    const check = checkScanFile(scanPath);
    if (!check.ok) throw new ScanRejectedError(scanPath, check.reason);
    // One physical file is one file, however many names link to it.
    scans.push(countOnce(check.doc, physicalPath));
  }
  let ledgerText: string | undefined;
  if (ledger !== undefined) {
    try {
      ledgerText = new TextDecoder().decode(readRegular(ledger));
    } catch {
      throw noLedger(ledger);
    }
  }
  const doc = buildStateDocument({
    mode: options.mode,
    flags: options.flags ?? "",
    before: scans[0],
    after: scans[1],
    ledgerText,
    now: options.now ?? new Date(),
  });
  const abs = normalizeLexical(path, logicalCwd());
  const root = normalizeLexical(context.root, logicalCwd());
  const checkRoot = isBelow(abs, root) ? root : dirname(abs);
  checkStatePath(path, abs, checkRoot);
  const content = renderStateDocument(StateDocumentSchema.parse(doc));
  // Only the root's own state file belongs to its run: the run keeps the file as it was and, before
  // the write, the hash it is about to write (references/context-guard.md#ratchet-state).
  let run: Run | undefined;
  if (abs === rootStatePath(root)) {
    const scan = scanRuns(context.backups);
    warnIgnored(scan, context.backups, reporter);
    run = layerRuns(scan.runs, "project", root)[0];
  }
  const made: string[] = [];
  if (run !== undefined) {
    const sha256 = new Sha256().update(new TextEncoder().encode(content)).hex();
    made.push(...keepStateBefore(run.dir, abs, sha256));
  }
  made.push(...writeStateFile(path, abs, checkRoot, content));
  // Every directory made is in its parent for good before `STATE: written` is printed.
  await fsyncDirectories(parentsOf(made));
}
