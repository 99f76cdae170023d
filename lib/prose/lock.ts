/**
 * The write lock of the flag (`references/prose.md#concurrency`): every transition of the flag
 * runs under an exclusive lock file `D/.lock`, created with `O_EXCL` and holding the holder's pid,
 * so N concurrent `consume` calls take exactly N turns. Readers never take it.
 *
 * The holder also holds an OS lock (`flock`) on that file for as long as it runs, and says so in
 * the file (`<pid> <hex> flock`). The kernel drops that OS lock the moment its holder dies, however
 * it dies, and never while it lives — stopped, swapped out or waiting on a slow NFS server
 * included. So a waiter that can take the OS lock of such a file knows its holder is gone and
 * breaks the lock at once, under any grants; and one that cannot knows it is alive and waits,
 * however long it has been held: a live holder's lock is never taken from it, so its write, which
 * compared the flag before its rename, can never land on top of another one's.
 *
 * A lock file without that mark (written where the file system has no `flock`, or by an earlier
 * release) is stale, and broken by the next waiter, when its holder is known to be gone (its pid
 * has no `/proc` entry: Linux, and only where Deno lets `/proc` be read, i.e. under `-A`) or when
 * the waiter has seen the very same lock file (inode, size, mtime, bytes) for
 * {@linkcode STALE_LOCK_MS} on its own monotonic clock. The wall clock is never compared with the
 * file's mtime: a home on NFS stamps files with the server's clock, which may be seconds away
 * from this process's.
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
import { openRegular } from "../_fs/read.ts";
import { processGone } from "../_fs/inspect.ts";
import { randomHex } from "../random.ts";

/** The lock file's name inside `D`. */
export const LOCK_NAME = ".lock";
/** A lock without the `flock` mark seen unchanged for this long (ms, the waiter's clock) is stale. */
export const STALE_LOCK_MS = 2000;
/** How long a transition waits for the lock (ms) before it gives up with `busy`. */
export const LOCK_WAIT_MS = 5000;
/**
 * How long `session-end` waits for the lock (ms): Claude Code gives a `SessionEnd` hook that names
 * no timeout 1.5 s in all, start-up included, and cancels it after that. A live transition holds
 * the lock for milliseconds and a dead holder's lock is broken at once, so only a holder stalled
 * longer (or a lock that cannot be broken) makes it end `busy` (`references/prose.md#concurrency`).
 */
export const SESSION_END_LOCK_WAIT_MS = 500;
/** The mark of a lock file whose holder holds its OS lock (`flock`) while it runs. */
const FLOCK_MARK = " flock";

/** Timing of {@linkcode withFlagLock} (the defaults are the documented ones). */
export interface LockOptions {
  /** Give up after this many ms (default {@linkcode LOCK_WAIT_MS}). */
  waitMs?: number;
  /** A lock without the `flock` mark seen unchanged this long (ms) is stale (default {@linkcode STALE_LOCK_MS}). */
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
  pid: number | null;
  /** Inode, size, mtime and bytes: a new holder (or a refreshed lock) changes it. */
  identity: string;
  /** The holder is known to be gone (its OS lock is free, or its pid has no `/proc` entry). */
  gone: boolean;
  /** The holder holds the file's OS lock: alive, whatever the age of the file. */
  live: boolean;
  /** Remove the lock (only if it is still the file inspected); true when it is gone. */
  remove(): boolean;
}

/** The OS lock of `file`: true when taken, false when someone holds it, null when unsupported. */
function tryOsLock(file: Deno.FsFile): boolean | null {
  try {
    return file.tryLockSync(true);
  } catch (e) {
    rethrowPermission(e);
    return null;
  }
}

/** Remove `path` when it is still the file `info` describes; true when it is gone afterwards. */
function removeIfSame(path: string, info: Deno.FileInfo): boolean {
  try {
    const now = Deno.lstatSync(path);
    if (now.dev === info.dev && now.ino === info.ino) Deno.removeSync(path);
    return true; // removed, or replaced meanwhile: try to take it again
  } catch (e) {
    rethrowPermission(e);
    return errorCode(e) === "ENOENT";
  }
}

/** The lock file's pid and identity, and whether its holder is gone; `null` when it is gone. */
function inspect(path: string): Seen | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return null;
  }
  let file: Deno.FsFile | undefined;
  let text = "";
  try {
    const opened = openRegular(path, { follow: false });
    file = opened.file;
    info = opened.info;
    const buf = new Uint8Array(64);
    const n = file.readSync(buf) ?? 0;
    text = new TextDecoder().decode(buf.subarray(0, n));
  } catch (e) {
    rethrowPermission(e);
  }
  const m = /^([1-9][0-9]{0,9}) [0-9a-f]+( flock)?\n$/.exec(text);
  const pid = m === null ? null : Number(m[1]);
  const identity = `${info.ino}:${info.size}:${info.mtime?.getTime()}:${text}`;
  const plain = { pid, identity, live: false };
  if (file === undefined) return { ...plain, gone: false, remove: () => removeIfSame(path, info) };
  if (m?.[2] === FLOCK_MARK && Deno.build.os !== "windows") {
    const free = tryOsLock(file);
    if (free === false) {
      file.close();
      return { ...plain, live: true, gone: false, remove: () => false };
    }
    if (free === true) {
      // Its holder is gone: remove it while holding its OS lock, so no other waiter that found
      // the same file can remove a newer lock at the path meanwhile.
      return {
        ...plain,
        gone: true,
        remove: () => {
          try {
            return file.statSync().nlink === 0 || removeIfSame(path, info);
          } finally {
            file.close();
          }
        },
      };
    }
  }
  file.close();
  const gone = pid !== null && pid !== Deno.pid && processGone(pid);
  return { ...plain, gone, remove: () => removeIfSame(path, info) };
}

/** A lock this process holds: its file (open, with the OS lock when there is one) and bytes. */
interface Holding {
  path: string;
  file: Deno.FsFile;
}

/**
 * Create the lock file exclusively (never through a link, never over anything), mode 0600, take
 * its OS lock, then write `<pid> <hex>` and the `flock` mark when the OS lock was taken. Not
 * synced: a lock is not data to keep, and one a crash left behind is broken. Throws what the
 * exclusive create throws (`AlreadyExists` when a lock is there).
 */
function create(path: string): Holding {
  const file = Deno.openSync(path, { write: true, createNew: true, mode: 0o600 });
  try {
    Deno.chmodSync(path, 0o600);
    const locked = Deno.build.os !== "windows" && tryOsLock(file) === true;
    const content = `${Deno.pid} ${randomHex(8)}${locked ? FLOCK_MARK : ""}\n`;
    const bytes = new TextEncoder().encode(content);
    for (let at = 0; at < bytes.length;) at += file.writeSync(bytes.subarray(at));
  } catch (e) {
    file.close();
    try {
      Deno.removeSync(path);
    } catch { /* already gone */ }
    throw e;
  }
  return { path, file };
}

/** Remove the lock when it is still this holder's file (it may have been broken), then close it. */
function release(holding: Holding): void {
  try {
    removeIfSame(holding.path, holding.file.statSync());
  } catch {
    /* already gone or broken: nothing of ours to remove */
  } finally {
    holding.file.close(); // drops the OS lock
  }
}

/** How a lock attempt ended: taken (held), not lockable here (run unlocked), or busy. */
type LockEnd = Holding | "unlockable" | LockBusy;

/**
 * The attempts to take the lock at `path`: yields each pause (ms) the waiter must sleep before the
 * next attempt, and returns how it ended. Every attempt that does not take the lock either made
 * progress (a lock that vanished or was broken: at most one quick retry) or pauses, and the
 * deadline is checked every time, so no lock — not even one that cannot be removed — makes a
 * waiter spin or wait past `waitMs`.
 */
export function* lockSteps(
  path: string,
  { waitMs = LOCK_WAIT_MS, staleMs = STALE_LOCK_MS }: LockOptions = {},
): Generator<number, LockEnd, void> {
  const start = performance.now();
  let wait = 1;
  let first: { identity: string; at: number } | null = null;
  let quick = true; // one immediate retry after progress, then pause
  for (;;) {
    try {
      return create(path);
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
      if (lock.gone || (!lock.live && now - first.at >= staleMs)) {
        progress = lock.remove();
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
function runHolding<T>(dir: string, holding: Holding, fn: () => T): T {
  held.set(dir, 1);
  try {
    return fn();
  } finally {
    held.delete(dir);
    release(holding);
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

/** Run `fn` as the lock attempts ended. */
function runAs<T>(dir: string, end: LockEnd, fn: () => T): T | LockBusy {
  if (end instanceof LockBusy) return end;
  return end === "unlockable" ? fn() : runHolding(dir, end, fn);
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
  const steps = lockSteps(`${dir}/${LOCK_NAME}`, options);
  let step = steps.next();
  while (!step.done) {
    Atomics.wait(pause, 0, 0, step.value);
    step = steps.next();
  }
  return runAs(dir, step.value, fn);
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
  const steps = lockSteps(`${dir}/${LOCK_NAME}`, options);
  let step = steps.next();
  while (!step.done) {
    const ms = step.value;
    await new Promise((resolve) => setTimeout(resolve, ms));
    step = steps.next();
  }
  return runAs(dir, step.value, fn);
}
