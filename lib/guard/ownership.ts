/**
 * Draft-ownership proof and the restoring of one file
 * (`references/context-guard.md#ownership-what-may-be-restored`).
 *
 * The optimizer may only be undone where the guard can prove the current bytes are the
 * optimizer's: either they already equal the original, or `checkpoint` recorded exactly their
 * hash. Anything else is someone else's concurrent change and is preserved.
 *
 * @module
 */

import { isPermissionError, osReason } from "../_fs/errors.ts";
import { hashFile, readRegular } from "../_fs/read.ts";
import { CtxkitError } from "../errors.ts";
import { text } from "../text.ts";
import { PathRefusedError } from "./errors.ts";
import { dirname } from "../paths.ts";
import type { AtomicWriteOptions, PendingWrite } from "../_fs/write.ts";
import {
  draftRecordPath,
  makeRunDirs,
  prepareReplace,
  replaceFile,
  snapshotCopyPath,
} from "./run_dir.ts";

/** The current state of `abs` as a draft record value: its hash, or `MISSING` when none is readable. */
export function currentState(abs: string): string {
  try {
    return hashFile(abs).sha256;
  } catch {
    return "MISSING";
  }
}

/**
 * Write the draft record of `rel` (`<hash or MISSING>\n`, `0600`, directories `0700`, atomic).
 * With `syncDirectory: false` the caller syncs the record's directory (returned) once per batch;
 * `madeDirs`, the directories this batch already wrote records in, are not made again.
 */
export function writeDraftRecord(
  runDir: string,
  rel: string,
  state: string,
  syncDirectory = true,
  madeDirs?: ReadonlySet<string>,
): string {
  const record = draftRecordPath(runDir, rel);
  try {
    if (madeDirs?.has(dirname(record)) !== true) makeRunDirs(dirname(record), runDir);
    // Not fsynced: a record a crash lost or emptied only makes a later restore refuse, the safe
    // side (references/context-guard.md#ownership-what-may-be-restored); its rename is atomic.
    replaceFile(record, `${state}\n`, {
      mode: 0o600,
      exactMode: true,
      syncDirectory,
      syncFile: false,
    });
  } catch (e) {
    if (e instanceof CtxkitError || isPermissionError(e)) throw e;
    throw new PathRefusedError(
      record,
      "unwritable",
      text`cannot record the draft: ${record} (${osReason(e)})`,
    );
  }
  return dirname(record);
}

/** The recorded draft state of `rel`, or `undefined` when no regular (non-link) record exists. */
export function readDraftRecord(runDir: string, rel: string): string | undefined {
  try {
    const bytes = readRegular(draftRecordPath(runDir, rel), { follow: false, maxBytes: 4096 });
    return new TextDecoder().decode(bytes).replace(/\n+$/, "");
  } catch {
    return undefined;
  }
}

/** Whether `abs` may be overwritten with its snapshot copy, and whether it already holds it. */
export interface RestoreVerdict {
  /** The current bytes are the original, or provably the optimizer's. */
  allowed: boolean;
  /** The current bytes already are the original's. */
  original: boolean;
}

/**
 * May `abs` (= `T/rel`) be overwritten with the snapshot copy? Refused for a link or a non-regular
 * file there; allowed when the current bytes already are the original, or when the draft record
 * equals the current hash (or `MISSING` for a deleted file).
 */
export function restoreVerdict(
  runDir: string,
  rel: string,
  abs: string,
  copyHash: string = currentState(snapshotCopyPath(runDir, rel)),
): RestoreVerdict {
  let st: Deno.FileInfo | undefined;
  try {
    st = Deno.lstatSync(abs);
  } catch {
    st = undefined;
  }
  if (st !== undefined && !st.isFile) return { allowed: false, original: false };
  const current = st === undefined ? "MISSING" : currentState(abs);
  if (current !== "MISSING" && current === copyHash) return { allowed: true, original: true };
  return { allowed: readDraftRecord(runDir, rel) === current, original: false };
}

/** {@linkcode restoreVerdict}'s `allowed`. */
export function mayRestore(runDir: string, rel: string, abs: string): boolean {
  return restoreVerdict(runDir, rel, abs).allowed;
}

/**
 * Write the snapshot copy's bytes to `abs` atomically (copied in chunks), with `recordedMode`
 * exactly when the snapshot recorded one; else a replaced file keeps its mode and a re-created one
 * gets the copy's mode (owner-only) minus the umask. Returns the hash written. With
 * `syncDirectory: false` the caller syncs `abs`'s directory once per batch.
 */
export function restoreFile(
  runDir: string,
  rel: string,
  abs: string,
  syncDirectory = true,
  recordedMode?: number,
): string {
  const { content, options } = restoreWrite(runDir, rel, abs, syncDirectory, recordedMode);
  return replaceFile(abs, content, options).sha256;
}

/**
 * {@linkcode restoreFile} for a batch: the same bytes and mode written beside `abs`, not yet synced
 * nor in place — the batch syncs every file (`syncPendingWrites`, `lib/_fs/write.ts`) before it
 * renames any.
 */
export function prepareRestore(
  runDir: string,
  rel: string,
  abs: string,
  syncDirectory = true,
  recordedMode?: number,
): PendingWrite {
  const { content, options } = restoreWrite(runDir, rel, abs, syncDirectory, recordedMode);
  return prepareReplace(abs, content, options);
}

/** What restoring `rel` writes to `abs`: the snapshot copy's bytes, and the mode to give them. */
function restoreWrite(
  runDir: string,
  rel: string,
  abs: string,
  syncDirectory: boolean,
  recordedMode: number | undefined,
): { content: { copyFrom: string }; options: AtomicWriteOptions } {
  const copy = snapshotCopyPath(runDir, rel);
  let mode: number;
  let exactMode: boolean;
  if (recordedMode !== undefined) {
    mode = recordedMode;
    exactMode = true;
  } else {
    try {
      mode = Deno.statSync(abs).mode! & 0o7777;
      exactMode = true;
    } catch {
      mode = Deno.statSync(copy).mode! & 0o777;
      exactMode = false;
    }
  }
  return { content: { copyFrom: copy }, options: { mode, exactMode, syncDirectory } };
}

/** True when `abs` holds the snapshot bytes (known by the caller) and, if recorded, the mode. */
export function alreadyRestored(abs: string, original: boolean, recordedMode?: number): boolean {
  if (!original) return false;
  if (recordedMode === undefined) return true;
  try {
    return (Deno.statSync(abs).mode! & 0o777) === recordedMode;
  } catch {
    return false;
  }
}
