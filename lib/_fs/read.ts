/**
 * Reading files without surprises: the kind is checked before anything is opened (a FIFO or a
 * device is never opened), the opened file is checked to be the one that was inspected, and large
 * files are read in fixed-size chunks or refused above a caller's limit.
 *
 * @module
 */

import { Sha256 } from "./sha256.ts";

/** The chunk size of every streamed read, copy and hash. */
export const CHUNK_BYTES = 1 << 20;

/** Why {@linkcode openRegular} refused a path. */
export type ReadRefusal = "absent" | "not-regular" | "symlink" | "changed" | "too-large";

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
}

/**
 * Open `path` for reading only when it is a regular file (after links, unless `follow` is false),
 * and check after opening that the file opened is the one inspected (same device and inode). OS
 * errors (ENOENT, EACCES…) are thrown as they come; refusals as {@linkcode ReadRefusedError}.
 */
export function openRegular(
  path: string,
  options: OpenRegularOptions = {},
): { file: Deno.FsFile; info: Deno.FileInfo } {
  const follow = options.follow ?? true;
  const before = follow ? Deno.statSync(path) : Deno.lstatSync(path);
  if (before.isSymlink) throw new ReadRefusedError(path, "symlink");
  if (!before.isFile) throw new ReadRefusedError(path, "not-regular");
  if (options.maxBytes !== undefined && before.size > options.maxBytes) {
    throw new ReadRefusedError(path, "too-large", before.size);
  }
  const file = Deno.openSync(path, { read: true });
  const info = file.statSync();
  if (!info.isFile || info.dev !== before.dev || info.ino !== before.ino) {
    file.close();
    throw new ReadRefusedError(path, "changed");
  }
  return { file, info };
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

/**
 * The bytes of the regular file at `path` (see {@linkcode openRegular}); with `maxBytes`, a larger
 * file is refused before it is read.
 */
export function readRegular(path: string, options: OpenRegularOptions = {}): Uint8Array {
  const { file, info } = openRegular(path, options);
  try {
    const bytes = readAllFrom(file, info.size);
    if (options.maxBytes !== undefined && bytes.length > options.maxBytes) {
      throw new ReadRefusedError(path, "too-large", bytes.length);
    }
    return bytes;
  } finally {
    file.close();
  }
}

/**
 * At most the first `limit` bytes of the regular file at `path`, its size, and the stat of the
 * file actually read (owner and mode checks belong on that one).
 */
export function readHead(
  path: string,
  limit: number,
  options: Omit<OpenRegularOptions, "maxBytes"> = {},
): { bytes: Uint8Array; size: number; info: Deno.FileInfo } {
  const { file, info } = openRegular(path, options);
  try {
    const buf = new Uint8Array(Math.min(limit, info.size));
    let got = 0;
    while (got < buf.length) {
      const n = file.readSync(buf.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    return { bytes: buf.subarray(0, got), size: info.size, info };
  } finally {
    file.close();
  }
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
    const hash = new Sha256();
    let size = 0;
    streamFile(file, info.size, CHUNK_BYTES, (chunk) => {
      hash.update(chunk);
      size += chunk.length;
      return false;
    });
    return { sha256: hash.hex(), size, info };
  } finally {
    file.close();
  }
}
