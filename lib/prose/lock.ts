/**
 * The write lock of the flag (`references/prose.md#concurrency`): every transition of the flag
 * runs under an exclusive lock file `D/.lock`, created with `O_EXCL` and holding the holder's pid,
 * so N concurrent `consume` calls take exactly N turns. Readers never take it.
 *
 * A lock is stale, and broken by the next waiter, when its holder is known to be gone (its pid has
 * no `/proc` entry: Linux, and only where Deno lets `/proc` be read, i.e. under `-A`) or when the
 * waiter has seen the very same lock file (inode, size, mtime, bytes) for
 * {@linkcode STALE_LOCK_MS} on its own monotonic clock (a transition takes milliseconds). The
 * wall clock is never compared with the file's mtime: a home on NFS stamps files with the server's
 * clock, which may be seconds away from this process's. So a holder killed with SIGKILL never
 * blocks the flag for good, and breaking a lock that was not really stale costs nothing but a
 * `conflict`: the writes keep their compare-first check under the lock.
 *
 * A lock that cannot be broken (a read-only `D` after a killed command, a directory at the path)
 * is waited on like a live one, until the deadline: `busy`, never a spin. The waiting itself is a
 * sequence of pauses ({@linkcode lockSteps}) driven by a blocking sleep in the CLI
 * ({@linkcode withFlagLock}) and by timers in the server ({@linkcode withFlagLockAsync}), which
 * never blocks its event loop.
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
/** A lock seen unchanged for this long (ms, the waiter's monotonic clock) is stale. */
export const STALE_LOCK_MS = 2000;
/** How long a transition waits for the lock (ms) before it gives up with `busy`. */
export const LOCK_WAIT_MS = 5000;

/** Timing of {@linkcode withFlagLock} (the defaults are the documented ones). */
export interface LockOptions {
  /** Give up after this many ms (default {@linkcode LOCK_WAIT_MS}). */
  waitMs?: number;
  /** A lock seen unchanged this long (ms) is stale (default {@linkcode STALE_LOCK_MS}). */
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

/** What a waiter saw at the lock's path. */
interface Seen {
  info: Deno.FileInfo;
  pid: number | null;
  /** Inode, size, mtime and bytes: a new holder (or a refreshed lock) changes it. */
  identity: string;
}

/** The lock file's stat, pid and identity, or `null` when it is gone. */
function inspect(path: string): Seen | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return null;
  }
  let pid: number | null = null;
  let text = "";
  try {
    text = new TextDecoder().decode(readHead(path, 64, { follow: false }).bytes);
    const m = /^([1-9][0-9]{0,9}) [0-9a-f]+\n$/.exec(text);
    if (m !== null) pid = Number(m[1]);
  } catch (e) {
    rethrowPermission(e);
  }
  const identity = `${info.ino}:${info.size}:${info.mtime?.getTime()}:${text}`;
  return { info, pid, identity };
}

/** Remove the stale lock, unless it was replaced since it was inspected; true when it is gone. */
function breakLock(path: string, seen: Deno.FileInfo): boolean {
  try {
    const now = Deno.lstatSync(path);
    if (now.ino === seen.ino && now.mtime?.getTime() === seen.mtime?.getTime()) {
      Deno.removeSync(path);
    }
    return true; // removed, or replaced meanwhile: try to take it again
  } catch (e) {
    rethrowPermission(e);
    return errorCode(e) === "ENOENT";
  }
}

/** Remove the lock when it still holds this holder's bytes (it may have been broken meanwhile). */
function release(path: string, content: string): void {
  try {
    const now = new TextDecoder().decode(readHead(path, 64, { follow: false }).bytes);
    if (now === content) Deno.removeSync(path);
  } catch { /* already gone or broken: nothing of ours to remove */ }
}

/** How a lock attempt ended: taken, not lockable here (run unlocked), or busy. */
type LockEnd = "taken" | "unlockable" | LockBusy;

/**
 * The attempts to take the lock at `path` with `content`: yields each pause (ms) the waiter must
 * sleep before the next attempt, and returns how it ended. Every attempt that does not take the
 * lock either made progress (a lock that vanished or was broken: at most one quick retry) or
 * pauses, and the deadline is checked every time, so no lock — not even one that cannot be
 * removed — makes a waiter spin or wait past `waitMs`.
 */
export function* lockSteps(
  path: string,
  content: string,
  { waitMs = LOCK_WAIT_MS, staleMs = STALE_LOCK_MS }: LockOptions = {},
): Generator<number, LockEnd, void> {
  const start = performance.now();
  let wait = 1;
  let first: { identity: string; at: number } | null = null;
  let quick = true; // one immediate retry after progress, then pause
  for (;;) {
    try {
      // Not synced: a lock is not data to keep, and a crash leaves a stale one that is broken.
      createFileExclusive(path, content, 0o600, true, false);
      return "taken";
    } catch (e) {
      rethrowPermission(e);
      if (errorCode(e) !== "EEXIST") return "unlockable"; // the guarded write fails alike
    }
    const now = performance.now();
    const lock = inspect(path);
    let progress = false;
    let pid: number | null = null;
    if (lock === null) progress = true;
    else {
      pid = lock.pid;
      if (first === null || first.identity !== lock.identity) {
        first = { identity: lock.identity, at: now };
      }
      const gone = lock.pid !== null && lock.pid !== Deno.pid && processGone(lock.pid);
      if (gone || now - first.at >= staleMs) {
        progress = breakLock(path, lock.info);
        first = null;
      }
    }
    if (progress && quick) {
      quick = false; // the lock went away: take it now, even at the deadline
      continue;
    }
    quick = true;
    const left = start + waitMs - now;
    if (left <= 0) return new LockBusy(path, pid);
    yield Math.min(left, wait + Math.random() * wait);
    wait = Math.min(wait * 2, 25);
  }
}

/** Run `fn` holding the lock of `dir` (already taken, or re-entered); release it after. */
function runHolding<T>(dir: string, path: string, content: string, fn: () => T): T {
  held.set(dir, 1);
  try {
    return fn();
  } finally {
    held.delete(dir);
    release(path, content);
  }
}

/** Run `fn` inside a lock this process already holds (nested transitions). */
function reenter<T>(dir: string, depth: number, fn: () => T): T {
  held.set(dir, depth + 1);
  try {
    return fn();
  } finally {
    held.set(dir, depth);
  }
}

function lockPath(dir: string): { path: string; content: string } {
  return { path: `${dir}/${LOCK_NAME}`, content: `${Deno.pid} ${randomHex(8)}\n` };
}

/**
 * Run `fn` holding the lock of the prose directory `dir` (which must exist and be safe); return
 * its result, or {@linkcode LockBusy} when the lock stayed held for the whole wait. Stale locks
 * are broken; a lock that cannot be created for another reason than "it exists" (a read-only
 * directory) is skipped, since the write it guards fails the same way. Re-entrant within one
 * process. Waits by blocking the thread: for the CLI, which has nothing else to do.
 */
export function withFlagLock<T>(dir: string, fn: () => T, options: LockOptions = {}): T | LockBusy {
  const depth = held.get(dir) ?? 0;
  if (depth > 0) return reenter(dir, depth, fn);
  const { path, content } = lockPath(dir);
  const steps = lockSteps(path, content, options);
  let step = steps.next();
  while (!step.done) {
    Atomics.wait(pause, 0, 0, step.value);
    step = steps.next();
  }
  if (step.value instanceof LockBusy) return step.value;
  return step.value === "taken" ? runHolding(dir, path, content, fn) : fn();
}

/**
 * {@linkcode withFlagLock} for the server: the same attempts, but the pauses are timers, so the
 * event loop keeps answering other requests while a transition waits. `fn` runs synchronously as
 * soon as the lock is taken (nothing else of this process runs while it is held), and the
 * transitions inside it re-enter the lock instead of waiting for themselves.
 */
export async function withFlagLockAsync<T>(
  dir: string,
  fn: () => T,
  options: LockOptions = {},
): Promise<T | LockBusy> {
  const depth = held.get(dir) ?? 0;
  if (depth > 0) return reenter(dir, depth, fn);
  const { path, content } = lockPath(dir);
  const steps = lockSteps(path, content, options);
  let step = steps.next();
  while (!step.done) {
    const ms = step.value;
    await new Promise((resolve) => setTimeout(resolve, ms));
    step = steps.next();
  }
  if (step.value instanceof LockBusy) return step.value;
  return step.value === "taken" ? runHolding(dir, path, content, fn) : fn();
}
