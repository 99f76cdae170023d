/**
 * context-guard `state` (`references/context-guard.md#ratchet-state`): the ratchet state file of
 * context-slim, built from two context-scan documents (before and after the run) and the drop
 * ledger; `--check` reports whether one exists (the virgin-surface test).
 *
 * @module
 */

import { firstLine } from "../../_fs/errors.ts";
import { isFileFollow } from "../../_fs/inspect.ts";
import { readRegular } from "../../_fs/read.ts";
import { UsageError } from "../../errors.ts";
import { dirname } from "../../paths.ts";
import { text } from "../../text.ts";
import { ScanRejectedError, StateWriteError } from "../errors.ts";
import { replaceFile } from "../run_dir.ts";
import { buildStateDocument, renderStateDocument, StateDocumentSchema } from "../state/document.ts";
import { checkScanFile, type StateScanInput } from "../state/scan_input.ts";
import { LedgerError } from "../errors.ts";

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

/** `state --check`: true when a state file (a regular file, links followed) is at `path`. */
export function stateExists(path: string): boolean {
  return isFileFollow(path);
}

function writeStateFile(path: string, content: string): void {
  try {
    Deno.mkdirSync(dirname(path), { recursive: true });
    // 0666 minus the umask: the state file is an ordinary project file, not a private backup.
    replaceFile(path, content, { mode: 0o666 });
  } catch (e) {
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
}

/**
 * Validate both scans and the ledger, then write the state file atomically to `path`.
 * Usage problems are {@linkcode UsageError}s, a rejected scan a {@linkcode ScanRejectedError}.
 */
export function writeState(options: StateOptions, path: string): void {
  if (options.mode === "") throw new UsageError(text`state needs --mode`);
  if (!isFileFollow(options.before)) {
    throw new UsageError(text`state needs --before <context-scan JSON>`);
  }
  if (!isFileFollow(options.after)) {
    throw new UsageError(text`state needs --after <context-scan JSON>`);
  }
  const ledger = options.ledger !== undefined && options.ledger !== "" ? options.ledger : undefined;
  const noLedger = (l: string) => new LedgerError(l, text`no such ledger file: ${l}`);
  if (ledger !== undefined && !isFileFollow(ledger)) throw noLedger(ledger);
  const scans: StateScanInput[] = [];
  for (const scanPath of [options.before, options.after]) {
    const check = checkScanFile(scanPath);
    if (!check.ok) throw new ScanRejectedError(scanPath, check.reason);
    scans.push(check.doc);
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
  writeStateFile(path, renderStateDocument(StateDocumentSchema.parse(doc)));
}
