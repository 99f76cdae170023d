/**
 * Roots and path models shared by the tools.
 *
 * Two path models exist on purpose: *logical* paths (like shell `cd` + `pwd`: symlinks kept, `..`
 * removed lexically) for context-scan and context-guard, and *physical* paths (symlinks resolved) for
 * text-guard. This module holds the logical side and the global root rule.
 *
 * @module
 */

import { realpathSync, statSync } from "node:fs";
import { die, isPermissionError } from "./exit.ts";

/** Read an environment variable; `undefined` when unset or empty. */
export function envValue(name: string): string | undefined {
  const value = Deno.env.get(name);
  return value === undefined || value === "" ? undefined : value;
}

/**
 * Normalise `path` lexically against the absolute `base`, like `cd path && pwd` without resolving
 * links: relative joins `base`, `//` collapses, `.` drops, `..` removes the previous component, and no
 * trailing `/` remains (except for `/` itself).
 *
 * @example
 * ```ts
 * import { normalizeLexical } from "./paths.ts";
 * normalizeLexical("lnk/repo/..", "/a"); // "/a/lnk"
 * normalizeLexical("/a//b/./c/", "/"); // "/a/b/c"
 * ```
 */
export function normalizeLexical(path: string, base: string): string {
  const joined = path.startsWith("/") ? path : `${base}/${path}`;
  const parts: string[] = [];
  for (const part of joined.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") parts.pop();
    else parts.push(part);
  }
  return "/" + parts.join("/");
}

function sameDirectory(a: string, b: string): boolean {
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.isDirectory() && x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * The logical current directory: `$PWD` when it is absolute, free of `.`/`..` components and the same
 * directory (device + inode) as the process cwd; otherwise the physical cwd (Deno's `cwd()`).
 */
export function logicalCwd(): string {
  const physical = Deno.cwd();
  const pwd = envValue("PWD");
  if (pwd === undefined || !pwd.startsWith("/")) return physical;
  if (pwd.split("/").some((part) => part === "." || part === "..")) return physical;
  return sameDirectory(pwd, physical) ? normalizeLexical(pwd, "/") : physical;
}

/**
 * The global Claude root `G`: `$CLAUDE_CONFIG_DIR` (trailing `/` removed, relative joined lexically
 * to the logical cwd) when set and non-empty, else the string `$HOME/.claude` verbatim.
 * Dies with `❌ HOME is not set` (exit 2) when neither is available.
 *
 * @example
 * ```ts ignore
 * Deno.env.set("HOME", "/h/");
 * globalRoot(); // "/h//.claude" — verbatim, as the bash originals build it
 * ```
 */
export function globalRoot(): string {
  const config = envValue("CLAUDE_CONFIG_DIR");
  if (config !== undefined) {
    if (config.startsWith("/")) {
      const trimmed = config.replace(/\/+$/, "");
      return trimmed === "" ? "/" : trimmed;
    }
    return normalizeLexical(config, logicalCwd());
  }
  const home = envValue("HOME");
  if (home === undefined) die("❌ HOME is not set");
  return `${home}/.claude`;
}

/**
 * True when `path` is a directory after following links. A missing Deno read grant is rethrown (the
 * bin reports it as a permission problem rather than "not a directory").
 */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch (e) {
    if (isPermissionError(e)) throw e;
    return false;
  }
}

/** The physical (symlink-free) absolute path of an existing `path`, or `undefined`. */
export function physicalPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
