/**
 * Small file-system helpers the guard shares: hashing, regular-file tests that never follow a
 * planted link, owner-only directory creation, and recursive listings.
 *
 * @module
 */

import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { die } from "../exit.ts";
import { sortUtf8 } from "../sort.ts";

/** Lowercase hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** True when `path` is a regular file after following links. */
export function isFileFollow(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** True when anything exists at `path`, links followed (a dangling link does not count). */
export function existsFollow(path: string): boolean {
  try {
    statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** True when `path` itself is a regular file (a link is not). */
export function isRegularNoFollow(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** True when anything (a dangling link included) exists at `path`. */
export function existsNoFollow(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Hash of the file at `path`, or `MISSING` when nothing readable is there. */
export function hashOrMissing(path: string): string {
  try {
    return sha256Hex(readFileSync(path));
  } catch {
    return "MISSING";
  }
}

/**
 * True when every directory between `base` (exclusive) and `base/rel`'s parent is a real directory,
 * not a link: copies inside a run dir are only trusted along a link-free chain.
 */
export function linkFreeChain(base: string, rel: string): boolean {
  const parts = rel.split("/");
  let at = base;
  for (const part of parts.slice(0, -1)) {
    at = `${at}/${part}`;
    try {
      if (!lstatSync(at).isDirectory()) return false;
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
 * Create `path` and its missing ancestors as owner-only (`0700`) directories. Every existing
 * component at or below `trustedBase` must be a real directory (a link there dies with
 * `❌ symbolic-link snapshot path: <component>`).
 */
export function makePrivateDirs(path: string, trustedBase?: string): void {
  const parts = path.split("/");
  let at = path.startsWith("/") ? "" : ".";
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    at = at === "" ? `/${part}` : `${at}/${part}`;
    const checked = trustedBase !== undefined &&
      (at === trustedBase || at.startsWith(`${trustedBase}/`));
    let st;
    try {
      st = lstatSync(at);
    } catch {
      st = undefined;
    }
    if (st === undefined) {
      try {
        mkdirSync(at, { mode: 0o700 });
        chmodSync(at, 0o700);
      } catch (e) {
        if ((e as { code?: string }).code !== "EEXIST") throw e;
      }
      continue;
    }
    if (checked && st.isSymbolicLink()) die(`❌ symbolic-link snapshot path: ${at}`);
  }
}

/** Every regular file (links excluded) below `dir`, relative, sorted by code point; none if absent. */
export function listRegularFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (abs: string, rel: string): void => {
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch {
      return;
    }
    for (const name of names) {
      const childAbs = `${abs}/${name}`;
      const childRel = rel === "" ? name : `${rel}/${name}`;
      let st;
      try {
        st = lstatSync(childAbs);
      } catch {
        continue;
      }
      if (st.isDirectory()) walk(childAbs, childRel);
      else if (st.isFile()) out.push(childRel);
    }
  };
  walk(dir, "");
  return sortUtf8(out);
}

/**
 * Create a new file exclusively (`O_EXCL | O_NOFOLLOW`: never through a planted link, never over
 * anything), with exactly `mode`, and fsync it. For copies inside a freshly created run dir, where
 * there is no previous content to protect; the caller fsyncs the directories once at the end.
 */
export function writeNewFile(path: string, bytes: Uint8Array, mode: number): void {
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    mode,
  );
  try {
    fchmodSync(fd, mode);
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
