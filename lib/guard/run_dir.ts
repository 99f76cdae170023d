/**
 * The layout of a run dir (`references/context-guard.md#backups-and-run-dirs`): `orig/<rel>`
 * snapshot copies, `draft/<rel>.sha256` ownership records, owner-only directories, and the rule
 * that a run dir and everything below it are real directories, never links.
 *
 * @module
 */

import { LinkedComponentError, makePrivateDirs } from "../_fs/dirs.ts";
import { isSandboxRefusal } from "../_fs/errors.ts";
import { isDirectoryFollow, isSymlink, statOrUndefined } from "../_fs/inspect.ts";
import { ownPrivate } from "../_fs/owner.ts";
import {
  type AtomicWriteOptions,
  type Content,
  DestinationRefusedError,
  NAME_MAX,
  type PendingWrite,
  prepareFileAtomic,
  writeFileAtomic,
  type Written,
} from "../_fs/write.ts";
import { Sha256 } from "../_fs/sha256.ts";
import { dirname, processCwd } from "../paths.ts";
import { text } from "../text.ts";
import { PathRefusedError, sandboxRefused, SnapshotMissingError } from "./errors.ts";
import { requireTrustedRunDir, runOwner } from "./run_owner.ts";

/** Path of the snapshot copy of `rel` in `runDir`. */
export function snapshotCopyPath(runDir: string, rel: string): string {
  return `${runDir}/orig/${rel}`;
}

/**
 * Path of the draft record of `rel` in `runDir`: `draft/<rel>.sha256`, or, when that last name
 * would exceed `NAME_MAX` (a name of 249 bytes or more), `draft/<dir>/<SHA-256 of the
 * name>.sha256-long` — it fits any valid name and can never be another file's record, which always
 * ends `.sha256` (`references/context-guard.md#draft-records`).
 */
export function draftRecordPath(runDir: string, rel: string): string {
  const slash = rel.lastIndexOf("/");
  const name = rel.slice(slash + 1);
  // At most 3 UTF-8 bytes per UTF-16 unit: most names fit without being encoded.
  if (name.length * 3 + 7 <= NAME_MAX) return `${runDir}/draft/${rel}.sha256`;
  const encoded = new TextEncoder().encode(name);
  if (encoded.length + 7 <= NAME_MAX) return `${runDir}/draft/${rel}.sha256`;
  const dir = slash < 0 ? "" : `${rel.slice(0, slash)}/`;
  return `${runDir}/draft/${dir}${new Sha256().update(encoded).hex()}.sha256-long`;
}

/**
 * The absolute form of a run dir as given (`references/context-guard.md#the-manifest`): a relative
 * one joined to the physical cwd — the directory the kernel resolved it from, so `..` keeps its
 * meaning — with empty and `.` components and trailing `/`s dropped. What a manifest records, and
 * the key run dirs are compared by, so `D`, `D/` and `./D` are one run dir.
 */
export function absoluteRunDir(dir: string, cwd?: string): string {
  const abs = dir.startsWith("/") ? dir : `${cwd ?? processCwd()}/${dir}`;
  return `/${abs.split("/").filter((p) => p !== "" && p !== ".").join("/")}`;
}

/** The `no snapshot dir: <run dir>/orig` failure. */
export function noSnapshotDir(runDir: string): SnapshotMissingError {
  return new SnapshotMissingError(
    "no-snapshot-dir",
    runDir,
    text`no snapshot dir: ${`${runDir}/orig`}`,
  );
}

/**
 * A run dir and its `orig/` are real directories, never links (a link there would make the guard
 * read copies from, and write records to, wherever it points): refuse one that is a link. And a
 * run dir is the invoking user's own, never reachable through a folder another user can write
 * (`❌ untrusted run dir <D>: <reason>`, `references/context-guard.md#whose-runs-are-trusted`).
 */
export function requireRunDir(runDir: string): void {
  for (const path of [runDir.length > 1 ? runDir.replace(/\/+$/, "") : runDir, `${runDir}/orig`]) {
    if (isSymlink(path)) throw linkedRunPath(path);
  }
  requireTrustedRunDir(runDir);
}

/**
 * {@linkcode requireRunDir}, then {@linkcode noSnapshotDir} unless `<runDir>/orig` is a
 * directory.
 */
export function requireSnapshotDir(runDir: string): void {
  requireRunDir(runDir);
  if (!isDirectoryFollow(`${runDir}/orig`)) throw noSnapshotDir(runDir);
}

/** The `symbolic-link snapshot path: <component>` refusal. */
export function linkedRunPath(component: string): PathRefusedError {
  return new PathRefusedError(
    component,
    "linked-component",
    text`symbolic-link snapshot path: ${component}`,
  );
}

/**
 * Create `dir` and its missing ancestors owner-only (`0700`); an existing link at or below
 * `trustedBase` is refused ({@linkcode linkedRunPath}). Returns the directories made (the caller
 * syncs their parents before it reports success).
 */
export function makeRunDirs(dir: string, trustedBase?: string): string[] {
  try {
    return makePrivateDirs(dir, trustedBase);
  } catch (e) {
    if (e instanceof LinkedComponentError) throw linkedRunPath(e.path);
    if (isSandboxRefusal(e)) throw sandboxRefused(dir, "create");
    throw e;
  }
}

/**
 * True when every directory between `base` (exclusive) and `base/rel`'s parent is a real
 * directory, not a link, and the invoking user's own that nobody else may write: copies inside a
 * run dir are only trusted along such a chain.
 */
export function linkFreeChain(base: string, rel: string): boolean {
  const who = runOwner();
  if (who === undefined) return false;
  let at = base;
  for (const part of rel.split("/").slice(0, -1)) {
    at = `${at}/${part}`;
    try {
      const st = Deno.lstatSync(at);
      if (!st.isDirectory || !ownPrivate(st, who)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/**
 * True when `base/rel` is a regular file of the invoking user's own, nobody else may write,
 * reached through such real directories only ({@linkcode linkFreeChain}).
 */
export function isTrustedCopy(base: string, rel: string): boolean {
  if (!linkFreeChain(base, rel)) return false;
  const st = statOrUndefined(`${base}/${rel}`);
  const who = runOwner();
  return st !== undefined && st.isFile && who !== undefined && ownPrivate(st, who);
}

/**
 * {@linkcode writeFileAtomic} for the guard: a link or a non-regular file at the destination is a
 * {@linkcode PathRefusedError} (exit 2), never an internal error.
 */
export function replaceFile(path: string, content: Content, options: AtomicWriteOptions): Written {
  return refusedAs(path, () => writeFileAtomic(path, content, options));
}

/**
 * {@linkcode prepareFileAtomic} for the guard: the destination refusals, at either step, are
 * {@linkcode PathRefusedError}s as with {@linkcode replaceFile}.
 */
export function prepareReplace(
  path: string,
  content: Content,
  options: AtomicWriteOptions,
): PendingWrite {
  const pending = refusedAs(path, () => prepareFileAtomic(path, content, options));
  return { ...pending, commit: () => refusedAs(path, pending.commit) };
}

function refusedAs<T>(path: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (!(e instanceof DestinationRefusedError)) throw e;
    throw e.kind === "symlink"
      ? new PathRefusedError(path, "symlink", text`refusing to replace symbolic link: ${path}`)
      : new PathRefusedError(
        path,
        "special-file",
        text`refusing to replace a non-regular file: ${path}`,
      );
  }
}

/** Why a path may not be written. */
export interface WriteProblem {
  /** The component concerned. */
  at: string;
  /** A link, a component that is not a directory, or a non-regular file at the path itself. */
  problem: "symlink" | "not-directory" | "special-file";
}

/**
 * The first reason not to write `path` (absolute, lexically below `root`, or `root`'s own child):
 * a link or a non-directory on any component strictly between `root` and `path`, or a link or a
 * non-regular file (FIFO, device, socket, directory) at `path`. `undefined` when writing is safe.
 */
export function writePathProblem(root: string, path: string): WriteProblem | undefined {
  const prefix = root === "/" ? "/" : `${root}/`;
  const rest = path.startsWith(prefix)
    ? path.slice(prefix.length)
    : path.slice(path.lastIndexOf("/") + 1);
  const parts = rest.split("/");
  let at = path.startsWith(prefix) ? (root === "/" ? "" : root) : dirname(path);
  for (let i = 0; i < parts.length; i++) {
    at = `${at}/${parts[i]}`;
    let st: Deno.FileInfo;
    try {
      st = Deno.lstatSync(at);
    } catch {
      return undefined; // absent from here on: created, never through a link
    }
    if (st.isSymlink) return { at, problem: "symlink" };
    const last = i === parts.length - 1;
    if (last && !st.isFile) return { at, problem: "special-file" };
    if (!last && !st.isDirectory) return { at, problem: "not-directory" };
  }
  return undefined;
}

/** The first component of `abs` strictly below `root` (and above the file) that is a link. */
export function linkedDirBelow(root: string, abs: string): string | undefined {
  const prefix = root === "/" ? "/" : `${root}/`;
  if (!abs.startsWith(prefix)) return undefined;
  const parts = abs.slice(prefix.length).split("/").slice(0, -1);
  let at = root === "/" ? "" : root;
  for (const part of parts) {
    at = `${at}/${part}`;
    if (isSymlink(at)) return at;
  }
  return undefined;
}
