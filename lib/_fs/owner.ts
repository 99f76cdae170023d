/**
 * Whose a file is, and who else could change it: the user this process runs as, and the rule that
 * decides whether a path can be trusted as that user's own — owned by the user (or root), never
 * reachable through a folder another user can write. Rules:
 * `references/context-guard.md#whose-runs-are-trusted`.
 *
 * @module
 */

import { isPermissionError } from "./errors.ts";

/** The user a process runs as: its uid and primary gid. */
export interface Invoker {
  /** The effective uid. */
  uid: number;
  /** The primary gid (a directory of this group is not "writable by others"). */
  gid: number;
}

let invoker: Invoker | undefined | null = null;

/**
 * The user this process runs as: `Deno.uid()`/`Deno.gid()` where the `sys` grant allows, else the
 * owner of a file the process creates (and removes) in the temp directory, else the owner of
 * `$HOME`; `undefined` when none can be told. Asked once per process.
 */
export function invokingUser(): Invoker | undefined {
  if (invoker === null) invoker = askUid() ?? probeUid() ?? homeOwner();
  return invoker;
}

function askUid(): Invoker | undefined {
  try {
    const uid = Deno.uid();
    const gid = Deno.gid();
    return uid === null || gid === null ? undefined : { uid, gid };
  } catch {
    return undefined;
  }
}

function probeUid(): Invoker | undefined {
  let path: string | undefined;
  try {
    path = Deno.makeTempFileSync({ prefix: "ctxkit-uid-" });
    const st = Deno.lstatSync(path);
    return st.uid === null || st.gid === null ? undefined : { uid: st.uid, gid: st.gid };
  } catch {
    return undefined;
  } finally {
    if (path !== undefined) {
      try {
        Deno.removeSync(path);
      } catch { /* gone already */ }
    }
  }
}

function homeOwner(): Invoker | undefined {
  try {
    const home = Deno.env.get("HOME");
    if (home === undefined || home === "") return undefined;
    const st = Deno.statSync(home);
    return st.uid === null || st.gid === null ? undefined : { uid: st.uid, gid: st.gid };
  } catch (e) {
    if (isPermissionError(e)) return undefined;
    return undefined;
  }
}

/**
 * True when a user other than `who` may write into a directory (or a file) with `info`: its mode
 * lets others write, or its group does and that group is not `who`'s own primary group (a
 * user-private group under umask 002 is the user's alone). Its owner is checked separately.
 */
export function writableByOthers(info: Deno.FileInfo, who: Invoker): boolean {
  const mode = info.mode ?? 0;
  if ((mode & 0o002) !== 0) return true;
  return (mode & 0o020) !== 0 && info.gid !== who.gid;
}

/** True when `info` (a file or directory) is `who`'s own and nobody else may write it. */
export function ownPrivate(info: Deno.FileInfo, who: Invoker): boolean {
  return info.uid === who.uid && !writableByOthers(info, who);
}

/** What makes a path untrusted: a component owned by another user, or one others can write. */
export interface OwnershipProblem {
  /** The component concerned. */
  at: string;
  /** `not-owned`: owned by another user than root or `who`; `writable`: others may write it. */
  why: "not-owned" | "writable";
  /** The owner, for `not-owned`. */
  uid?: number;
}

/** The components of an absolute path, empty and `.` ones dropped (`..` resolved lexically). */
function components(path: string): string[] {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") out.pop();
    else out.push(part);
  }
  return out;
}

function statOrUndefined(path: string, follow: boolean): Deno.FileInfo | undefined {
  try {
    return follow ? Deno.statSync(path) : Deno.lstatSync(path);
  } catch (e) {
    if (isPermissionError(e)) throw e;
    return undefined;
  }
}

/**
 * The first reason the directory chain from `/` to the absolute `path` lets a user other than
 * `who` (or root) change what `path` names, walking the path as written (links followed): every
 * directory on the way must be owned by root or `who`, and one that others can write must have the
 * sticky bit, and then the entry in it must be owned by root or `who` (a `/tmp`-like parent lets
 * others add entries but never rename or remove ours). Components that do not exist yet are not
 * judged (they are made by `who`). `path` itself is judged as a directory on the way.
 */
function walkProblem(path: string, who: Invoker): OwnershipProblem | undefined {
  const parts = components(path);
  let dir = "/";
  let info = statOrUndefined(dir, true);
  for (let i = 0; info !== undefined && info.isDirectory; i++) {
    if (info.uid !== 0 && info.uid !== who.uid) {
      return { at: dir, why: "not-owned", uid: info.uid ?? undefined };
    }
    if (i === parts.length) return undefined;
    const next = dir === "/" ? `/${parts[i]}` : `${dir}/${parts[i]}`;
    const entry = statOrUndefined(next, false);
    if (entry === undefined) return undefined;
    if (writableByOthers(info, who)) {
      if (((info.mode ?? 0) & 0o1000) === 0) return { at: dir, why: "writable" };
      if (entry.uid !== 0 && entry.uid !== who.uid) {
        return { at: next, why: "not-owned", uid: entry.uid ?? undefined };
      }
    }
    dir = next;
    info = statOrUndefined(next, true);
  }
  return undefined;
}

/**
 * Why `path` (absolute) is not safe to trust as `who`'s — reachable through a folder another user
 * can write or owns — judged along the path as written and along its physical path (links above
 * it followed), or `undefined`.
 */
export function ancestryProblem(path: string, who: Invoker): OwnershipProblem | undefined {
  const logical = walkProblem(path, who);
  if (logical !== undefined) return logical;
  let physical: string | undefined;
  try {
    physical = Deno.realPathSync(path);
  } catch (e) {
    if (isPermissionError(e)) throw e;
    return undefined;
  }
  return physical === path ? undefined : walkProblem(physical, who);
}
