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
import { parseFrontmatter, splitFrontmatter } from "../frontmatter.ts";
import { statFollow } from "../files.ts";
import { LARGE_FILE_BYTES } from "./source.ts";
import {
  decodeText,
  recalled,
  remember,
  runTable,
  scratchBuffer,
  type TextRead,
} from "../read_memo.ts";

export { type TextRead, withOneReadEach } from "../read_memo.ts";

/** The run's table of real paths (`read_memo.ts`), by path. */
const REAL_PATHS = "real";
/** The run's table of `*.md` trees ({@linkcode markdownFilesBelow}), by folder. */
const MARKDOWN_TREES = "markdown";

/** `path` read whole (up to {@linkcode LARGE_FILE_BYTES}), following links. */
export function readText(path: string): TextRead {
  const known = recalled(path);
  if (known !== undefined) return known;
  const read = readOnce(path);
  remember(path, read);
  return read;
}

function readOnce(path: string): TextRead {
  try {
    // The file's size is known once it is open: one read of that many bytes (no read for the end).
    const { bytes, size } = readHead(path, LARGE_FILE_BYTES, { scratch: scratchBuffer() });
    if (size > LARGE_FILE_BYTES) return { kind: "large", size };
    return { kind: "text", text: decodeText(bytes), size: bytes.length };
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

/**
 * {@linkcode isFile} for a file the model reads next anyway (a skill's `SKILL.md`): answered by
 * that read, which the run keeps — one open instead of a stat and an open.
 */
export function isFileToRead(path: string): boolean {
  const read = readText(path);
  // Unreadable: open failed, for a file or for a path that leads to none; only a stat tells.
  return read.kind === "unreadable" ? isFile(path) : read.kind !== "missing";
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
export function markdownBelow(dir: string, seen?: Set<string>, real?: string): string[] {
  return markdownFilesBelow(dir, seen, real).map((f) => f.path);
}

/**
 * {@linkcode markdownBelow}'s files with their real paths (a file that is no link is its folder's
 * real path and its name: only links are resolved).
 */
export function markdownFilesBelow(
  dir: string,
  seen?: Set<string>,
  real?: string,
): readonly MarkdownFile[] {
  if (seen !== undefined || real !== undefined) {
    return filesBelow(dir, seen ?? new Set(), real, false);
  }
  // A whole tree is listed once a run (`read_memo.ts`): the start-up and access rules list the
  // same rule folders.
  const listed = runTable<readonly MarkdownFile[]>(MARKDOWN_TREES);
  let files = listed?.get(dir);
  if (files === undefined) {
    files = filesBelow(dir, new Set(), undefined, false);
    listed?.set(dir, files);
  }
  return files;
}

/** A `*.md` file below a folder, and its real path. */
export interface MarkdownFile {
  readonly path: string;
  readonly real: string;
}

/**
 * {@linkcode markdownFilesBelow}; `resolved`: `real` is `dir`'s real path as the OS resolves it
 * (not one a caller vouches for), so the run may remember its files' real paths.
 */
function filesBelow(
  dir: string,
  seen: Set<string>,
  real: string | undefined,
  resolved: boolean,
): { path: string; real: string }[] {
  if (real === undefined) {
    try {
      real = Deno.realPathSync(dir);
      resolved = true;
    } catch {
      return [];
    }
  }
  if (seen.has(real)) return [];
  seen.add(real);
  const reals = resolved ? runTable<string>(REAL_PATHS) : undefined;
  const out: { path: string; real: string }[] = [];
  for (const entry of listNames(dir)) {
    const path = `${dir}/${entry.name}`;
    // The listing says what an entry is; only a link needs a stat to know what it leads to.
    const directory = entry.isSymlink ? isDirectory(path) : entry.isDirectory;
    if (directory) {
      const sub = entry.isSymlink ? undefined : join(real, entry.name);
      out.push(...filesBelow(path, seen, sub, resolved));
    } else if (entry.name.endsWith(".md") && (entry.isSymlink ? isFile(path) : entry.isFile)) {
      if (entry.isSymlink) {
        out.push({ path, real: realOrSelf(path) });
        continue;
      }
      const file = join(real, entry.name);
      // What realOrSelf would answer for either name.
      reals?.set(path, file).set(file, file);
      out.push({ path, real: file });
    }
  }
  return out;
}

/**
 * The names in `dir` (undefined when it cannot be listed): to look files up without a stat each.
 */
export function namesIn(dir: string): ReadonlySet<string> | undefined {
  // A set: no order to sort into.
  try {
    return new Set(Array.from(Deno.readDirSync(dir), (e) => e.name));
  } catch {
    return undefined;
  }
}

/** True when the real path `real` is `root` or below it. */
export function isInside(real: string, root: string): boolean {
  return real === root || real.startsWith(root === "/" ? "/" : `${root}/`);
}

/** `path` with every link resolved, or `path` itself when it cannot be resolved. */
export function realOrSelf(path: string): string {
  // Once a run (`read_memo.ts`): start-up and access rules resolve the same files.
  const known = runTable<string>(REAL_PATHS);
  let real = known?.get(path);
  if (real === undefined) {
    try {
      real = Deno.realPathSync(path);
    } catch {
      real = path;
    }
    known?.set(path, real);
  }
  return real;
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
export function frontmatterOf(path: string): ReadonlyMap<string, string | string[] | undefined> {
  const read = readText(path);
  if (read.kind !== "text") return new Map();
  const split = splitFrontmatter(read.text.replace(/^\uFEFF/, ""));
  return split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml);
}
