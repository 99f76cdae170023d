/**
 * The write lock of the flag (`references/prose.md#concurrency`): every transition of the flag
 * runs under an exclusive lock file `D/.lock`, created with `O_EXCL` and holding the holder's pid,
 * so N concurrent `consume` calls take exactly N turns. Readers never take it.
 *
 * A lock is stale, and broken by the next waiter, when its holder is known to be gone (its pid has
 * no `/proc` entry: Linux, and only where Deno lets `/proc` be read, i.e. under `-A`) or when the
 * file is more than {@linkcode STALE_LOCK_MS} old (a transition takes milliseconds), so a holder
 * killed with SIGKILL never blocks the flag for good. Breaking a lock that was not really stale
 * costs nothing but a `conflict`: the writes keep their compare-first check under the lock.
 *
 * @module
 */

import { errorCode, rethrowPermission } from "../_fs/errors.ts";
import { readHead } from "../_fs/read.ts";
import { processGone } from "../_fs/inspect.ts";
import { createFileExclusive } from "../_fs/write.ts";
import { randomHex } from "../random.ts";

/** The lock file's name inside `D`. */
export const LOCK_NAME = ".lock";
/** A lock older than this (ms) is stale whoever holds it. */
export const STALE_LOCK_MS = 2000;
/** How long a transition waits for the lock (ms) before it gives up with `busy`. */
export const LOCK_WAIT_MS = 5000;

/** Timing of {@linkcode withFlagLock} (the defaults are the documented ones). */
export interface LockOptions {
  /** Give up after this many ms (default {@linkcode LOCK_WAIT_MS}). */
  waitMs?: number;
  /** A lock file this old (ms) is stale (default {@linkcode STALE_LOCK_MS}). */
  staleMs?: number;
}

/** The lock stayed held by someone else for the whole wait. */
export class LockBusy {
  /** The lock file. */
  readonly path: string;
  /** The pid written in it, when it could be read. */
  readonly pid: number | null;
  /** Describe the held lock. */
  constructor(path: string, pid: number | null) {
    this.path = path;
    this.pid = pid;
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));
/** Directories whose lock this process holds, with the nesting depth (the lock is re-entrant). */
const held = new Map<string, number>();

/** The lock file's stat and pid, or `null` when it is gone. */
function inspect(path: string): { info: Deno.FileInfo; pid: number | null } | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return null;
  }
  let pid: number | null = null;
  try {
    const text = new TextDecoder().decode(readHead(path, 64, { follow: false }).bytes);
    const m = /^([1-9][0-9]{0,9}) [0-9a-f]+\n$/.exec(text);
    if (m !== null) pid = Number(m[1]);
  } catch (e) {
    rethrowPermission(e);
  }
  return { info, pid };
}

function isStale(lock: { info: Deno.FileInfo; pid: number | null }, staleMs: number): boolean {
  const mtime = lock.info.mtime?.getTime();
  if (mtime === undefined) return false;
  // A lock from the future (a clock step, a planted file) is as stale as a very old one.
  if (Math.abs(Date.now() - mtime) > staleMs) return true;
  return lock.pid !== null && lock.pid !== Deno.pid && processGone(lock.pid);
}

/** Remove the stale lock, unless it was replaced since it was inspected. */
function breakLock(path: string, seen: Deno.FileInfo): void {
  try {
    const now = Deno.lstatSync(path);
    if (now.ino === seen.ino && now.mtime?.getTime() === seen.mtime?.getTime()) {
      Deno.removeSync(path);
    }
  } catch (e) {
    rethrowPermission(e);
  }
}

/** Remove the lock when it still holds this holder's bytes (it may have been broken meanwhile). */
function release(path: string, content: string): void {
  try {
    const now = new TextDecoder().decode(readHead(path, 64, { follow: false }).bytes);
    if (now === content) Deno.removeSync(path);
  } catch { /* already gone or broken: nothing of ours to remove */ }
}

/**
 * Run `fn` holding the lock of the prose directory `dir` (which must exist and be safe); return
 * its result, or {@linkcode LockBusy} when the lock stayed held for the whole wait. Stale locks
 * are broken; a lock that cannot be created for another reason than "it exists" (a read-only
 * directory) is skipped, since the write it guards fails the same way. Re-entrant within one
 * process.
 */
export function withFlagLock<T>(dir: string, fn: () => T, options: LockOptions = {}): T | LockBusy {
  const depth = held.get(dir) ?? 0;
  if (depth > 0) {
    held.set(dir, depth + 1);
    try {
      return fn();
    } finally {
      held.set(dir, depth);
    }
  }
  const { waitMs = LOCK_WAIT_MS, staleMs = STALE_LOCK_MS } = options;
  const path = `${dir}/${LOCK_NAME}`;
  const nonce = randomHex(8);
  const content = `${Deno.pid} ${nonce}\n`;
  const deadline = Date.now() + waitMs;
  let wait = 1;
  for (;;) {
    try {
      // Not synced: a lock is not data to keep, and a crash leaves a stale one that is broken.
      createFileExclusive(path, content, 0o600, true, false);
      break;
    } catch (e) {
      rethrowPermission(e);
      if (errorCode(e) !== "EEXIST") return fn(); // cannot lock here: the write fails alike
    }
    const lock = inspect(path);
    if (lock === null) continue;
    if (isStale(lock, staleMs)) {
      breakLock(path, lock.info);
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) return new LockBusy(path, lock.pid);
    Atomics.wait(pause, 0, 0, Math.min(left, wait + Math.random() * wait));
    wait = Math.min(wait * 2, 25);
  }
  held.set(dir, 1);
  try {
    return fn();
  } finally {
    held.delete(dir);
    release(path, content);
  }
}
