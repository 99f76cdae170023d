/**
 * text-guard `snapshot` (`references/context-guard.md#text-guard`): copy the targets into a new run
 * dir and print `ROOT:`, `SNAPSHOT:`, the rel lines and `RUN_DIR:`. context-guard's `snapshot` runs
 * it as its stage.
 *
 * @module
 */

import { errorCode } from "../../_fs/errors.ts";
import {
  entryKind,
  existsNoFollow,
  isFileFollow,
  isSymlink,
  physicalPath,
} from "../../_fs/inspect.ts";
import { ReadRefusedError, readRegular } from "../../_fs/read.ts";
import { createFileExclusive } from "../../_fs/write.ts";
import { UsageError } from "../../errors.ts";
import { ownRepositoryEnv, runGitPaths } from "../../git.ts";
import { sortUtf8 } from "../../sort.ts";
import { basename, dirname, joinRoot, logicalCwd, normalizeLexical } from "../../paths.ts";
import { text, verbatim } from "../../text.ts";
import { asFileSystemError, DirtyTreeError, PathRefusedError } from "../errors.ts";
import type { Reporter } from "../report.ts";
import {
  type PhysicalDirs,
  type ResolvedPath,
  resolvePhysical,
  type RootName,
  textGuardRoot,
} from "../roots.ts";
import { linkedDirBelow, linkedRunPath, makeRunDirs, replaceFile } from "../run_dir.ts";
import { writeTrustMarker } from "../trust.ts";
import { gitFailure, isGitRepo, localStamp } from "./common.ts";
import { copyTargets, replacedDuringSnapshot, type SnapshotRecord } from "./snapshot_copy.ts";

export type { SnapshotRecord } from "./snapshot_copy.ts";
import { requireTrustedRunPlace } from "../run_owner.ts";
import { parentsOf } from "../../_fs/dirs.ts";

/** Inputs of {@linkcode stageSnapshot}. */
export interface StageSnapshotOptions {
  /** `CLAUDE_PROJECT_DIR` for root resolution (the layer root when run as context-guard's stage). */
  projectDir?: string;
  /** File arguments, as typed. */
  files: readonly string[];
  /** Skip the clean-tree gate. */
  allowDirty?: boolean;
  /** `--run-dir` as given; otherwise an automatic name. */
  runDir?: string;
  /** Automatic run-dir name for collision index `n` (1 = no suffix); default text-guard's. */
  autoRunDir?: (n: number) => string;
  /** Only this directory and what lies below it are checked for links (context-guard's `B`). */
  linkCheckBase?: string;
  /**
   * Accept a file argument that is a link to a regular file, snapshotted by its content
   * (context-guard's global layer, whose caller has checked the link's owner: dotfiles).
   */
  allowLinks?: boolean;
  /**
   * Refuse a file whose path, as typed, passes through a linked directory below this (logical)
   * root: context-guard records that path, and a restore must never write through a link.
   */
  noLinkedDirsBelow?: string;
  /** How messages name the root (default `project`). */
  rootName?: RootName;
  /** Clock (default: now). */
  now?: Date;
  /**
   * Whether `T` is in a git repository (`rev-parse --git-dir` answers), when the caller has just
   * asked git (else git is asked here).
   */
  inGit?: boolean;
  /**
   * Take a snapshot-trust run (`references/context-guard.md#snapshot-trust`): its marker is written
   * as soon as the run dir exists, before any copy.
   */
  trust?: boolean;
}

/** What {@linkcode stageSnapshot} wrote. */
export interface StageSnapshotResult {
  /** Physical root `T`. */
  root: string;
  /** The run dir as given or generated. */
  runDir: string;
  /** Resolved targets, in argument order (repeats kept). */
  targets: ResolvedPath[];
  /** Mode and link target of each distinct rel. */
  records: Map<string, SnapshotRecord>;
}

/** Refuse a link at `dir` or any lexical ancestor (limited to `base` and below when `dir` is in it). */
function refuseLinkedRunDir(dir: string, base: string | undefined): void {
  const limited = base !== undefined && (dir === base || dir.startsWith(`${base}/`));
  let p = dir;
  while (p !== "/" && p !== "." && p !== "") {
    if (limited && !(p === base || p.startsWith(`${base}/`))) break;
    if (isSymlink(p)) throw linkedRunPath(p);
    const parent = dirname(p);
    if (parent === p) break;
    p = parent;
  }
}

/**
 * Create `dir` exclusively (0700), missing ancestors included; returns the directories made (the
 * ancestors, outermost first), or `undefined` when something already exists at `dir`. An OS error
 * is one line naming the run dir (`❌ cannot create directory <dir>: <reason>`, exit 2).
 */
function createRunDir(dir: string, base: string | undefined): string[] | undefined {
  let made: string[] = [];
  try {
    made = makeRunDirs(dirname(dir), base);
    Deno.mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if (errorCode(e) === "EEXIST") return undefined;
    throw asFileSystemError(e, "create directory", dir);
  }
  return made;
}

const IGNORE_LINE = ".claude/reports/";

/**
 * The `.gitignore` of `root` must be absent or a regular file: a link is refused (it would write
 * elsewhere), and so is anything else (a FIFO would block the read forever).
 */
function checkIgnoreFile(path: string): void {
  const kind = entryKind(path);
  if (kind === "symlink") {
    throw new PathRefusedError(
      path,
      "symlink",
      text`refusing to update symbolic-link ignore file: ${path}`,
    );
  }
  if (kind !== "absent" && kind !== "file") {
    throw new PathRefusedError(
      path,
      "special-file",
      text`refusing to update ignore file that is not a regular file: ${path}`,
    );
  }
}

/** The `.gitignore` with `.claude/reports/` appended once, newline-safe; `undefined` when present. */
function gitignoreUpdate(path: string): { content: Uint8Array; mode: number } | undefined {
  let bytes: Uint8Array = new Uint8Array();
  let mode = 0o666; // created: open() applies the umask, as a shell redirect would
  try {
    bytes = readRegular(path, { follow: false });
    mode = Deno.statSync(path).mode! & 0o7777;
  } catch (e) {
    if (errorCode(e) !== "ENOENT") throw e;
  }
  const content = new TextDecoder().decode(bytes);
  if (content.split("\n").some((line) => line === IGNORE_LINE)) return undefined;
  const sep = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? "\n" : "";
  const add = new TextEncoder().encode(`${sep}${IGNORE_LINE}\n`);
  const next = new Uint8Array(bytes.length + add.length);
  next.set(bytes);
  next.set(add, bytes.length);
  return { content: next, mode };
}

/**
 * Append `.claude/reports/` to `root/.gitignore` once. A concurrent snapshot may create the file
 * between our look and our exclusive create, or replace it between our look and our read: then
 * read it again and update it like any existing one (it most likely holds the line by then). An OS
 * error names `.gitignore` (`❌ cannot update <T>/.gitignore: <reason>`), never the temp file.
 */
function appendIgnoreLine(path: string): void {
  try {
    updateIgnoreFile(path);
  } catch (e) {
    throw asFileSystemError(e, "update", path);
  }
}

function updateIgnoreFile(path: string): void {
  for (let attempt = 0; attempt < 10; attempt++) {
    let update: ReturnType<typeof gitignoreUpdate>;
    try {
      update = gitignoreUpdate(path);
    } catch (e) {
      if (e instanceof ReadRefusedError && e.refusal === "changed") continue;
      throw e;
    }
    if (update === undefined) return;
    if (existsNoFollow(path)) {
      replaceFile(path, update.content, { mode: update.mode, exactMode: true });
      return;
    }
    try {
      createFileExclusive(path, update.content, update.mode, false);
      return;
    } catch (e) {
      if (errorCode(e) !== "EEXIST") throw e;
    }
  }
}

function cleanTreeGate(root: string, inGit: boolean, targets: readonly ResolvedPath[]): void {
  if (!inGit) {
    throw new DirtyTreeError(
      root,
      [],
      text`${root} is not a git repository - no recoverable pre-state.
   Commit the targets under git, or re-run with --allow-dirty to accept the risk.`,
    );
  }
  // Literal paths, as many calls as the command line needs; a failed call is a refusal, never
  // "clean". Untracked lines come after the others, as in one call's output.
  const status = runGitPaths(
    ["-C", root, "status", "--porcelain"],
    sortUtf8(new Set(targets.map((t) => t.rel))),
    root,
    ownRepositoryEnv(),
  );
  if (status.status !== 0) throw gitFailure(root, status.stderr);
  if (status.stdout === "") return;
  const all = status.stdout.replace(/\n$/, "").split("\n");
  const loose = (line: string) => line.startsWith("?? ") || line.startsWith("!! ");
  const porcelain = [...all.filter((l) => !loose(l)), ...all.filter(loose)];
  throw new DirtyTreeError(
    root,
    porcelain,
    text`uncommitted changes in the optimize targets - refusing to rewrite in place:
${verbatim(porcelain.join("\n"))}
   Commit or stash them, or re-run with --allow-dirty.`,
  );
}

/**
 * text-guard `snapshot`: copy the targets to `<run dir>/orig/<rel>` and print `ROOT:`,
 * `SNAPSHOT:`, the rel lines and `RUN_DIR:`.
 */
export async function stageSnapshot(
  options: StageSnapshotOptions,
  reporter: Reporter,
): Promise<StageSnapshotResult> {
  const { files } = options;
  if (files.length === 0) throw new UsageError(text`snapshot needs at least one file`);
  const root = textGuardRoot(options.projectDir, options.rootName);
  const targets: ResolvedPath[] = [];
  const records = new Map<string, SnapshotRecord>();
  const checked = new Map<string, Deno.FileInfo>();
  const physicalDirs: PhysicalDirs = new Map();
  const cwd = options.noLinkedDirsBelow === undefined ? undefined : logicalCwd();
  for (const f of files) {
    if (!isFileFollow(f)) throw new PathRefusedError(f, "not-a-file", text`not a file: ${f}`);
    const t = resolvePhysical(
      f,
      root,
      options.rootName,
      options.allowLinks ? () => linkOf(f, root) : undefined,
      physicalDirs,
    );
    if (options.noLinkedDirsBelow !== undefined) {
      const linked = linkedDirBelow(options.noLinkedDirsBelow, normalizeLexical(f, cwd!));
      if (linked !== undefined) {
        throw new PathRefusedError(
          f,
          "linked-component",
          text`${f} passes through the symbolic link ${linked} - name the real path`,
        );
      }
    }
    // The file checked here is the file copied below: its device and inode are kept, and the
    // copy is made from one descriptor opened without following links and checked to be it.
    const st = Deno.lstatSync(t.abs);
    if (!st.isFile) throw replacedDuringSnapshot(f);
    checked.set(t.rel, st);
    targets.push(t);
    const record: SnapshotRecord = { mode: st.mode! & 0o777 };
    if (t.link !== undefined) record.linkTarget = t.abs;
    records.set(t.rel, record);
  }
  const inGit = options.inGit ?? isGitRepo(root);
  if (!options.allowDirty) cleanTreeGate(root, inGit, targets);

  const base = options.linkCheckBase;
  const stamp = localStamp(options.now ?? new Date());
  const auto = options.autoRunDir ??
    ((n: number) =>
      joinRoot(root, `.claude/reports/${stamp}_text-optimize${n === 1 ? "" : `-${n}`}`));
  let n = 1;
  let runDir = options.runDir ?? auto(n);
  if (options.runDir === undefined) { while (existsNoFollow(runDir)) runDir = auto(++n); }
  refuseLinkedRunDir(runDir, base);
  const exists = (dir: string) =>
    new PathRefusedError(dir, "exists", text`snapshot directory already exists: ${dir}`);
  // An auto name taken meanwhile is not an error: the exclusive creation below moves on.
  if (options.runDir !== undefined && existsNoFollow(runDir)) throw exists(runDir);
  const ignoreFile = joinRoot(root, ".gitignore");
  if (inGit) checkIgnoreFile(ignoreFile);
  requireTrustedRunPlace(runDir, base);
  let made = createRunDir(runDir, base);
  while (made === undefined) {
    if (options.runDir !== undefined) throw exists(runDir);
    runDir = auto(++n); // an auto name taken meanwhile by a concurrent run: next suffix
    made = createRunDir(runDir, base);
  }
  try {
    if (options.trust) writeTrustMarker(runDir);
    if (inGit) appendIgnoreLine(ignoreFile);
    // The ancestors made (a first snapshot's ~/.claude and backups/) are synced into their parents
    // with the run's own directories, before RUN_DIR: is printed.
    await copyTargets(runDir, targets, records, checked, parentsOf(made));
  } catch (e) {
    // A snapshot that failed leaves no half run: the run dir is this process's own, made above.
    try {
      Deno.removeSync(runDir, { recursive: true });
    } catch { /* left for retention, as a killed snapshot's */ }
    throw e;
  }
  reporter.out(text`ROOT: ${root}`);
  reporter.out(text`SNAPSHOT: ${files.length} files`);
  for (const t of targets) reporter.out(text`  ${t.rel}`);
  reporter.out(text`RUN_DIR: ${runDir}`);
  return { root, runDir, targets, records };
}

/** The one-entry link map that lets `resolvePhysical` accept the link `f` (see `allowLinks`). */
function linkOf(f: string, root: string): Map<string, string> | undefined {
  if (!isSymlink(f)) return undefined;
  const target = physicalPath(f);
  const dir = physicalPath(dirname(f));
  if (target === undefined || dir === undefined) return undefined;
  const prefix = root === "/" ? "/" : `${root}/`;
  const abs = `${dir === "/" ? "" : dir}/${basename(f)}`;
  return abs.startsWith(prefix) ? new Map([[abs.slice(prefix.length), target]]) : undefined;
}
