/**
 * Small file-system helpers for the scanner: OS error reasons, lossy-name detection and the
 * `probe`/measure primitives. Every function here is synchronous and never throws for an I/O error.
 *
 * @module
 */

import { isPermissionError } from "../exit.ts";

// Deno's own fs calls, not node:fs: the node compatibility layer costs 2–3× per call, and the walk
// makes one call per directory and file.

/** A stat result (links followed, or not for lstat). */
export type Stats = Deno.FileInfo;

const REASONS: Record<string, string> = {
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  ENOENT: "No such file or directory",
  ENOTDIR: "Not a directory",
  EISDIR: "Is a directory",
  ELOOP: "Too many levels of symbolic links",
  EIO: "Input/output error",
  ENAMETOOLONG: "File name too long",
  EMFILE: "Too many open files",
  ENFILE: "Too many open files in system",
};

/**
 * Rethrow a missing-Deno-permission error (a grant problem, not a file problem) so the bin reports
 * it as such; every other error is the caller's to classify.
 */
export function rethrowPermission(e: unknown): void {
  if (isPermissionError(e)) throw e;
}

/** The error code of an fs error (`EACCES`…), or `undefined`. */
export function errorCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The OS reason text for an error, like `strerror` (`Permission denied`). */
export function osReason(e: unknown): string {
  const code = errorCode(e);
  if (code !== undefined) return REASONS[code] ?? code;
  return e instanceof Error ? e.message.split("\n")[0] : String(e);
}

/** True for the errors that mean "nothing is there" (not found / a component is not a directory). */
export function isAbsent(e: unknown): boolean {
  const code = errorCode(e);
  return code === "ENOENT" || code === "ENOTDIR";
}

/**
 * True when `path` came from a name the runtime decoded lossily (invalid UTF-8 replaced by U+FFFD):
 * such a path contains U+FFFD and does not exist under that spelling.
 */
export function isLossyPath(path: string): boolean {
  if (!path.includes("\uFFFD")) return false;
  try {
    Deno.lstatSync(path);
    return false;
  } catch (e) {
    rethrowPermission(e);
    return true;
  }
}

/** `stat` following links, or the error. */
export function statOrError(path: string): Stats | { error: unknown } {
  try {
    return Deno.statSync(path);
  } catch (e) {
    rethrowPermission(e);
    return { error: e };
  }
}

/** `lstat`, or `undefined` on any error. */
export function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return undefined;
  }
}

/** What reading a file produced: its size and (when asked for) its bytes, or the OS reason. */
export type FileRead =
  | { ok: true; size: number; content?: Uint8Array }
  | { ok: false; reason: string };

/**
 * Open `path` (known to be a regular file) and take its size, plus its bytes when `content` is set.
 * Opening proves readability even when only the size is needed.
 */
export function readFileMeasure(path: string, content: boolean): FileRead {
  try {
    if (content) {
      const bytes = Deno.readFileSync(path);
      return { ok: true, size: bytes.length, content: bytes };
    }
    const file = Deno.openSync(path);
    try {
      return { ok: true, size: file.statSync().size };
    } finally {
      file.close();
    }
  } catch (e) {
    rethrowPermission(e);
    return { ok: false, reason: osReason(e) };
  }
}
