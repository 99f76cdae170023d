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

import { isAbsent, isPermissionError, osReason, rethrowPermission } from "../_fs/errors.ts";
import { hashRegular, readRegular, sameFileState, settledBefore } from "../_fs/read.ts";
import { CtxkitError } from "../errors.ts";
import { text } from "../text.ts";
import { PathRefusedError } from "./errors.ts";
import { runOwner } from "./run_owner.ts";
import { ownPrivate } from "../_fs/owner.ts";
import { dirname } from "../paths.ts";
import { type AtomicWriteOptions, fsyncDirectory, type PendingWrite } from "../_fs/write.ts";
import { parentsOf } from "../_fs/dirs.ts";
import type { RestoreOverride } from "./trust.ts";
import {
  draftRecordPath,
  makeRunDirs,
  prepareReplace,
  replaceFile,
  snapshotCopyPath,
} from "./run_dir.ts";

/**
 * What is at a target now, as a draft record value: its hash (with the stat of the file hashed and
 * when the hashing started), `MISSING` when nothing is there, or `undefined` — unknown — when
 * something is there that could not be hashed (unreadable, not a regular file, or replaced while
 * it was being read). Unknown is never missing: it matches no record
 * (`references/context-guard.md#may-restore`).
 */
export type CurrentFile =
  | { state: "MISSING" }
  | { state: string; info: Deno.FileInfo; since: number }
  | { state: undefined; error: unknown };

/** Inspect `abs` without following a link at it ({@linkcode CurrentFile}). */
export function inspectCurrent(abs: string): CurrentFile {
  const since = Date.now();
  try {
    Deno.lstatSync(abs);
  } catch (e) {
    rethrowPermission(e);
    return isAbsent(e) ? { state: "MISSING" } : { state: undefined, error: e };
  }
  try {
    const { sha256, info } = hashRegular(abs, { follow: false });
    return { state: sha256, info, since };
  } catch (e) {
    rethrowPermission(e);
    return { state: undefined, error: e };
  }
}

/**
 * The current state of `abs` as a draft record value: its hash, `MISSING` when nothing is there,
 * or `undefined` when something is there that cannot be hashed ({@linkcode inspectCurrent}).
 */
export function currentState(abs: string): string | undefined {
  return inspectCurrent(abs).state;
}

/**
 * Write the draft record of `rel` (`<hash or MISSING>\n`, `0600`, directories `0700`, atomic).
 * With `syncDirectory: false` the caller syncs the record's directory (returned) once per batch,
 * and the parents of the directories this made (pushed to `made`); else both are synced here.
 * `madeDirs`, the directories this batch already wrote records in, are not made again.
 */
export function writeDraftRecord(
  runDir: string,
  rel: string,
  state: string,
  syncDirectory = true,
  madeDirs?: ReadonlySet<string>,
  made: string[] = [],
): string {
  const record = draftRecordPath(runDir, rel);
  try {
    if (madeDirs?.has(dirname(record)) !== true) made.push(...makeRunDirs(dirname(record), runDir));
    // Not fsynced: a record a crash lost or emptied only makes a later restore refuse, the safe
    // side (references/context-guard.md#ownership-what-may-be-restored); its rename is atomic.
    replaceFile(record, `${state}\n`, {
      mode: 0o600,
      exactMode: true,
      syncDirectory,
      syncFile: false,
    });
    if (syncDirectory) { for (const dir of parentsOf(made)) fsyncDirectory(dir); }
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

/**
 * The recorded draft state of `rel`, or `undefined` when no regular (non-link) record of the
 * invoking user's own exists (another user's record proves nothing).
 */
export function readDraftRecord(runDir: string, rel: string): string | undefined {
  const owner = runOwner();
  if (owner === undefined) return undefined;
  try {
    const bytes = readRegular(draftRecordPath(runDir, rel), {
      follow: false,
      maxBytes: 4096,
      ownedBy: (info) => ownPrivate(info, owner),
    });
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
 * file there, and for a file that cannot be read (unknown is never missing); allowed when the
 * current bytes already are the original, or when the draft record equals the current hash (or
 * `MISSING` for a deleted file).
 */
export function restoreVerdict(
  runDir: string,
  rel: string,
  abs: string,
  copyHash: string | undefined = currentState(snapshotCopyPath(runDir, rel)),
): RestoreVerdict {
  const { allowed, original } = judgeRestore(runDir, rel, abs, copyHash);
  return { allowed, original };
}

/** {@linkcode restoreVerdict} with what it saw of the target, for {@linkcode recheckRestore}. */
export interface JudgedRestore extends RestoreVerdict {
  /** The target as judged. */
  current: CurrentFile;
  /**
   * Allowed only by an override (`references/context-guard.md#snapshot-trust`) over a regular file:
   * its current bytes must be kept in `displaced/` before it is replaced.
   */
  displace?: boolean;
}

/**
 * {@linkcode restoreVerdict}, keeping what was seen of the target. With an `override`, a file the
 * proof does not allow is allowed all the same — `force` always, `trust` when the run holds no
 * draft record for it — and marked {@linkcode JudgedRestore.displace} when it exists; a link, a
 * non-regular or an unreadable file stays refused.
 */
export function judgeRestore(
  runDir: string,
  rel: string,
  abs: string,
  copyHash: string | undefined,
  override?: RestoreOverride,
): JudgedRestore {
  const current = inspectCurrent(abs);
  const state = current.state;
  if (state === undefined) return { allowed: false, original: false, current };
  if (state !== "MISSING" && state === copyHash) return { allowed: true, original: true, current };
  const record = readDraftRecord(runDir, rel);
  if (record === state) return { allowed: true, original: false, current };
  if (override === "force" || (override === "trust" && record === undefined)) {
    return { allowed: true, original: false, current, displace: state !== "MISSING" };
  }
  return { allowed: false, original: false, current };
}

/** The very file judged, unchanged: same inode, size, mode and change times. */
function sameFile(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return a.isFile && b.isFile && sameFileState(a, b) && a.mode === b.mode;
}

/**
 * Judge `abs` again right before its rename (`references/context-guard.md#concurrency`): still
 * absent when judged absent, or still the very file hashed (device, inode, size, mode, times) and
 * settled since → the earlier judgement stands, at the cost of one `lstat`. A same-looking file
 * that changed too recently for its times to prove anything is hashed again, and the judgement
 * stands when the hash is the one judged (the draft record it was judged against is not read
 * again: it is the run's own). Anything else is judged afresh.
 */
export function recheckRestore(
  runDir: string,
  rel: string,
  abs: string,
  judged: JudgedRestore,
  copyHash: string | undefined,
  override?: RestoreOverride,
): JudgedRestore {
  const seen = judged.current;
  let now: Deno.FileInfo | undefined;
  try {
    now = Deno.lstatSync(abs);
  } catch (e) {
    rethrowPermission(e);
    if (seen.state === "MISSING" && isAbsent(e)) return judged;
  }
  if (now !== undefined && "info" in seen && sameFile(seen.info, now)) {
    if (settledBefore(seen.info, seen.since)) return judged;
    try {
      const again = hashRegular(abs, { follow: false });
      if (again.sha256 === seen.state && sameFile(seen.info, again.info)) return judged;
    } catch (e) {
      rethrowPermission(e); // anything else: judged afresh below, which names it unknown
    }
  }
  const fresh = judgeRestore(runDir, rel, abs, copyHash, override);
  // Kept bytes stand for the file judged: another file now may not replace them unkept.
  if (judged.displace && fresh.current.state !== judged.current.state) {
    return { ...fresh, allowed: false };
  }
  return fresh;
}

/** {@linkcode restoreVerdict}'s `allowed`. */
export function mayRestore(runDir: string, rel: string, abs: string): boolean {
  return restoreVerdict(runDir, rel, abs).allowed;
}

/**
 * Write the snapshot copy's bytes to `abs` atomically (copied in chunks), with `recordedMode`
 * exactly when the snapshot recorded one; else a replaced file keeps its mode and a re-created one
 * gets the copy's mode (owner-only) minus the umask. Returns the hash written. With
 * `syncDirectory: false` the caller syncs `abs`'s directory once per batch; `beforeRename` runs
 * right before the rename (throw to keep the file as it is).
 */
export function restoreFile(
  runDir: string,
  rel: string,
  abs: string,
  syncDirectory = true,
  recordedMode?: number,
  beforeRename?: () => void,
): string {
  const { content, options } = restoreWrite(runDir, rel, abs, syncDirectory, recordedMode);
  return replaceFile(abs, content, { ...options, beforeRename }).sha256;
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
  beforeRename?: () => void,
): PendingWrite {
  const { content, options } = restoreWrite(runDir, rel, abs, syncDirectory, recordedMode);
  return prepareReplace(abs, content, { ...options, beforeRename });
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
