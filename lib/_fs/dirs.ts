/**
 * Directories: owner-only creation that never passes through a link below a trusted base, and the
 * sorted listing of the regular files below a directory.
 *
 * @module
 */

import { errorCode, rethrowPermission } from "./errors.ts";
import { sortUtf8 } from "../sort.ts";

/** Thrown by {@linkcode makePrivateDirs} when a component below the trusted base is a link. */
export class LinkedComponentError extends Error {
  /** The linked component. */
  readonly path: string;
  /** Create the error. */
  constructor(path: string) {
    super(`symbolic-link path component: ${path}`);
    this.name = "LinkedComponentError";
    this.path = path;
  }
}

/**
 * Create `path` and its missing ancestors as owner-only (`0700`) directories. Every existing
 * component at or below `trustedBase` must be a real directory, not a link
 * ({@linkcode LinkedComponentError}); components above it may be links (a dotfiles `~/.claude`).
 * Returns the directories made, outermost first: the caller syncs each into its parent
 * ({@linkcode parentsOf}) before it reports success.
 */
export function makePrivateDirs(path: string, trustedBase?: string): string[] {
  const components: string[] = [];
  let at = path.startsWith("/") ? "" : ".";
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    at = at === "" ? `/${part}` : `${at}/${part}`;
    components.push(at);
  }
  // An existing trusted base has all its ancestors, so the walk starts at it: above a run dir lie
  // half the components of every draft record's directory.
  const made: string[] = [];
  if (components.length === 0) return made;
  const base = trustedBase === undefined ? -1 : components.indexOf(trustedBase);
  let i = 0;
  let st = base > 0 ? lstatOrUndefined(components[base]) : undefined;
  if (st !== undefined) i = base;
  else st = lstatOrUndefined(components[0]);
  for (;;) {
    const at = components[i];
    if (st === undefined) {
      try {
        Deno.mkdirSync(at, { mode: 0o700 });
        made.push(at);
        Deno.chmodSync(at, 0o700);
      } catch (e) {
        if (errorCode(e) !== "EEXIST") throw e;
        // Made by someone else since the lstat: what they made is checked like any existing one.
        st = lstatOrUndefined(at);
      }
    }
    if (st?.isSymlink && trustedBase !== undefined && isAtOrBelow(at, trustedBase)) {
      throw new LinkedComponentError(at);
    }
    if (++i >= components.length) return made;
    st = lstatOrUndefined(components[i]);
  }
}

function isAtOrBelow(path: string, base: string): boolean {
  return path === base || path.startsWith(`${base}/`);
}

function lstatOrUndefined(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    rethrowPermission(e);
    return undefined;
  }
}

/** Every regular file (links excluded) below `dir`, relative, in C-locale order; none if absent. */
export function listRegularFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string, rel: string): void => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(abs)];
    } catch (e) {
      rethrowPermission(e);
      return;
    }
    for (const entry of entries) {
      const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory) walk(`${abs}/${entry.name}`, childRel);
      else if (entry.isFile) out.push(childRel);
    }
  };
  walk(dir, "");
  return sortUtf8(out);
}

/**
 * Create the missing directories of `path` below `base` one at a time with `mode` (default `0777`,
 * minus the umask: ordinary project directories, not owner-only ones), never through a link: every
 * component strictly below `base`, found or made, must be a real directory
 * ({@linkcode LinkedComponentError} for a link; an `ENOTDIR` error for anything else). `base` must
 * exist. Returns the directories made, outermost first (a failed batch removes them again).
 */
export function makeDirsBelow(base: string, path: string, mode = 0o777): string[] {
  const prefix = base === "/" ? "/" : `${base}/`;
  if (!path.startsWith(prefix)) return [];
  const made: string[] = [];
  let at = base === "/" ? "" : base;
  for (const part of path.slice(prefix.length).split("/")) {
    if (part === "" || part === ".") continue;
    at = `${at}/${part}`;
    let st = lstatOrUndefined(at);
    if (st === undefined) {
      try {
        Deno.mkdirSync(at, { mode });
        made.push(at);
      } catch (e) {
        if (errorCode(e) !== "EEXIST") throw e;
      }
      st = lstatOrUndefined(at); // what is there now, whoever made it
    }
    if (st?.isSymlink) throw new LinkedComponentError(at);
    if (st !== undefined && !st.isDirectory) {
      throw Object.assign(new Error(`Not a directory: ${at}`), { code: "ENOTDIR" });
    }
  }
  return made;
}

/**
 * The parent of each directory in `made`: what must be synced for those directories to survive a
 * crash (`references/reliability.md#atomic-writes`).
 */
export function parentsOf(made: Iterable<string>): Set<string> {
  const parents = new Set<string>();
  for (const dir of made) {
    const i = dir.lastIndexOf("/");
    parents.add(i <= 0 ? (dir.startsWith("/") ? "/" : ".") : dir.slice(0, i));
  }
  return parents;
}

/** Remove the directories {@linkcode makeDirsBelow} made, innermost first, where still empty. */
export function removeMadeDirs(made: readonly string[]): void {
  for (const dir of [...made].reverse()) {
    try {
      Deno.removeSync(dir);
    } catch { /* no longer empty, or gone: leave it */ }
  }
}
