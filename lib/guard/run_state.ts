/**
 * The ratchet state belongs to the run (`references/context-guard.md#ratchet-state`): before
 * `state` writes the state file after a snapshot, the file as it was (or its absence) is kept in
 * that root's newest run dir together with the hash `state` is about to write — intent first, so
 * an undo always knows about a state file its run may have written — and restoring the whole run
 * puts it back, so `state --check` answers for the tree as it is after an undo. A run only ever
 * puts back the state file of its own root, never a path its record names.
 *
 * @module
 */

import * as z from "../_zod.ts";
import { physicalPath } from "../_fs/inspect.ts";
import { hashFile, readRegular } from "../_fs/read.ts";
import { fsyncDirectory } from "../_fs/write.ts";
import { dirname, joinRoot } from "../paths.ts";
import { text } from "../text.ts";
import type { Reporter } from "./report.ts";
import { isTrustedCopy, makeRunDirs, replaceFile, writePathProblem } from "./run_dir.ts";
import { runOwner } from "./run_owner.ts";
import { ownPrivate } from "../_fs/owner.ts";

const SHA256 = z.string().check(z.regex(/^[0-9a-f]{64}$/));

/**
 * `<run dir>/state/record.json`: where the state file is, what the run found there, and every hash
 * the run's `state` wrote or was about to write (`written`; records of older versions hold one
 * `written_sha256` instead).
 */
export const RunStateSchema = z.deferred(() =>
  z.strictObject({
    path: z.string().check(z.startsWith("/")),
    existed: z.boolean(),
    mode: z.int().check(z.minimum(0), z.maximum(0o7777)),
    written: z.optional(z.array(SHA256)),
    written_sha256: z.optional(z.nullable(SHA256)),
  })
);

/** The run's record of the state file, as read. */
export type RunStateRecord = z.infer<typeof RunStateSchema>;

/** The run's record of the state file, every hash it wrote (or meant to) in `written`. */
export interface RunState {
  /** The state file. */
  path: string;
  /** Whether it existed before the run's first `state` (its bytes are in `state/previous`). */
  existed: boolean;
  /** Its permission bits then. */
  mode: number;
  /** The hashes the run's `state` wrote or was about to write, oldest first. */
  written: string[];
}

/** The state file of `root`: `<root>/.claude/brewtools/context-slim/state.json`. */
export function rootStatePath(root: string): string {
  return joinRoot(root, ".claude/brewtools/context-slim/state.json");
}

const recordPath = (runDir: string) => `${runDir}/state/record.json`;
const previousPath = (runDir: string) => `${runDir}/state/previous`;

/**
 * The run's state record, or `undefined` when the run has none (or an unreadable one, or one that
 * is not the invoking user's own).
 */
export function readRunState(runDir: string): RunState | undefined {
  const owner = runOwner();
  if (owner === undefined) return undefined;
  try {
    const json = new TextDecoder().decode(
      readRegular(recordPath(runDir), { follow: false, ownedBy: (i) => ownPrivate(i, owner) }),
    );
    const parsed = RunStateSchema.safeParse(JSON.parse(json));
    if (!parsed.success) return undefined;
    const r = parsed.data;
    const written = r.written ?? (r.written_sha256 ? [r.written_sha256] : []);
    return { path: r.path, existed: r.existed, mode: r.mode, written };
  } catch {
    return undefined;
  }
}

function writeRecord(runDir: string, record: RunState): void {
  replaceFile(recordPath(runDir), JSON.stringify(record) + "\n", { mode: 0o600, exactMode: true });
}

/**
 * Before `state` writes `path` (absolute) with bytes hashing to `sha256`: keep the file's current
 * bytes (or its absence) in `runDir` unless the run already holds them (a second `state` of the
 * same run keeps the first "before"), and record `sha256` as written — before the write, so a kill
 * between the two never leaves a state file the run does not know it wrote. Returns the
 * directories this made (`state/`), for the caller to sync into their parents.
 */
export function keepStateBefore(runDir: string, path: string, sha256: string): string[] {
  const existing = readRunState(runDir);
  if (existing !== undefined && existing.path === path) {
    if (!existing.written.includes(sha256)) {
      writeRecord(runDir, { ...existing, written: [...existing.written, sha256] });
    }
    return [];
  }
  const made = makeRunDirs(`${runDir}/state`, runDir);
  let existed = false;
  let mode = 0o644;
  try {
    const bytes = readRegular(path, { follow: false });
    mode = Deno.statSync(path).mode! & 0o7777;
    replaceFile(previousPath(runDir), bytes, { mode: 0o600, exactMode: true });
    existed = true;
  } catch { /* absent (or unreadable: nothing to put back) */ }
  writeRecord(runDir, { path, existed, mode, written: [sha256] });
  return made;
}

function currentHash(path: string): string | undefined {
  try {
    return hashFile(path, { follow: false }).sha256;
  } catch {
    return undefined;
  }
}

/**
 * The state file `record` names, when it is `root`'s own (`<root>/.claude/brewtools/context-slim/
 * state.json`, as written or as the same physical directory); `undefined` for any other path.
 */
function ownStateFile(record: RunState, root: string): string | undefined {
  const own = rootStatePath(root);
  if (record.path === own) return own;
  const mine = physicalPath(dirname(own));
  const named = physicalPath(dirname(record.path));
  const sameName = record.path.slice(record.path.lastIndexOf("/")) === "/state.json";
  return mine !== undefined && mine === named && sameName ? own : undefined;
}

/**
 * What undoing a whole run of `root` does to its state file (`references/context-guard.md#ratchet-state`):
 * `restore` (it holds what this run's `state` wrote, and existed before), `remove` (it holds what
 * the run wrote, and did not exist before), `keep` (someone's later write, or — `linked` — a path
 * reached through that link or non-directory), or `undefined` — nothing to do: no record, a record of
 * another path than `root`'s own state file, or the file already as the run found it (its `state`
 * never got to write). Reads only; `restore --dry-run` shows it, a restore does it.
 */
export function stateUndo(
  runDir: string,
  root: string,
): { path: string; action: "restore" | "remove" | "keep"; linked?: string } | undefined {
  const record = readRunState(runDir);
  if (record === undefined || record.written.length === 0) return undefined;
  const path = ownStateFile(record, root);
  if (path === undefined) return undefined;
  if (record.existed && !isTrustedCopy(runDir, "state/previous")) return undefined;
  const now = currentHash(path);
  if (now === undefined ? !record.existed : now === currentHash(previousPath(runDir))) {
    return undefined; // as the run found it: its state never got to write
  }
  if (now === undefined || !record.written.includes(now)) {
    return { path, action: "keep" };
  }
  const problem = writePathProblem(root, path);
  if (problem !== undefined) {
    return { path, action: "keep", linked: problem.at };
  }
  return { path, action: record.existed ? "restore" : "remove" };
}

/**
 * After a whole run of `root` was restored: put its state file back as the run found it
 * ({@linkcode stateUndo}). Prints `STATE: restored <path>`, `STATE: removed <path>` or, on stderr,
 * `STATE: kept <path> (changed since this run wrote it)` or
 * `STATE: kept <path> (refusing to write through <component>)`; nothing when there is nothing to do. Only `root`'s own state
 * file is ever touched, never another path a record names, nor one reached through a link.
 */
export function restoreRunState(runDir: string, root: string, reporter: Reporter): void {
  const undo = stateUndo(runDir, root);
  if (undo === undefined) return;
  const { path } = undo;
  if (undo.action === "keep") {
    reporter.err(
      undo.linked === undefined
        ? text`STATE: kept ${path} (changed since this run wrote it)`
        : text`STATE: kept ${path} (refusing to write through ${undo.linked})`,
    );
  } else if (undo.action === "restore") {
    const mode = readRunState(runDir)?.mode ?? 0o644;
    replaceFile(path, { copyFrom: previousPath(runDir) }, { mode, exactMode: true });
    reporter.out(text`STATE: restored ${path}`);
  } else {
    Deno.removeSync(path);
    fsyncDirectory(dirname(path));
    reporter.out(text`STATE: removed ${path}`);
  }
}
