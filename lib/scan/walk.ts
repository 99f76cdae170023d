/**
 * The scanner's walk primitives (`references/context-scan.md#walks`): physical and followed
 * recursive walks, the one-level listing, the prune list and the cycle guard. Paths are logical:
 * start + `/` + the entry names descended.
 *
 * A walk never throws for an I/O error; it reports problems in occurrence order and lets its caller
 * decide what they become (issues, or stderr warnings for the broad root walk).
 *
 * @module
 */

import { osReason, rethrowPermission } from "../_fs/errors.ts";
import { isLossyPath } from "./files.ts";
import { linkTable } from "./read_memo.ts";

type Stats = Deno.FileInfo;

/** Directory names no root, instruction or reference walk enters (memory walks ignore the list). */
export const PRUNE_NAMES: ReadonlySet<string> = new Set([
  ".git",
  "node_modules",
  "dist",
  "build",
  ".next",
  "vendor",
  ".codex",
  "tmp",
  "web",
  "plugins",
  "projects",
  ".template-baseline",
  "backups",
  "reports",
  "worktrees",
]);

/** Something a walk could not do. */
export type WalkProblem =
  | { kind: "unreadable"; path: string; reason: string }
  | { kind: "loop"; path: string; ancestor: string }
  | { kind: "lossy"; path: string };

/**
 * The one-line description of a problem (`references/context-scan.md#problem-lines`; the wording is
 * not a contract).
 */
export function problemLine(problem: WalkProblem): string {
  switch (problem.kind) {
    case "unreadable":
      return `'${problem.path}': ${problem.reason}`;
    case "loop":
      return `File system loop detected; '${problem.path}' is part of the same file system loop as '${problem.ancestor}'.`;
    case "lossy":
      return `'${problem.path}': name is not valid UTF-8`;
  }
}

/**
 * Decides, per directory, what the walk collects. `C` is a per-directory context (e.g. which
 * interesting components lie between the start and this directory).
 */
export interface WalkVisitor<C> {
  /** Context of a child directory named `name` of a directory with context `parent`. */
  child(parent: C, name: string): C;
  /** Called for each regular file; return true when the file would become a row (it is collected). */
  file(path: string, name: string, context: C): boolean;
}

/** How to walk. */
export interface WalkOptions {
  /**
   * Listings already read this run, by logical path. A walk stores what it lists and reuses what an
   * earlier walk listed, so a `references` walk inside the root walk's tree reads nothing twice.
   */
  listings?: Map<string, Deno.DirEntry[]>;
  /** Which listings to store in `listings` (default: all); bounds memory on huge trees. */
  store?: (dir: string) => boolean;
  /** Follow links (followed walk) instead of ignoring link entries (physical walk). */
  follow: boolean;
  /** Apply {@linkcode PRUNE_NAMES} to directories strictly below the start. */
  prune: boolean;
  /**
   * Inside a `--loaded` run, note each collected file the listing shows as no link in the run's
   * link table (`read_memo.ts`): for walks whose files become always-on rows, the only rows
   * `--loaded` asks that of.
   */
  noteLinks?: boolean;
}

/** What a walk collected. */
export interface WalkResult {
  /** Paths the visitor accepted, in discovery order (callers sort). */
  files: string[];
  /** Problems in occurrence order. */
  problems: WalkProblem[];
}

interface Frame {
  dev: number | null;
  ino: number | null;
  path: string;
}

function sameFile(a: Frame, b: Stats): boolean {
  // dev/ino are null only where the OS offers no identity (then no loop can be proven).
  return a.ino !== null && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Walk the directory `start` (entered even when it is a link) recursively. The caller has checked
 * that `start` resolves to a directory; `startStat` is its `stat` (links followed).
 *
 * @example
 * ```ts ignore
 * const { files } = walk("/r/rules", Deno.statSync("/r/rules"), { follow: true, prune: true }, {
 *   child: () => null,
 *   file: (_p, name) => name.endsWith(".md"),
 * }, null);
 * ```
 */
export function walk<C>(
  start: string,
  startStat: Stats,
  options: WalkOptions,
  visitor: WalkVisitor<C>,
  context: C,
): WalkResult {
  const files: string[] = [];
  const problems: WalkProblem[] = [];
  const chain: Frame[] = [{ dev: startStat.dev, ino: startStat.ino, path: start }];
  // Inside a `--loaded` run, a file the listing shows as no link needs no `lstat` later.
  const links = options.noteLinks ? linkTable() : undefined;

  const enter = (dir: string, ctx: C): void => {
    let entries = options.listings?.get(dir);
    if (entries === undefined) {
      try {
        entries = [...Deno.readDirSync(dir)];
      } catch (e) {
        rethrowPermission(e);
        problems.push(
          isLossyPath(dir)
            ? { kind: "lossy", path: dir }
            : { kind: "unreadable", path: dir, reason: osReason(e) },
        );
        return;
      }
      if (options.store?.(dir) ?? true) options.listings?.set(dir, entries);
    }
    for (const entry of entries) {
      const name = entry.name;
      const path = `${dir}/${name}`;
      if (entry.isFile) {
        if (acceptFile(path, name, ctx)) links?.set(path, null);
      } else if (entry.isDirectory) {
        if (options.prune && PRUNE_NAMES.has(name)) continue;
        let st: Stats;
        try {
          st = Deno.statSync(path);
        } catch (e) {
          rethrowPermission(e);
          problems.push(
            isLossyPath(path)
              ? { kind: "lossy", path }
              : { kind: "unreadable", path, reason: osReason(e) },
          );
          continue;
        }
        descend(path, st, visitor.child(ctx, name));
      } else if (entry.isSymlink && options.follow) {
        let st: Stats;
        try {
          st = Deno.statSync(path);
        } catch (e) {
          rethrowPermission(e);
          if (isLossyPath(path)) problems.push({ kind: "lossy", path });
          continue; // dangling link: silently ignored
        }
        if (st.isDirectory) {
          if (options.prune && PRUNE_NAMES.has(name)) continue;
          descend(path, st, visitor.child(ctx, name));
        } else if (st.isFile) {
          acceptFile(path, name, ctx);
        }
      }
    }
  };

  /** True when `path` is one of the walk's files. */
  const acceptFile = (path: string, name: string, ctx: C): boolean => {
    if (!visitor.file(path, name, ctx)) return false;
    if (name.includes("\uFFFD") && isLossyPath(path)) {
      problems.push({ kind: "lossy", path });
      return false;
    }
    files.push(path);
    return true;
  };

  const descend = (path: string, st: Stats, ctx: C): void => {
    for (const frame of chain) {
      if (sameFile(frame, st)) {
        problems.push({ kind: "loop", path, ancestor: frame.path });
        return;
      }
    }
    chain.push({ dev: st.dev, ino: st.ino, path });
    enter(path, ctx);
    chain.pop();
  };

  enter(start, context);
  return { files, problems };
}

/** What {@linkcode listDirectory} found. */
export interface ListResult {
  /** Paths of non-hidden entries that are regular files after following links (unsorted). */
  files: string[];
  /** Problems (unreadable directory, lossy names). */
  problems: WalkProblem[];
}

/** The direct, non-hidden entries of `dir` that are regular files after following links. */
export function listDirectory(dir: string): ListResult {
  const files: string[] = [];
  const problems: WalkProblem[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (e) {
    rethrowPermission(e);
    problems.push({ kind: "unreadable", path: dir, reason: osReason(e) });
    return { files, problems };
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = `${dir}/${entry.name}`;
    let regular = entry.isFile;
    if (!regular && entry.isSymlink) {
      try {
        regular = Deno.statSync(path).isFile;
      } catch (e) {
        rethrowPermission(e);
        regular = false;
      }
    }
    if (entry.name.includes("\uFFFD") && (regular || entry.isSymlink) && isLossyPath(path)) {
      problems.push({ kind: "lossy", path });
    } else if (regular) {
      files.push(path);
    }
  }
  return { files, problems };
}
