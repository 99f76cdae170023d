/**
 * Reading files without surprises: a file is opened so that a FIFO never blocks (and is refused
 * once open, as is anything but a regular file), the opened file is checked to be the one that was
 * inspected, a read can be proven to be the file as it was, and large files are read in fixed-size
 * chunks or refused above a caller's limit. Rules: `references/context-guard.md#no-write-through-a-link`.
 *
 * @module
 */

import { errorCode, isPermissionError, isSandboxRefusal } from "./errors.ts";
import { Sha256 } from "./sha256.ts";

/** The chunk size of every streamed read, copy and hash. */
export const CHUNK_BYTES = 1 << 20;

/**
 * Why {@linkcode openRegular} refused a path: `changed` — the path names another file than the
 * one inspected; `modified` — the file changed while it was being read; `foreign` — the file is
 * not the expected owner's own (another user's, or writable by others).
 */
export type ReadRefusal =
  | "absent"
  | "not-regular"
  | "symlink"
  | "changed"
  | "modified"
  | "too-large"
  | "foreign";

/** A refusal in words, as an OS reason reads (`cannot read <path>: changed while reading`). */
export function refusalReason(refusal: ReadRefusal): string {
  switch (refusal) {
    case "absent":
      return "No such file or directory";
    case "not-regular":
      return "not a regular file";
    case "symlink":
      return "a symbolic link";
    case "changed":
    case "modified":
      return "changed while reading";
    case "too-large":
      return "too large";
    case "foreign":
      return "not the user's own file";
  }
}

/** Thrown by {@linkcode openRegular} and {@linkcode readRegular}. */
export class ReadRefusedError extends Error {
  /** The refused path. */
  readonly path: string;
  /** Why. */
  readonly refusal: ReadRefusal;
  /** The file's size when the refusal is `too-large`. */
  readonly size?: number;
  /** Create the error. */
  constructor(path: string, refusal: ReadRefusal, size?: number) {
    super(`cannot read ${path}: ${refusal}`);
    this.name = "ReadRefusedError";
    this.path = path;
    this.refusal = refusal;
    if (size !== undefined) this.size = size;
  }
}

/** Options of {@linkcode openRegular}. */
export interface OpenRegularOptions {
  /** Follow a link at `path` (default `true`); without it a link is refused. */
  follow?: boolean;
  /** Refuse files larger than this many bytes. */
  maxBytes?: number;
  /**
   * Refuse (`foreign`) a file this judges not to be the expected owner's own, judged on the opened
   * descriptor's stat (the guard's run files: `lib/_fs/owner.ts` `ownPrivate`).
   */
  ownedBy?: (info: Deno.FileInfo) => boolean;
}

let readWrite: boolean | undefined;

/**
 * Whether this process may open files for reading *and writing* (a full write grant): Deno offers
 * no `O_NONBLOCK`, and on Linux only an `O_RDWR` open of a FIFO never waits for a writer. Asked
 * once; never prompts.
 */
function mayOpenReadWrite(): boolean {
  if (readWrite === undefined) {
    try {
      readWrite = Deno.permissions.querySync({ name: "write" }).state === "granted";
    } catch {
      readWrite = false;
    }
  }
  return readWrite;
}

/** Errors after which a file is opened read-only instead: no write access to it here. */
function readOnlyHere(e: unknown): boolean {
  const code = errorCode(e);
  return code === "EACCES" || code === "EPERM" || code === "EROFS" || code === "ETXTBSY" ||
    isPermissionError(e) || isSandboxRefusal(e);
}

/**
 * Open `path` so that a FIFO put there never blocks: read-write where this process may write (a
 * FIFO opened so never waits; nothing is ever written), else read-only after a fresh look that
 * refuses anything but a regular file — a FIFO swapped in between that look and the open is the
 * one case left (`references/context-guard.md#no-write-through-a-link`). The caller checks the
 * opened descriptor's kind.
 */
function openForReading(path: string): Deno.FsFile {
  if (mayOpenReadWrite()) {
    try {
      return Deno.openSync(path, { read: true, write: true });
    } catch (e) {
      const code = errorCode(e);
      if (code === "EISDIR" || code === "ENXIO") throw new ReadRefusedError(path, "not-regular");
      if (!readOnlyHere(e)) throw e;
    }
  }
  if (!Deno.statSync(path).isFile) throw new ReadRefusedError(path, "not-regular");
  return Deno.openSync(path, { read: true });
}

/** True when `a` and `b` are the same inode. */
function sameInode(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return a.dev === b.dev && a.ino === b.ino;
}

/**
 * Open `path` for reading only when it is a regular file, judged on the opened descriptor (a FIFO
 * never blocks the open: {@linkcode openForReading}). Without `follow`, a link at `path` is refused
 * before anything is opened, and the file opened must be the file at `path` without a link — the
 * one inspected, or a regular file renamed over it since (what the path names now). OS errors
 * (ENOENT, EACCES…) are thrown as they come; refusals as {@linkcode ReadRefusedError}.
 */
export function openRegular(
  path: string,
  options: OpenRegularOptions = {},
): { file: Deno.FsFile; info: Deno.FileInfo } {
  const follow = options.follow ?? true;
  let looked: Deno.FileInfo | undefined;
  if (!follow) {
    looked = Deno.lstatSync(path);
    if (looked.isSymlink) throw new ReadRefusedError(path, "symlink");
    if (!looked.isFile) throw new ReadRefusedError(path, "not-regular");
  }
  const file = openForReading(path);
  try {
    const info = file.statSync();
    if (!info.isFile) throw new ReadRefusedError(path, "not-regular");
    if (looked !== undefined && !sameInode(info, looked)) {
      // Replaced since the look: accepted only when the path now names the opened file itself,
      // not through a link (a link swapped in is refused, as O_NOFOLLOW would).
      let now: Deno.FileInfo;
      try {
        now = Deno.lstatSync(path);
      } catch {
        throw new ReadRefusedError(path, "changed");
      }
      if (now.isSymlink) throw new ReadRefusedError(path, "symlink");
      if (!sameInode(now, info)) throw new ReadRefusedError(path, "changed");
    }
    if (options.ownedBy !== undefined && !options.ownedBy(info)) {
      throw new ReadRefusedError(path, "foreign");
    }
    if (options.maxBytes !== undefined && info.size > options.maxBytes) {
      throw new ReadRefusedError(path, "too-large", info.size);
    }
    return { file, info };
  } catch (e) {
    file.close();
    throw e;
  }
}

/**
 * A file changed less than this long before it was read may change again within the same tick of
 * its timestamps (coarse kernel clocks, file systems with 1–2 s timestamps): an unchanged stat then
 * proves nothing, and the bytes are compared instead (git's "racily clean" entries).
 */
export const SETTLE_MS = 3_000;

/** True when `info`'s change times lie more than {@linkcode SETTLE_MS} before `since` (epoch-ms). */
export function settledBefore(info: Deno.FileInfo, since: number): boolean {
  const changed = Math.max(info.mtime?.getTime() ?? since, info.ctime?.getTime() ?? since);
  return changed < since - SETTLE_MS;
}

/** True when `a` and `b` show the same file with the same size and change times. */
export function sameFileState(a: Deno.FileInfo, b: Deno.FileInfo): boolean {
  return sameInode(a, b) && a.size === b.size &&
    a.mtime?.getTime() === b.mtime?.getTime() && a.ctime?.getTime() === b.ctime?.getTime();
}

/** Read all of an open file from its current position (chunked; sized by `sizeHint`). */
export function readAllFrom(file: Deno.FsFile, sizeHint: number): Uint8Array {
  let buf = new Uint8Array(Math.max(sizeHint, 0) + 1);
  let got = 0;
  for (;;) {
    if (got === buf.length) {
      const bigger = new Uint8Array(buf.length * 2);
      bigger.set(buf);
      buf = bigger;
    }
    const n = file.readSync(buf.subarray(got));
    if (n === null || n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** Options of {@linkcode readRegular}. */
export interface ReadRegularOptions extends OpenRegularOptions {
  /**
   * Refuse (`modified`) bytes read while the file changed: its size and change times are compared
   * on the descriptor before and after the read (the gate's inputs,
   * `references/context-guard.md#the-token-gate`).
   */
  stable?: boolean;
}

/**
 * The bytes of the regular file at `path` (see {@linkcode openRegular}); with `maxBytes`, a larger
 * file is refused before it is read; with `stable`, bytes of a file that changed while it was read
 * are refused.
 */
export function readRegular(path: string, options: ReadRegularOptions = {}): Uint8Array {
  const { file, info } = openRegular(path, options);
  try {
    const bytes = readAllFrom(file, info.size);
    if (options.maxBytes !== undefined && bytes.length > options.maxBytes) {
      throw new ReadRefusedError(path, "too-large", bytes.length);
    }
    if (options.stable && (bytes.length !== info.size || !sameFileState(info, file.statSync()))) {
      throw new ReadRefusedError(path, "modified");
    }
    return bytes;
  } finally {
    file.close();
  }
}

/** Options of {@linkcode readHead}. */
export interface ReadHeadOptions extends Omit<OpenRegularOptions, "maxBytes"> {
  /** A buffer to read into when the bytes fit (see {@linkcode readUpTo}). */
  scratch?: Uint8Array;
}

/**
 * At most the first `limit` bytes of the regular file at `path`, its size, and the stat of the
 * file actually read (owner and mode checks belong on that one).
 */
export function readHead(
  path: string,
  limit: number,
  options: ReadHeadOptions = {},
): { bytes: Uint8Array; size: number; info: Deno.FileInfo } {
  const { file, info } = openRegular(path, options);
  try {
    const bytes = readUpTo(file, Math.min(limit, info.size), options.scratch);
    return { bytes, size: info.size, info };
  } finally {
    file.close();
  }
}

/**
 * At most `count` bytes of an open file from its position (fewer when it ends first). With
 * `scratch` at least `count` bytes long, they are read into its start — a view valid until the
 * caller reuses it — instead of a new buffer.
 */
export function readUpTo(file: Deno.FsFile, count: number, scratch?: Uint8Array): Uint8Array {
  const buf = scratch !== undefined && scratch.length >= count
    ? scratch.subarray(0, count)
    : new Uint8Array(count);
  let got = 0;
  while (got < buf.length) {
    const n = file.readSync(buf.subarray(got));
    if (n === null || n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/**
 * Read an open file from its position in chunks of at most `chunkBytes` (one buffer, reused, no
 * larger than the file and one byte: a 1 KB file never costs a 1 MiB buffer), handing each to
 * `onChunk` until it returns true or the file ends.
 */
export function streamFile(
  file: Deno.FsFile,
  sizeHint: number,
  chunkBytes: number,
  onChunk: (chunk: Uint8Array) => boolean,
): void {
  const buf = new Uint8Array(Math.max(1, Math.min(chunkBytes, sizeHint + 1)));
  for (;;) {
    const n = file.readSync(buf);
    if (n === null || n === 0) return;
    if (onChunk(buf.subarray(0, n))) return;
  }
}

/** SHA-256 (lowercase hex) and size of the regular file at `path`, read in chunks. */
export function hashFile(
  path: string,
  options: Omit<OpenRegularOptions, "maxBytes"> = {},
): { sha256: string; size: number } {
  const { sha256, size } = hashRegular(path, options);
  return { sha256, size };
}

/**
 * {@linkcode hashFile}, also returning the stat of the file actually hashed (taken on its
 * descriptor before reading): what a later check compares the path against.
 */
export function hashRegular(
  path: string,
  options: Omit<OpenRegularOptions, "maxBytes"> = {},
): { sha256: string; size: number; info: Deno.FileInfo } {
  const { file, info } = openRegular(path, options);
  try {
    return { ...hashFrom(file, info.size), info };
  } finally {
    file.close();
  }
}

/** SHA-256 (lowercase hex) and size of an open file from its current position, in chunks. */
export function hashFrom(file: Deno.FsFile, sizeHint: number): { sha256: string; size: number } {
  const hash = new Sha256();
  let size = 0;
  streamFile(file, sizeHint, CHUNK_BYTES, (chunk) => {
    hash.update(chunk);
    size += chunk.length;
    return false;
  });
  return { sha256: hash.hex(), size };
}
