/**
 * What the scan needs from a file on top of `lib/_fs/`: a `stat` that keeps its error (the scan
 * reports the OS reason as an issue instead of treating every failure as "absent"), measuring a
 * file through the shared reader (a FIFO or device swapped in after the walk is never opened), and
 * the non-UTF-8 name test (`references/context-scan.md#non-utf-8-names`).
 *
 * Nothing here throws for an I/O error; a missing Deno grant is rethrown so the command line
 * reports it as such. Files are never read whole (but small ones inside a `--loaded` run, kept for
 * the loading model: `read_memo.ts`): {@linkcode scanFile} streams them in fixed-size
 * chunks and stops as soon as its measurement is settled.
 *
 * @module
 */

import { isSandboxRefusal, osReason, rethrowPermission } from "../_fs/errors.ts";
import { existsNoFollow } from "../_fs/inspect.ts";
import {
  CHUNK_BYTES,
  openRegular,
  type ReadRefusal,
  ReadRefusedError,
  readUpTo,
  streamFile,
} from "../_fs/read.ts";
import type { LineScanner } from "./measure.ts";
import {
  decodeText,
  recalled,
  remember,
  scratchBuffer,
  SHARED_TEXT_BYTES,
  sharingReads,
} from "./read_memo.ts";

/** A `stat` result (links followed), or the error that prevented it. */
export type StatOutcome = Deno.FileInfo | { error: unknown };

/**
 * `stat` following links, or the error. A path the Deno sandbox refuses to examine (anything below
 * `/dev/null`, `/proc/self/…`) is absent (ENOTDIR) when one of its ancestors exists and is not a
 * directory — the answer the OS would give — so `CLAUDE_CONFIG_DIR=/dev/null` has no memory
 * rather than an issue; otherwise the refusal is the error.
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
    if (isSandboxRefusal(e) && belowNonDirectory(path)) {
      return { error: Object.assign(new Error("Not a directory"), { code: "ENOTDIR" }) };
    }
    return { error: e };
  }
}

/** True when an ancestor of `path` can be examined and is not a directory. */
function belowNonDirectory(path: string): boolean {
  for (let at = path.lastIndexOf("/"); at > 0; at = path.lastIndexOf("/", at - 1)) {
    try {
      return !Deno.statSync(path.slice(0, at)).isDirectory;
    } catch (e) {
      rethrowPermission(e);
    }
  }
  return false;
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

// Only a file replaced between the walk and the read is refused; `strerror`-like words keep the
// issue detail in the same style as an OS reason.
const REFUSALS: Readonly<Record<ReadRefusal, string>> = {
  absent: "No such file or directory",
  "not-regular": "Not a regular file",
  symlink: "Is a symbolic link",
  changed: "File changed while being opened",
  modified: "File changed while being read",
  "too-large": "File too large",
  foreign: "Not the user's own file",
};

function reasonOf(e: unknown): string {
  rethrowPermission(e);
  return e instanceof ReadRefusedError ? REFUSALS[e.refusal] : osReason(e);
}

/**
 * Open `path` (expected to be a regular file, links followed) and take its size. Opening proves
 * readability: a row needs it even when the bytes are not looked at. With `share`, a small file's
 * text is kept for the loading model when a `--loaded` run shares its reads.
 */
export function measureFile(path: string, share = false): Measured {
  try {
    const { file, info } = openRegular(path);
    try {
      if (share) sharedText(path, file, info.size);
    } finally {
      file.close();
    }
    return { ok: true, size: info.size };
  } catch (e) {
    return { ok: false, reason: reasonOf(e) };
  }
}

/**
 * Inside a `--loaded` run (`read_memo.ts`), the bytes of the small file just opened at `path`,
 * kept as the run's read of it: the loading model then never opens it again. Undefined (nothing
 * read) outside a run, for a larger file, or when the run has read `path` already. The bytes may
 * be the run's scratch buffer: valid until the next read.
 */
function sharedText(path: string, file: Deno.FsFile, size: number): Uint8Array | undefined {
  if (!sharingReads() || size > SHARED_TEXT_BYTES || recalled(path) !== undefined) return undefined;
  const bytes = readUpTo(file, size, scratchBuffer());
  remember(path, { kind: "text", text: decodeText(bytes), size: bytes.length });
  return bytes;
}

const NOTHING = new Uint8Array();

/** A streamed measurement: the file's size (its `fstat`) and the scanner's result. */
export type Scanned<R> = { ok: true; size: number; result: R } | { ok: false; reason: string };

/**
 * Stream the regular file at `path` (links followed) through `scanner` in chunks of `chunkBytes`,
 * stopping once the result is settled. Memory is one chunk whatever the file's size; the size is
 * the opened file's `fstat` size, as for every other row. With `share`, a small file is read whole
 * first and its text kept for the loading model when a `--loaded` run shares its reads.
 *
 * @example
 * ```ts ignore
 * const r = scanFile("/r/.claude/rules/a.md", new RuleScopeScanner());
 * if (r.ok) console.log(r.size, r.result ? "path-scoped-rule" : "unscoped-rule");
 * ```
 */
export function scanFile<R>(
  path: string,
  scanner: LineScanner<R>,
  chunkBytes: number = CHUNK_BYTES,
  share = false,
): Scanned<R> {
  try {
    const { file, info } = openRegular(path);
    try {
      // A file read whole for the run is scanned from those bytes, the same chunks, then whatever
      // follows them (a file grown since its stat).
      const whole = (share ? sharedText(path, file, info.size) : undefined) ?? NOTHING;
      let settled = false;
      for (let at = 0; at < whole.length && !settled; at += chunkBytes) {
        settled = scanner.push(whole.subarray(at, at + chunkBytes));
      }
      if (!settled) streamFile(file, info.size, chunkBytes, (chunk) => scanner.push(chunk));
      return { ok: true, size: info.size, result: scanner.finish() };
    } finally {
      file.close();
    }
  } catch (e) {
    return { ok: false, reason: reasonOf(e) };
  }
}
