/**
 * The ratchet state belongs to the run (`references/context-guard.md#ratchet-state`): before
 * `state` first writes the state file after a snapshot, the file as it was (or its absence) is kept
 * in that root's newest run dir, and restoring the whole run puts it back — so `state --check`
 * answers for the tree as it is after an undo.
 *
 * @module
 */

import * as z from "../_zod.ts";
import { hashFile, readRegular } from "../_fs/read.ts";
import { fsyncDirectory } from "../_fs/write.ts";
import { dirname } from "../paths.ts";
import { text } from "../text.ts";
import type { Reporter } from "./report.ts";
import { makeRunDirs, replaceFile } from "./run_dir.ts";

/** `<run dir>/state/record.json`: where the state file is, and what the run found and wrote there. */
export const RunStateSchema = z.deferred(() =>
  z.strictObject({
    path: z.string().check(z.startsWith("/")),
    existed: z.boolean(),
    mode: z.int().check(z.minimum(0), z.maximum(0o7777)),
    written_sha256: z.nullable(z.string().check(z.regex(/^[0-9a-f]{64}$/))),
  })
);

/** The run's record of the state file. */
export type RunState = z.infer<typeof RunStateSchema>;

const recordPath = (runDir: string) => `${runDir}/state/record.json`;
const previousPath = (runDir: string) => `${runDir}/state/previous`;

/** The run's state record, or `undefined` when the run has none (or an unreadable one). */
export function readRunState(runDir: string): RunState | undefined {
  try {
    const json = new TextDecoder().decode(readRegular(recordPath(runDir), { follow: false }));
    const parsed = RunStateSchema.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function writeRecord(runDir: string, record: RunState): void {
  replaceFile(recordPath(runDir), JSON.stringify(record) + "\n", { mode: 0o600, exactMode: true });
}

/**
 * Before `state` writes `path` (absolute): keep its current bytes (or its absence) in `runDir`,
 * unless the run already holds them (a second `state` of the same run keeps the first "before").
 */
export function keepStateBefore(runDir: string, path: string): void {
  const existing = readRunState(runDir);
  if (existing !== undefined && existing.path === path) return;
  makeRunDirs(`${runDir}/state`, runDir);
  let existed = false;
  let mode = 0o644;
  try {
    const bytes = readRegular(path, { follow: false });
    mode = Deno.statSync(path).mode! & 0o7777;
    replaceFile(previousPath(runDir), bytes, { mode: 0o600, exactMode: true });
    existed = true;
  } catch { /* absent (or unreadable: nothing to put back) */ }
  writeRecord(runDir, { path, existed, mode, written_sha256: null });
}

/** After `state` wrote `path`: remember the hash it wrote, so an undo can tell its bytes. */
export function noteStateWritten(runDir: string, sha256: string): void {
  const record = readRunState(runDir);
  if (record !== undefined) writeRecord(runDir, { ...record, written_sha256: sha256 });
}

function currentHash(path: string): string | undefined {
  try {
    return hashFile(path, { follow: false }).sha256;
  } catch {
    return undefined;
  }
}

/**
 * After a whole run was restored: put the state file back as the run found it, when it still holds
 * what this run's `state` wrote (anything else is someone's later write, kept). Prints
 * `STATE: restored <path>`, `STATE: removed <path>` or, on stderr, `STATE: kept <path> …`.
 */
export function restoreRunState(runDir: string, reporter: Reporter): void {
  const record = readRunState(runDir);
  if (record === undefined || record.written_sha256 === null) return;
  const now = currentHash(record.path);
  if (now !== record.written_sha256) {
    reporter.err(text`STATE: kept ${record.path} (changed since this run wrote it)`);
    return;
  }
  if (record.existed) {
    replaceFile(record.path, { copyFrom: previousPath(runDir) }, {
      mode: record.mode,
      exactMode: true,
    });
    reporter.out(text`STATE: restored ${record.path}`);
  } else {
    Deno.removeSync(record.path);
    fsyncDirectory(dirname(record.path));
    reporter.out(text`STATE: removed ${record.path}`);
  }
}
