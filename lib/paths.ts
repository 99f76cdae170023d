/**
 * Roots and the logical path model shared by the tools.
 *
 * Two path models exist on purpose: *logical* paths (like shell `cd` + `pwd`: links kept, `..`
 * removed lexically) for context-scan and context-guard, and *physical* paths (links resolved) for
 * text-guard. This module holds the logical side and the global root rule
 * (`references/context-guard.md#roots-and-paths`).
 *
 * @module
 */

import { EnvironmentError } from "./errors.ts";
import { gitToplevel } from "./git.ts";
import { text } from "./text.ts";

/**
 * Read an environment variable; `undefined` when unset or empty. A value that is not valid UTF-8
 * (Deno cannot hold it in a string) is an {@linkcode EnvironmentError} `<name> is not valid UTF-8`
 * (exit 2), never an internal error; a missing grant is rethrown.
 */
export function envValue(name: string): string | undefined {
  let value: string | undefined;
  try {
    value = Deno.env.get(name);
  } catch (e) {
    if (!/not valid unicode/i.test(e instanceof Error ? e.message : "")) throw e;
    throw new EnvironmentError(name, text`${name} is not valid UTF-8`);
  }
  return value === undefined || value === "" ? undefined : value;
}

/**
 * The process's working directory (`Deno.cwd()`), or an {@linkcode EnvironmentError} when Deno
 * cannot give it: a path that is not valid UTF-8 (`cannot use the working directory: its path is
 * not valid UTF-8`), or one removed since (`cannot use the working directory: <reason>`), exit 2.
 */
export function processCwd(): string {
  try {
    return Deno.cwd();
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    if (/Requires .* access|--allow-/.test(message)) throw e;
    const reason = /not valid UTF-8/i.test(message)
      ? "its path is not valid UTF-8"
      : message.split("\n")[0].replace(/ \(os error \d+\).*$/, "");
    throw new EnvironmentError("PWD", text`cannot use the working directory: ${reason}`);
  }
}

/**
 * Normalise `path` lexically against the absolute `base`, like `cd path && pwd` without resolving
 * links: relative joins `base`, `//` collapses, `.` drops, `..` removes the previous component,
 * and no trailing `/` remains (except for `/` itself).
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

/** `root + "/"`, except `/` itself, so prefix tests work for the file-system root too. */
export function rootPrefix(root: string): string {
  return root === "/" ? "/" : `${root}/`;
}

/** `root/rel` without a doubled `/` when `root` is `/`. */
export function joinRoot(root: string, rel: string): string {
  return `${rootPrefix(root)}${rel}`;
}

/** True when the absolute `path` lies strictly below `root` (lexically). */
export function isBelow(path: string, root: string): boolean {
  const prefix = rootPrefix(root);
  return path.startsWith(prefix) && path.length > prefix.length;
}

/** The directory part of `path` as `dirname` gives it (`.` when there is none). */
export function dirname(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  const i = trimmed.lastIndexOf("/");
  if (i < 0) return ".";
  if (i === 0) return "/";
  return trimmed.slice(0, i).replace(/\/+$/, "") || "/";
}

/** The last component of `path` as `basename` gives it. */
export function basename(path: string): string {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

function sameDirectory(a: string, b: string): boolean {
  try {
    const x = Deno.statSync(a);
    const y = Deno.statSync(b);
    return x.isDirectory && x.dev === y.dev && x.ino === y.ino;
  } catch {
    return false;
  }
}

/**
 * The logical current directory: `$PWD` when it is absolute, free of `.`/`..` components and the
 * same directory (device + inode) as the process cwd; otherwise the physical cwd.
 */
export function logicalCwd(): string {
  const physical = processCwd();
  const pwd = envValue("PWD");
  if (pwd === undefined || !pwd.startsWith("/")) return physical;
  if (pwd.split("/").some((part) => part === "." || part === "..")) return physical;
  return sameDirectory(pwd, physical) ? normalizeLexical(pwd, "/") : physical;
}

/**
 * The git work tree's top level for the current directory, written logically: when the logical cwd
 * reaches the work tree through a link, the same link is kept (`/link/repo`, not `/real/repo`), so
 * paths under it compare with the user's logical arguments. `undefined` outside a work tree (or
 * without git).
 */
export function logicalGitToplevel(): string | undefined {
  const physicalCwd = processCwd();
  const top = gitToplevel(physicalCwd);
  if (top === undefined) return undefined;
  const cwd = logicalCwd();
  let realTop: string;
  let realCwd: string;
  try {
    realTop = Deno.realPathSync(top);
    realCwd = Deno.realPathSync(physicalCwd);
  } catch {
    return top;
  }
  if (realCwd === realTop) return cwd;
  if (!realCwd.startsWith(realTop === "/" ? "/" : `${realTop}/`)) return top;
  const below = realCwd.slice(realTop === "/" ? 0 : realTop.length);
  if (cwd.endsWith(below)) {
    const candidate = cwd.slice(0, cwd.length - below.length) || "/";
    if (sameDirectory(candidate, realTop)) return candidate;
  }
  return top;
}

/**
 * The global Claude root `G`: `$CLAUDE_CONFIG_DIR` (trailing `/` removed, relative joined
 * lexically to the logical cwd) when set and non-empty, else the string `$HOME/.claude` verbatim.
 * Throws {@linkcode EnvironmentError} `HOME is not set` when neither is available.
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
  if (home === undefined) throw new EnvironmentError("HOME", text`HOME is not set`);
  return `${home}/.claude`;
}
