/**
 * The file system as the loading model reads it: text files (whole up to 8 MiB), folders listed in
 * byte order, `*.md` trees with links followed, and the path helpers the rules share. Never writes.
 *
 * @module
 */

import { isAbsent, rethrowPermission } from "../../_fs/errors.ts";
import { readHead, ReadRefusedError } from "../../_fs/read.ts";
import { dirname } from "../../paths.ts";
import { compareUtf8 } from "../../sort.ts";
import { parseFrontmatter, splitFrontmatter } from "../claude_text.ts";
import { statFollow } from "../files.ts";
import { LARGE_FILE_BYTES } from "./source.ts";

const decoder = new TextDecoder();

/** A file as the model reads it: its text, or why there is none. */
export type TextRead =
  | { kind: "text"; text: string; size: number }
  | { kind: "large"; size: number }
  | { kind: "missing" }
  | { kind: "unreadable" };

/** The reads of the current {@linkcode withOneReadEach} run, by path. */
let memo: Map<string, TextRead> | undefined;

/**
 * `fn` run with every {@linkcode readText} of one path answered by its first read: one `--loaded`
 * run models start-up and then every tier from the same files (`references/context-scan.md#performance`)
 * — each is read once, and both models see one version of it.
 */
export function withOneReadEach<T>(fn: () => T): T {
  const outer = memo;
  memo ??= new Map();
  try {
    return fn();
  } finally {
    memo = outer;
  }
}

/** `path` read whole (up to {@linkcode LARGE_FILE_BYTES}), following links. */
export function readText(path: string): TextRead {
  const known = memo?.get(path);
  if (known !== undefined) return known;
  const read = readOnce(path);
  memo?.set(path, read);
  return read;
}

function readOnce(path: string): TextRead {
  try {
    // The file's size is known once it is open: one read of that many bytes (no read for the end).
    const { bytes, size } = readHead(path, LARGE_FILE_BYTES);
    if (size > LARGE_FILE_BYTES) return { kind: "large", size };
    return { kind: "text", text: decoder.decode(bytes), size: bytes.length };
  } catch (e) {
    if (e instanceof ReadRefusedError) {
      if (e.refusal === "too-large") {
        const st = statFollow(path);
        return { kind: "large", size: "error" in st ? 0 : st.size };
      }
      // A directory or device where a file is looked for is no file: Claude Code skips it too.
      return e.refusal === "absent" || e.refusal === "not-regular"
        ? { kind: "missing" }
        : { kind: "unreadable" };
    }
    rethrowPermission(e);
    return isAbsent(e) ? { kind: "missing" } : { kind: "unreadable" };
  }
}

/** True when `path` (links followed) is a regular file. */
export function isFile(path: string): boolean {
  const st = statFollow(path);
  return !("error" in st) && st.isFile;
}

/** True when `path` (links followed) is a directory. */
export function isDirectory(path: string): boolean {
  const st = statFollow(path);
  return !("error" in st) && st.isDirectory;
}

/** The entries of `dir` in byte order; none when it cannot be listed. */
export function listNames(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)].sort((a, b) => compareUtf8(a.name, b.name));
  } catch {
    return [];
  }
}

/**
 * Every `*.md` below `dir` (links followed, each real directory once), sorted per directory.
 * `real` is `dir`'s real path when known (a subdirectory that is no link is its parent's real path
 * and its name: only links are resolved).
 */
export function markdownBelow(dir: string, seen = new Set<string>(), real?: string): string[] {
  return markdownFilesBelow(dir, seen, real).map((f) => f.path);
}

/**
 * {@linkcode markdownBelow}'s files with their real paths (a file that is no link is its folder's
 * real path and its name: only links are resolved).
 */
export function markdownFilesBelow(
  dir: string,
  seen = new Set<string>(),
  real?: string,
): { path: string; real: string }[] {
  if (real === undefined) {
    try {
      real = Deno.realPathSync(dir);
    } catch {
      return [];
    }
  }
  if (seen.has(real)) return [];
  seen.add(real);
  const out: { path: string; real: string }[] = [];
  for (const entry of listNames(dir)) {
    const path = `${dir}/${entry.name}`;
    // The listing says what an entry is; only a link needs a stat to know what it leads to.
    const directory = entry.isSymlink ? isDirectory(path) : entry.isDirectory;
    if (directory) {
      const sub = entry.isSymlink ? undefined : join(real, entry.name);
      out.push(...markdownFilesBelow(path, seen, sub));
    } else if (entry.name.endsWith(".md") && (entry.isSymlink ? isFile(path) : entry.isFile)) {
      out.push({ path, real: entry.isSymlink ? realOrSelf(path) : join(real, entry.name) });
    }
  }
  return out;
}

/** The names in `dir` (none when it cannot be listed): to look files up without a stat each. */
export function namesIn(dir: string): ReadonlySet<string> {
  return new Set(listNames(dir).map((e) => e.name));
}

/** True when the real path `real` is `root` or below it. */
export function isInside(real: string, root: string): boolean {
  return real === root || real.startsWith(root === "/" ? "/" : `${root}/`);
}

/** `path` with every link resolved, or `path` itself when it cannot be resolved. */
export function realOrSelf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** The directories from `/` down to `root`, `root` last. */
export function ancestry(root: string): string[] {
  const dirs: string[] = [];
  for (let d = root;; d = dirname(d)) {
    dirs.unshift(d);
    if (d === "/" || d === "" || dirname(d) === d) break;
  }
  return dirs;
}

/** `dir/name`, without doubling the root's slash. */
export function join(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/** The frontmatter fields of `path` (none when it has none or cannot be read). */
export function frontmatterOf(path: string): Map<string, string | string[] | undefined> {
  const read = readText(path);
  if (read.kind !== "text") return new Map();
  const split = splitFrontmatter(read.text.replace(/^\uFEFF/, ""));
  return split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml);
}
