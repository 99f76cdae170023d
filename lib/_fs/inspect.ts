/**
 * What is at a path, asked without opening it: the predicates every tool decides with. Links are
 * followed only where a function's name says so (`…Follow`); a missing Deno grant is rethrown, any
 * other error means "not that kind".
 *
 * @module
 */

import { errorCode, isSandboxRefusal, rethrowPermission } from "./errors.ts";

/** The kinds of directory entry ctxkit tells apart. */
export type EntryKind =
  | "absent"
  | "file"
  | "directory"
  | "symlink"
  | "fifo"
  | "socket"
  | "char-device"
  | "block-device";

/** `lstat` (or `stat` with `follow`), or `undefined` on any error but a missing grant. */
export function statOrUndefined(path: string, follow = false): Deno.FileInfo | undefined {
  try {
    return follow ? Deno.statSync(path) : Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return undefined;
  }
}

/**
 * True when Deno refuses to look at `path` under any grant (special paths such as
 * `/proc/self/environ` need `--allow-all`): such a path is neither present nor absent to us.
 */
export function refusedBySandbox(path: string, follow = true): boolean {
  try {
    if (follow) Deno.statSync(path);
    else Deno.lstatSync(path);
    return false;
  } catch (e) {
    return isSandboxRefusal(e);
  }
}

/** The kind of an entry's stat result. */
export function kindOfInfo(st: Deno.FileInfo): EntryKind {
  if (st.isSymlink) return "symlink";
  if (st.isFile) return "file";
  if (st.isDirectory) return "directory";
  if (st.isFifo) return "fifo";
  if (st.isSocket) return "socket";
  if (st.isCharDevice) return "char-device";
  if (st.isBlockDevice) return "block-device";
  return "absent";
}

/**
 * What is at `path` itself (a link is `symlink`), or with `follow` what it resolves to (a dangling
 * link is `absent`).
 *
 * @example
 * ```ts ignore
 * import { entryKind } from "./inspect.ts";
 * entryKind("/dev/null"); // "char-device"
 * ```
 */
export function entryKind(path: string, follow = false): EntryKind {
  const st = statOrUndefined(path, follow);
  return st === undefined ? "absent" : kindOfInfo(st);
}

/** True when `path` itself is a symbolic link (dangling links included). */
export function isSymlink(path: string): boolean {
  return statOrUndefined(path)?.isSymlink ?? false;
}

/** True when `path` itself is a regular file (a link is not). */
export function isRegularNoFollow(path: string): boolean {
  return statOrUndefined(path)?.isFile ?? false;
}

/** True when anything, a dangling link included, exists at `path`. */
export function existsNoFollow(path: string): boolean {
  return statOrUndefined(path) !== undefined;
}

/** True when `path` resolves to a regular file (links followed). */
export function isFileFollow(path: string): boolean {
  return statOrUndefined(path, true)?.isFile ?? false;
}

/** True when `path` resolves to anything (a dangling link does not count). */
export function existsFollow(path: string): boolean {
  return statOrUndefined(path, true) !== undefined;
}

/** True when `path` resolves to a directory (links followed). */
export function isDirectoryFollow(path: string): boolean {
  return statOrUndefined(path, true)?.isDirectory ?? false;
}

/** The physical (link-free) absolute path of an existing `path`, or `undefined`. */
export function physicalPath(path: string): string | undefined {
  try {
    return Deno.realPathSync(path);
  } catch (e) {
    rethrowPermission(e);
    return undefined;
  }
}

let procReadable: boolean | undefined;

/**
 * True only when process `pid` is known not to exist: its `/proc` entry is missing while `/proc`
 * itself can be read (Linux, and only where Deno lets it be read); elsewhere nothing is known and
 * the answer is false. For telling a killed writer's leftovers (temp files, locks) from a live one's.
 */
export function processGone(pid: number): boolean {
  if (procReadable === undefined) {
    try {
      procReadable = Deno.statSync("/proc/self").isDirectory;
    } catch {
      procReadable = false;
    }
  }
  if (!procReadable) return false;
  try {
    Deno.statSync(`/proc/${pid}`);
    return false;
  } catch (e) {
    return errorCode(e) === "ENOENT";
  }
}
