/**
 * Atomic file replacement: write a temp file in the destination's directory, fsync it, rename it over
 * the destination. A reader (or a crash) sees the old bytes or the new bytes, never a torn file.
 *
 * @module
 */

import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname } from "node:path";
import process from "node:process";
import { faultPoint } from "./faults.ts";

/** Options for {@linkcode writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Mode of the new file (default `0o600`: owner-only). */
  mode?: number;
  /** Throw instead of replacing when the destination is a symbolic link (default `true`). */
  refuseSymlink?: boolean;
  /** Apply `mode` exactly (`fchmod`), not filtered by the umask (default `false`). */
  exactMode?: boolean;
  /**
   * fsync the directory after the rename (default `true`). Batch writers pass `false` and call
   * {@linkcode fsyncDirectory} once per directory when the batch is done.
   */
  syncDirectory?: boolean;
}

/** Thrown by {@linkcode writeFileAtomic} when the destination is a symbolic link. */
export class SymlinkRefusedError extends Error {
  /** The refused destination. */
  readonly path: string;
  /** Create the error for `path`. */
  constructor(path: string) {
    super(`refusing to replace symbolic link: ${path}`);
    this.name = "SymlinkRefusedError";
    this.path = path;
  }
}

/** The name prefix of temp files written for `path`; used to sweep leftovers of a killed writer. */
export function tempPrefix(path: string): string {
  return `.${basename(path)}.ctxkit-tmp-`;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Replace `path` with `data` atomically (temp file + fsync + rename in the same directory).
 *
 * @example
 * ```ts ignore
 * import { writeFileAtomic } from "./atomic.ts";
 * writeFileAtomic("/tmp/state.json", '{"ok":true}\n', { mode: 0o600 });
 * ```
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): void {
  const { mode = 0o600, refuseSymlink = true, exactMode = false, syncDirectory = true } = options;
  if (refuseSymlink && isSymlink(path)) throw new SymlinkRefusedError(path);
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const temp = `${dirname(path)}/${tempPrefix(path)}${Deno.pid}-${randomBytes(6).toString("hex")}`;
  const fd = openSync(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    mode,
  );
  try {
    if (exactMode) fchmodSync(fd, mode);
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    try {
      unlinkSync(temp);
    } catch { /* already gone */ }
    throw e;
  }
  closeSync(fd);
  try {
    if (refuseSymlink && isSymlink(path)) throw new SymlinkRefusedError(path);
    faultPoint("atomic.before-rename");
    renameSync(temp, path);
  } catch (e) {
    try {
      unlinkSync(temp);
    } catch { /* already gone */ }
    throw e;
  }
  faultPoint("atomic.after-rename");
  if (syncDirectory) fsyncDirectory(dirname(path));
  const dir = dirname(path);
  if (!swept.has(dir)) {
    swept.add(dir);
    sweepDeadTemps(dir);
  }
}

/** Directories already swept by this process: leftovers predate it, so once each is enough. */
const swept = new Set<string>();

/** A leftover temp file this old is stale whoever wrote it (prose's flag temps use the same rule). */
export const STALE_TEMP_MS = 60_000;

/**
 * True only when process `pid` is known not to exist (signal 0 says ESRCH). Needs the run
 * permission, which is queried first so a narrow grant never prompts: without it nothing is known.
 */
function processGone(pid: number): boolean {
  try {
    if (Deno.permissions.querySync({ name: "run" }).state !== "granted") return false;
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as { code?: string }).code === "ESRCH";
  }
}

/**
 * Delete the temp files in `dir` left by writers that were killed between the temp write and the
 * rename, so a crash never leaves ctxkit litter next to a user's file for good: those whose writer
 * pid is gone (when the run permission lets us ask) and any older than {@linkcode STALE_TEMP_MS}.
 * Only regular files named exactly like {@linkcode writeFileAtomic}'s temps are touched (any
 * destination's, never our own pid's, never links); returns how many were removed.
 */
export function sweepDeadTemps(dir: string, now: number = Date.now()): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let count = 0;
  for (const name of names) {
    const m = /^\..*\.ctxkit-tmp-([0-9]+)-[0-9a-f]{12}$/s.exec(name);
    if (m === null || Number(m[1]) === Deno.pid) continue;
    try {
      const st = lstatSync(`${dir}/${name}`);
      if (!st.isFile()) continue;
      if (now - st.mtimeMs <= STALE_TEMP_MS && !processGone(Number(m[1]))) continue;
      unlinkSync(`${dir}/${name}`);
      count++;
    } catch { /* raced with another sweeper, or not ours to remove */ }
  }
  return count;
}

/** fsync a directory so a rename in it survives a crash; ignored where the OS refuses. */
export function fsyncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch { /* not supported here: the rename is still atomic */ }
}
