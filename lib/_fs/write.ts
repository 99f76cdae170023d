/**
 * Every write ctxkit makes goes through this module: a complete write loop, an exclusive create
 * (never through a link, never over anything), and the atomic replace (temp file in the same
 * directory, fsync, rename), plus the sweep of temp files a killed writer left behind.
 * Rules: `references/reliability.md#atomic-writes`.
 *
 * @module
 */

import { errorCode } from "./errors.ts";
import {
  CHUNK_BYTES,
  hashFrom,
  openRegular,
  ReadRefusedError,
  sameFileState,
  settledBefore,
  streamFile,
} from "./read.ts";
import { Sha256 } from "./sha256.ts";
import { faultPoint } from "../faults.ts";
import { randomHex } from "../random.ts";
import { sweepTemps } from "./sweep.ts";

export { STALE_TEMP_MS, type SweepOptions, sweepTemps } from "./sweep.ts";

/** What a write put on disk. */
export interface Written {
  /** Bytes written. */
  size: number;
  /** Lowercase hex SHA-256 of those bytes. */
  sha256: string;
  /** For a copy: the source file as it was copied (stat taken on its descriptor). */
  source?: Deno.FileInfo;
}

/**
 * Content to write: text (UTF-8), bytes, or the bytes of an existing regular file, copied in
 * chunks from one descriptor opened without following a link at `copyFrom` — with `sameAs`, only
 * when the file opened is that one (same device and inode), else `ReadRefusedError` `changed`.
 * With `prove`, the copy is proven to be the file as it was: its size and change times are the
 * same on the descriptor after the copy as before, and when those times are too recent to prove
 * anything the file is hashed again and must give the same bytes; else `ReadRefusedError`
 * `modified` (`references/context-guard.md#text-guard-snapshot`).
 */
export type Content =
  | string
  | Uint8Array
  | {
    readonly copyFrom: string;
    readonly sameAs?: Pick<Deno.FileInfo, "dev" | "ino">;
    /** Prove the copy is the file as it was (a snapshot of a file someone may be saving). */
    readonly prove?: boolean;
  };

/** Write all of `bytes` to `file` (short writes continue where they stopped). */
export function writeAll(file: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) offset += file.writeSync(bytes.subarray(offset));
}

/** Write `content` to the open `file`, hashing as it goes. */
function writeContent(file: Deno.FsFile, content: Content): Written {
  if (typeof content === "string") {
    const bytes = new TextEncoder().encode(content);
    writeAll(file, bytes);
    return writtenText(bytes);
  }
  const hash = new Sha256();
  if (content instanceof Uint8Array) {
    writeAll(file, content);
    return { size: content.length, sha256: hash.update(content).hex() };
  }
  // Never through a link: the copy is of the file that was checked, not of whatever the path
  // names by now (references/context-guard.md#text-guard-snapshot).
  const since = Date.now();
  const { file: src, info } = openRegular(content.copyFrom, { follow: false });
  try {
    const want = content.sameAs;
    if (want !== undefined && (info.dev !== want.dev || info.ino !== want.ino)) {
      throw new ReadRefusedError(content.copyFrom, "changed");
    }
    let size = 0;
    streamFile(src, info.size, CHUNK_BYTES, (chunk) => {
      writeAll(file, chunk);
      hash.update(chunk);
      size += chunk.length;
      return false;
    });
    const sha256 = hash.hex();
    if (!content.prove) return { size, sha256, source: info };
    const unchanged = () => size === info.size && sameFileState(info, src.statSync());
    if (!unchanged()) throw new ReadRefusedError(content.copyFrom, "modified");
    if (!settledBefore(info, since)) {
      // Changed within a timestamp tick of the copy: its times cannot tell, its bytes can.
      src.seekSync(0, Deno.SeekMode.Start);
      const again = hashFrom(src, info.size);
      if (again.sha256 !== sha256 || !unchanged()) {
        throw new ReadRefusedError(content.copyFrom, "modified");
      }
    }
    return { size, sha256, source: info };
  } finally {
    src.close();
  }
}

/**
 * What writing text put on disk, its digest computed when first read: most text writers (a lock,
 * a flag) never ask, and hashing costs a cold start of the SHA-256 code on a hook's path. Only for
 * bytes this module encoded itself, which nothing else can change.
 */
function writtenText(bytes: Uint8Array): Written {
  let digest: string | undefined;
  return {
    size: bytes.length,
    get sha256(): string {
      return digest ??= new Sha256().update(bytes).hex();
    },
  };
}

function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch { /* already gone */ }
}

/**
 * Create a new file exclusively (`O_CREAT|O_EXCL`: never through a planted link, never over
 * anything) with `mode` (exactly, or minus the umask when `exactMode` is false), write `content`
 * and fsync it (unless `sync` is false: a batch writer then syncs the whole batch with
 * {@linkcode fsyncFiles} once it is written). The caller syncs the directory. Throws
 * `AlreadyExists` when anything is at `path`.
 */
export function createFileExclusive(
  path: string,
  content: Content,
  mode: number,
  exactMode = true,
  sync = true,
): Written {
  const file = Deno.openSync(path, { write: true, createNew: true, mode });
  let written: Written;
  try {
    if (exactMode) Deno.chmodSync(path, mode);
    written = writeContent(file, content);
    if (sync) file.syncSync();
  } catch (e) {
    file.close();
    removeQuietly(path);
    throw e;
  }
  file.close();
  return written;
}

/**
 * How many syncs of a batch run at once: enough for the disk to serve them together (150 syncs take
 * as long at 32 as at 128, `references/startup.md#batched-fsync`), few enough that a batch of
 * thousands does not start thousands of threads.
 */
const SYNC_CONCURRENCY = 32;

/**
 * Run `sync` on every item with at most {@linkcode SYNC_CONCURRENCY} at a time, settle them all,
 * then throw the first failure (so no sync is still running when the caller moves on).
 */
async function syncEach<T>(items: readonly T[], sync: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await sync(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SYNC_CONCURRENCY, items.length) }, worker));
  if (failure !== undefined) throw failure.error;
}

/**
 * fsync `path` (a file that is no longer regular is skipped). Only the sync itself goes to Deno's
 * blocking pool: opening and inspecting a file on this disk cost microseconds, and each trip through
 * the pool costs more.
 */
async function syncPath(path: string, directory: boolean): Promise<void> {
  const file = Deno.openSync(path, { read: true });
  try {
    if (directory || file.statSync().isFile) await file.sync();
  } finally {
    file.close();
  }
}

/**
 * fsync every file of a batch already written and closed (each opened read-only; a path that is no
 * longer a regular file is skipped). Writing a batch first and syncing it after, the syncs running
 * concurrently, is much cheaper than syncing each file as it is written: one after another, each
 * waits for its own writes (`references/startup.md#batched-fsync`). Every sync settles before the
 * first failure is thrown.
 */
export function fsyncFiles(paths: Iterable<string>): Promise<void> {
  return syncEach([...paths], (path) => syncPath(path, false));
}

/**
 * {@linkcode fsyncDirectory} for a whole batch at once, concurrently; ignored where the OS
 * refuses, as there.
 */
export function fsyncDirectories(dirs: Iterable<string>): Promise<void> {
  return syncEach([...dirs], async (dir) => {
    try {
      await syncPath(dir, true);
    } catch { /* not supported here: the renames are still atomic */ }
  });
}

/** Options of {@linkcode writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the new file (default `0o600`: owner-only). */
  mode?: number;
  /** Apply `mode` exactly, not filtered by the umask (default `false`). */
  exactMode?: boolean;
  /**
   * fsync the directory after the rename (default `true`). Batch writers pass `false` and call
   * {@linkcode fsyncDirectory} once per directory when the batch is done.
   */
  syncDirectory?: boolean;
  /**
   * fsync the new file before the rename (default `true`). Only for records whose loss or
   * emptiness after a crash is harmless by design (the reader then refuses, the safe side).
   */
  syncFile?: boolean;
  /** Temp-file name prefix (default {@linkcode tempPrefix} of the destination). */
  tempPrefix?: string;
  /**
   * Called with the temp file's stat after it is written and synced, just before the rename; throw
   * to cancel (the temp file is removed).
   */
  beforeRename?: (temp: Deno.FileInfo) => void;
}

/** Thrown by {@linkcode writeFileAtomic} when the destination is a link or not a regular file. */
export class DestinationRefusedError extends Error {
  /** The refused destination. */
  readonly path: string;
  /** What is there. */
  readonly kind: "symlink" | "not-regular";
  /** Create the error. */
  constructor(path: string, kind: "symlink" | "not-regular") {
    super(
      kind === "symlink"
        ? `refusing to replace symbolic link: ${path}`
        : `refusing to replace a non-regular file: ${path}`,
    );
    this.name = "DestinationRefusedError";
    this.path = path;
    this.kind = kind;
  }
}

/** The longest file name (bytes) every POSIX file system here takes: Linux's `NAME_MAX`. */
export const NAME_MAX = 255;

/** What a temp name adds after its prefix: `<pid>-<16 hex>` (a pid has at most 10 digits). */
const TEMP_SUFFIX_MAX = 10 + 1 + 16;

/**
 * The name prefix of the temp files written for `path`; the sweep matches it:
 * `.<name>.ctxkit-tmp-`, or, when a temp name would not fit {@linkcode NAME_MAX} (a name of 215
 * bytes or more), `.<first 16 hex of the name's SHA-256>.ctxkit-tmp-` — short, in the same
 * directory, still one writer's own (`references/reliability.md#atomic-writes`).
 */
export function tempPrefix(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const prefix = `.${name}.ctxkit-tmp-`;
  // At most 3 UTF-8 bytes per UTF-16 unit: most names fit without being encoded.
  if (prefix.length * 3 + TEMP_SUFFIX_MAX <= NAME_MAX) return prefix;
  if (new TextEncoder().encode(prefix).length + TEMP_SUFFIX_MAX <= NAME_MAX) return prefix;
  return `.${new Sha256().update(new TextEncoder().encode(name)).hex().slice(0, 16)}.ctxkit-tmp-`;
}

function refuseDestination(path: string): void {
  let st: Deno.FileInfo;
  try {
    st = Deno.lstatSync(path);
  } catch (e) {
    if (errorCode(e) === "ENOENT") return;
    throw e;
  }
  if (st.isSymlink) throw new DestinationRefusedError(path, "symlink");
  if (!st.isFile) throw new DestinationRefusedError(path, "not-regular");
}

/**
 * A fresh temp-file path beside `path` (the same directory, so its rename is atomic) whose name
 * starts with `prefix`, which the sweep of leftovers matches: `<prefix><pid>-<random hex>`.
 */
export function tempPathFor(path: string, prefix: string = tempPrefix(path)): string {
  return `${dirOf(path)}/${prefix}${Deno.pid}-${randomHex(8)}`;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}

/**
 * Replace `path` with `content` atomically: a reader or a crash sees the old bytes or the new
 * ones, never a torn file, and a hard-linked destination is replaced, not written through. A link
 * or a non-regular file at `path` is refused ({@linkcode DestinationRefusedError}), checked before
 * and again right before the rename.
 *
 * @example
 * ```ts ignore
 * import { writeFileAtomic } from "./write.ts";
 * writeFileAtomic("/tmp/state.json", '{"ok":true}\n', { mode: 0o600 });
 * ```
 */
export function writeFileAtomic(
  path: string,
  content: Content,
  options: AtomicWriteOptions = {},
): Written {
  return writeTemp(path, content, options, options.syncFile !== false).commit();
}

/**
 * A replacement written to its temp file but not yet in place ({@linkcode prepareFileAtomic}):
 * `sync` it (or the whole batch with {@linkcode syncPendingWrites}), then `commit` (the rename),
 * or `abort` (the temp file is removed).
 */
export interface PendingWrite {
  /** The destination. */
  readonly path: string;
  /** What the temp file holds. */
  readonly written: Written;
  /** fsync the temp file (nothing to do when it was synced as it was written). */
  sync(): Promise<void>;
  /** Rename the temp file over the destination (checked again first); returns what was written. */
  commit(): Written;
  /** Remove the temp file. */
  abort(): void;
}

/**
 * Sync every temp file of a batch of {@linkcode prepareFileAtomic} writes at once, as
 * {@linkcode fsyncFiles} does; then each may be committed.
 */
export function syncPendingWrites(pending: Iterable<PendingWrite | undefined>): Promise<void> {
  const batch = [...pending].filter((p) => p !== undefined);
  return syncEach(batch, (p) => p.sync());
}

/**
 * The first half of {@linkcode writeFileAtomic}: refuse a link or non-regular destination, write
 * `content` to a new temp file beside it (not yet synced). A batch writes every temp file, syncs
 * them all at once, then commits them in order — the disk serves the syncs together
 * (`references/startup.md#batched-fsync`), and nothing is replaced when a write fails.
 */
export function prepareFileAtomic(
  path: string,
  content: Content,
  options: AtomicWriteOptions = {},
): PendingWrite {
  return writeTemp(path, content, options, false);
}

/**
 * Both halves' shared part: the temp file written and, with `syncNow` (a single write, not a
 * batch), synced on the descriptor that wrote it before it is closed — a batch closes each file
 * at once (thousands stay within the descriptor limit) and syncs it later by path.
 */
function writeTemp(
  path: string,
  content: Content,
  options: AtomicWriteOptions,
  syncNow: boolean,
): PendingWrite {
  const { mode = 0o600, exactMode = false, syncDirectory = true } = options;
  refuseDestination(path);
  const dir = dirOf(path);
  const temp = tempPathFor(path, options.tempPrefix ?? tempPrefix(path));
  const file = Deno.openSync(temp, { write: true, createNew: true, mode });
  let written: Written;
  try {
    if (exactMode) Deno.chmodSync(temp, mode);
    written = writeContent(file, content);
    if (syncNow) file.syncSync();
  } catch (e) {
    file.close();
    removeQuietly(temp);
    throw e;
  }
  file.close();
  const done = { value: false };
  const pending: PendingWrite = {
    path,
    written,
    sync: () => syncNow ? Promise.resolve() : syncPath(temp, false),
    abort: () => {
      if (!done.value) removeQuietly(temp);
      done.value = true;
    },
    commit: () => {
      try {
        options.beforeRename?.(Deno.lstatSync(temp));
        refuseDestination(path);
        faultPoint("atomic.before-rename");
        Deno.renameSync(temp, path);
      } catch (e) {
        removeQuietly(temp);
        done.value = true;
        throw e;
      }
      done.value = true;
      faultPoint("atomic.after-rename");
      if (syncDirectory) fsyncDirectory(dir);
      if (!swept.has(dir)) {
        swept.add(dir);
        sweepTemps(dir);
      }
      return written;
    },
  };
  return pending;
}

/** Directories already swept by this process: leftovers predate it, so once each is enough. */
const swept = new Set<string>();

/** fsync a directory so a rename in it survives a crash; ignored where the OS refuses. */
export function fsyncDirectory(dir: string): void {
  try {
    const file = Deno.openSync(dir, { read: true });
    try {
      file.syncSync();
    } finally {
      file.close();
    }
  } catch { /* not supported here: the rename is still atomic */ }
}
