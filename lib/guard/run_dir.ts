/**
 * The layout of a run dir (`references/context-guard.md#backups-and-run-dirs`): `orig/<rel>`
 * snapshot copies, `draft/<rel>.sha256` ownership records, owner-only directories, and the rule
 * that a run dir and everything below it are real directories, never links.
 *
 * @module
 */

import { LinkedComponentError, makePrivateDirs } from "../_fs/dirs.ts";
import { isDirectoryFollow, isRegularNoFollow } from "../_fs/inspect.ts";
import {
  type AtomicWriteOptions,
  type Content,
  DestinationRefusedError,
  writeFileAtomic,
  type Written,
} from "../_fs/write.ts";
import { text } from "../text.ts";
import { PathRefusedError, SnapshotMissingError } from "./errors.ts";

/** Path of the snapshot copy of `rel` in `runDir`. */
export function snapshotCopyPath(runDir: string, rel: string): string {
  return `${runDir}/orig/${rel}`;
}

/** Path of the draft record of `rel` in `runDir`. */
export function draftRecordPath(runDir: string, rel: string): string {
  return `${runDir}/draft/${rel}.sha256`;
}

/** The `no snapshot dir: <run dir>/orig` failure. */
export function noSnapshotDir(runDir: string): SnapshotMissingError {
  return new SnapshotMissingError(
    "no-snapshot-dir",
    runDir,
    text`no snapshot dir: ${`${runDir}/orig`}`,
  );
}

/** Throw {@linkcode noSnapshotDir} unless `<runDir>/orig` is a directory (links followed). */
export function requireSnapshotDir(runDir: string): void {
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
 * `trustedBase` is refused ({@linkcode linkedRunPath}).
 */
export function makeRunDirs(dir: string, trustedBase?: string): void {
  try {
    makePrivateDirs(dir, trustedBase);
  } catch (e) {
    if (e instanceof LinkedComponentError) throw linkedRunPath(e.path);
    throw e;
  }
}

/**
 * True when every directory between `base` (exclusive) and `base/rel`'s parent is a real
 * directory, not a link: copies inside a run dir are only trusted along a link-free chain.
 */
export function linkFreeChain(base: string, rel: string): boolean {
  let at = base;
  for (const part of rel.split("/").slice(0, -1)) {
    at = `${at}/${part}`;
    try {
      if (!Deno.lstatSync(at).isDirectory) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** True when `base/rel` is a regular file reached through real directories only. */
export function isTrustedCopy(base: string, rel: string): boolean {
  return linkFreeChain(base, rel) && isRegularNoFollow(`${base}/${rel}`);
}

/**
 * {@linkcode writeFileAtomic} for the guard: a link or a non-regular file at the destination is a
 * {@linkcode PathRefusedError} (exit 2), never an internal error.
 */
export function replaceFile(path: string, content: Content, options: AtomicWriteOptions): Written {
  try {
    return writeFileAtomic(path, content, options);
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
