/**
 * What the scan needs from a file on top of `lib/_fs/`: a `stat` that keeps its error (the scan
 * reports the OS reason as an issue instead of treating every failure as "absent"), measuring a
 * file through the shared reader (a FIFO or device swapped in after the walk is never opened), and
 * the non-UTF-8 name test (`references/context-scan.md#non-utf-8-names`).
 *
 * Nothing here throws for an I/O error; a missing Deno grant is rethrown so the command line
 * reports it as such.
 *
 * @module
 */

import { osReason, rethrowPermission } from "../_fs/errors.ts";
import { existsNoFollow } from "../_fs/inspect.ts";
import { openRegular, type ReadRefusal, ReadRefusedError, readRegular } from "../_fs/read.ts";

/** A `stat` result (links followed), or the error that prevented it. */
export type StatOutcome = Deno.FileInfo | { error: unknown };

/**
 * `stat` following links, or the error.
 *
 * @example
 * ```ts ignore
 * const st = statFollow("/r/rules");
 * if ("error" in st) console.log(isAbsent(st.error) ? "nothing there" : osReason(st.error));
 * ```
 */
export function statFollow(path: string): StatOutcome {
  try {
    return Deno.statSync(path);
  } catch (e) {
    rethrowPermission(e);
    return { error: e };
  }
}

/**
 * True when `path` came from a name the runtime decoded lossily (invalid UTF-8 replaced by U+FFFD):
 * such a path contains U+FFFD and does not exist under that spelling.
 *
 * @example
 * ```ts ignore
 * isLossyPath("/r/ok.md"); // false: no U+FFFD, so no file-system call at all
 * ```
 */
export function isLossyPath(path: string): boolean {
  return path.includes("\uFFFD") && !existsNoFollow(path);
}

/** A file's size, or why it could not be opened. */
export type Measured = { ok: true; size: number } | { ok: false; reason: string };

/** A file's bytes, or why it could not be read. */
export type ReadBytes = { ok: true; bytes: Uint8Array } | { ok: false; reason: string };

// Only a file replaced between the walk and the read is refused; `strerror`-like words keep the
// issue detail in the same style as an OS reason.
const REFUSALS: Readonly<Record<ReadRefusal, string>> = {
  absent: "No such file or directory",
  "not-regular": "Not a regular file",
  symlink: "Is a symbolic link",
  changed: "File changed while being opened",
  "too-large": "File too large",
};

function reasonOf(e: unknown): string {
  rethrowPermission(e);
  return e instanceof ReadRefusedError ? REFUSALS[e.refusal] : osReason(e);
}

/**
 * Open `path` (expected to be a regular file, links followed) and take its size. Opening proves
 * readability: a row needs it even when the bytes are not looked at.
 */
export function measureFile(path: string): Measured {
  try {
    const { file, info } = openRegular(path);
    file.close();
    return { ok: true, size: info.size };
  } catch (e) {
    return { ok: false, reason: reasonOf(e) };
  }
}

/** Read the bytes of `path` (expected to be a regular file, links followed). */
export function readFileBytes(path: string): ReadBytes {
  try {
    return { ok: true, bytes: readRegular(path) };
  } catch (e) {
    return { ok: false, reason: reasonOf(e) };
  }
}
