/**
 * Draft-ownership proof and the restoring of one file (spec §4).
 *
 * The optimizer may only be undone where the guard can prove the current bytes are the optimizer's:
 * either they already equal the original, or `checkpoint` recorded exactly their hash. Anything else is
 * someone else's concurrent change and is preserved.
 *
 * @module
 */

import { lstatSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomic } from "../atomic.ts";
import { hashOrMissing, makePrivateDirs, sha256Hex } from "./fsx.ts";

/** Path of the draft record of `rel` in run dir `runDir`. */
export function draftRecordPath(runDir: string, rel: string): string {
  return `${runDir}/draft/${rel}.sha256`;
}

/** Path of the snapshot copy of `rel` in run dir `runDir`. */
export function snapshotCopyPath(runDir: string, rel: string): string {
  return `${runDir}/orig/${rel}`;
}

/** The refusal line printed (stderr) for an unproven file. */
export function refusalLine(rel: string): string {
  return `RESTORE_REFUSED: ${rel} (current bytes lack matching draft ownership)`;
}

/** The current state of `abs` as a draft record value: its hash, or `MISSING` when absent. */
export function currentState(abs: string): string {
  return hashOrMissing(abs);
}

/**
 * Write the draft record of `rel` (`<hash or MISSING>\n`, `0600`, directories `0700`, atomic).
 * With `syncDirectory: false` the caller syncs the record's directory (returned) once per batch.
 */
export function writeDraftRecord(
  runDir: string,
  rel: string,
  state: string,
  syncDirectory = true,
): string {
  const record = draftRecordPath(runDir, rel);
  makePrivateDirs(dirname(record), runDir);
  writeFileAtomic(record, `${state}\n`, { mode: 0o600, exactMode: true, syncDirectory });
  return dirname(record);
}

/** The recorded draft state of `rel`, or `undefined` when no regular (non-link) record exists. */
export function readDraftRecord(runDir: string, rel: string): string | undefined {
  const record = draftRecordPath(runDir, rel);
  try {
    if (!lstatSync(record).isFile()) return undefined;
    return new TextDecoder().decode(readFileSync(record)).replace(/\n+$/, "");
  } catch {
    return undefined;
  }
}

/**
 * May `abs` (= `T/rel`) be overwritten with the snapshot copy? Refused for a link or a non-regular
 * file there (§9 G10); allowed when the current bytes already are the original, or when the draft
 * record equals the current hash (or `MISSING` for a deleted file).
 */
export function mayRestore(runDir: string, rel: string, abs: string): boolean {
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    st = undefined;
  }
  if (st !== undefined && !st.isFile()) return false;
  const current = st === undefined ? "MISSING" : currentState(abs);
  if (current !== "MISSING" && current === hashOrMissing(snapshotCopyPath(runDir, rel))) {
    return true;
  }
  return readDraftRecord(runDir, rel) === current;
}

/**
 * Write the snapshot copy's bytes to `abs` atomically. A replaced file keeps its mode; a re-created
 * one gets the copy's mode (owner-only) minus the umask. Returns the hash written. With
 * `syncDirectory: false` the caller syncs `abs`'s directory once per batch.
 */
export function restoreFile(
  runDir: string,
  rel: string,
  abs: string,
  syncDirectory = true,
): string {
  const copy = snapshotCopyPath(runDir, rel);
  const bytes = readFileSync(copy);
  let mode: number;
  let exact: boolean;
  try {
    mode = statSync(abs).mode & 0o7777;
    exact = true;
  } catch {
    mode = statSync(copy).mode & 0o777;
    exact = false;
  }
  writeFileAtomic(abs, bytes, { mode, exactMode: exact, syncDirectory });
  return sha256Hex(bytes);
}
