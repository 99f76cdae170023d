/**
 * Roots and the two path models of the guard (`references/context-guard.md#roots-and-paths`).
 *
 * text-guard works on physical paths (links resolved) under root `T`; context-guard checks
 * arguments logically (links kept, like `cd` + `pwd`) against a layer root, then hands them to the
 * text-guard stage, which refuses whatever physically lies elsewhere.
 *
 * @module
 */

import { EnvironmentError } from "../errors.ts";
import { gitToplevel } from "../git.ts";
import {
  existsFollow,
  isDirectoryFollow,
  isFileFollow,
  isSymlink,
  physicalPath,
} from "../_fs/inspect.ts";
import {
  basename,
  dirname,
  envValue,
  globalRoot,
  logicalCwd,
  logicalGitToplevel,
  normalizeLexical,
  processCwd,
  rootPrefix,
} from "../paths.ts";
import { text } from "../text.ts";
import { PathRefusedError } from "./errors.ts";

/** A file argument resolved against a root: the absolute path and the root-relative `rel`. */
export interface ResolvedPath {
  /** The argument as the user typed it. */
  arg: string;
  /**
   * Absolute path (physical directory part for text-guard, logical for context-guard); for a
   * dotfiles-linked global file, the physical file the link resolves to.
   */
  abs: string;
  /** Path relative to the root, `/`-separated, no leading `./`. */
  rel: string;
  /** For a dotfiles-linked global file: the link's own path (`abs` is its target). */
  link?: string;
}

/**
 * Which root a message names: text-guard's and context-guard's project layer say "project root",
 * the global layer says "global root" (`references/context-guard.md#roots-and-paths`).
 */
export type RootName = "project" | "global";

/**
 * text-guard's root `T`: physical `projectDir` (the stage's or the environment's
 * `CLAUDE_PROJECT_DIR`) when non-empty, else the physical git toplevel of the cwd, else the physical
 * cwd. An invalid `projectDir` is an {@linkcode EnvironmentError}.
 */
export function textGuardRoot(
  projectDir: string | undefined,
  rootName: RootName = "project",
): string {
  if (projectDir !== undefined && projectDir !== "") {
    const physical = isDirectoryFollow(projectDir) ? physicalPath(projectDir) : undefined;
    if (physical === undefined) {
      throw rootName === "global"
        ? new EnvironmentError("CLAUDE_CONFIG_DIR", text`invalid global root: ${projectDir}`)
        : new EnvironmentError(
          "CLAUDE_PROJECT_DIR",
          text`invalid CLAUDE_PROJECT_DIR: ${projectDir}`,
        );
    }
    return physical;
  }
  const cwd = processCwd();
  const top = gitToplevel(cwd);
  if (top !== undefined) {
    const physical = physicalPath(top);
    if (physical !== undefined) return physical;
  }
  return physicalPath(cwd) ?? cwd;
}

function under(abs: string, root: string): string | undefined {
  const prefix = rootPrefix(root);
  return abs.startsWith(prefix) && abs.length > prefix.length
    ? abs.slice(prefix.length)
    : undefined;
}

/**
 * The dotfiles links a file operation accepts (rel → the file it resolves to), asked for only
 * when an argument is a link: most runs have none, and finding out means parsing the manifest.
 */
export type LinkLookup = () => ReadonlyMap<string, string> | undefined;

/**
 * The physical path of each directory a batch of file arguments names, resolved once per batch
 * (`dirname` as typed → physical path, or `undefined` when it is no directory): most batches name a
 * few directories many times, and each resolution costs a system call per path component.
 */
export type PhysicalDirs = Map<string, string | undefined>;

/**
 * Physical resolution of `f` under root `t`: refuses a link at `f` (unless `links` maps its rel to
 * exactly the file it resolves to: a dotfiles-linked global file), an unresolvable directory and
 * anything outside `t`. A batch passes one {@linkcode PhysicalDirs} to all its files.
 */
export function resolvePhysical(
  f: string,
  t: string,
  rootName: RootName = "project",
  links?: LinkLookup,
  dirs: PhysicalDirs = new Map(),
  missingDirs = false,
): ResolvedPath {
  const linked = isSymlink(f);
  const accepted = linked ? links?.() : undefined;
  if (linked && (accepted === undefined || accepted.size === 0)) throw symlinkTarget(f);
  const dir = dirname(f);
  let physicalDir = dirs.get(dir);
  if (!dirs.has(dir)) {
    physicalDir = isDirectoryFollow(dir)
      ? physicalPath(dir)
      : missingDirs
      ? physicalBelowExisting(dir)
      : undefined;
    dirs.set(dir, physicalDir);
  }
  if (physicalDir === undefined) {
    throw new PathRefusedError(f, "unresolvable", text`cannot resolve ${f}`);
  }
  const abs = `${physicalDir === "/" ? "" : physicalDir}/${basename(f)}`;
  const rel = under(abs, t);
  if (rel === undefined) {
    throw new PathRefusedError(f, "outside-root", text`${f} is outside the ${rootName} root ${t}`);
  }
  if (!linked) return { arg: f, abs, rel };
  const target = physicalPath(f);
  if (target === undefined || accepted?.get(rel) !== target) throw symlinkTarget(f);
  return { arg: f, abs: target, rel, link: abs };
}

/**
 * A directory path whose last components do not exist (a deleted directory that a restore brings
 * back, `references/context-guard.md#restoring-a-run-dir`): the physical path of its nearest
 * existing ancestor, which must be a directory (links followed), plus the missing components as
 * written; `undefined` when that ancestor is no directory.
 */
function physicalBelowExisting(dir: string): string | undefined {
  const missing: string[] = [];
  let at = dir;
  while (!existsFollow(at)) {
    const parent = dirname(at);
    if (parent === at) return undefined;
    missing.unshift(basename(at));
    at = parent;
  }
  const physical = isDirectoryFollow(at) ? physicalPath(at) : undefined;
  if (physical === undefined) return undefined;
  const parts = missing.filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) return undefined;
  return parts.length === 0 ? physical : `${physical === "/" ? "" : physical}/${parts.join("/")}`;
}

/**
 * The refusal of a link given as a file. It names the regular file the link resolves to, when it
 * does (a `CLAUDE.md` linked to `AGENTS.md`): the file to name instead, not a run-dir problem.
 */
function symlinkTarget(f: string): PathRefusedError {
  const real = isFileFollow(f) ? physicalPath(f) : undefined;
  return new PathRefusedError(
    f,
    "symlink",
    real === undefined
      ? text`symbolic-link target: ${f} - name the intended real file explicitly`
      : text`symbolic-link target: ${f} - name the intended real file explicitly: ${real}`,
  );
}

/**
 * Logical resolution of `f` against `root`: the directory part must exist (links followed); the
 * absolute path is lexical, so a logical path under the root that physically lies elsewhere passes
 * here and is refused later by the stage. A batch passes its `cwd` (the logical cwd, looked up
 * once) to every file.
 */
export function resolveLogical(
  f: string,
  root: string,
  rootName?: RootName,
  cwd: string = logicalCwd(),
  missingDirs = false,
): ResolvedPath {
  const dir = dirname(f);
  if (!isDirectoryFollow(dir) && !(missingDirs && physicalBelowExisting(dir) !== undefined)) {
    throw new PathRefusedError(f, "unresolvable", text`cannot resolve ${f}`);
  }
  const absDir = normalizeLexical(dir, cwd);
  const abs = `${absDir === "/" ? "" : absDir}/${basename(f)}`;
  const rel = under(abs, root);
  if (rel === undefined) {
    throw new PathRefusedError(
      f,
      "outside-root",
      rootName === undefined
        ? text`${f} is outside the snapshot root ${root}`
        : text`${f} is outside the ${rootName} root ${root}`,
    );
  }
  return { arg: f, abs, rel };
}

/**
 * The project root `P`: `CLAUDE_PROJECT_DIR` normalised lexically; else the top level of the git
 * work tree the cwd is in (written logically), as context-scan and text-guard take it; else the
 * logical cwd.
 */
export function projectRoot(): string {
  const dir = envValue("CLAUDE_PROJECT_DIR");
  const cwd = logicalCwd();
  if (dir !== undefined) return normalizeLexical(dir, cwd);
  return logicalGitToplevel() ?? cwd;
}

/** The layers context-guard knows. */
export type Layer = "project" | "global";

/** The guard's roots: project `P`, global `G` and backup root `B = G/backups`. */
export interface GuardRoots {
  /** Project root `P`. */
  project: string;
  /** Global root `G`. */
  global: string;
  /** Backup root `B`. */
  backups: string;
}

/**
 * Compute `P`, `G` and `B` from the environment; throws `EnvironmentError` (`HOME is not set`)
 * without a global root. `P` is resolved when first read (it may ask git for the top level, a
 * child process a command like `list` of an empty backup root never needs).
 */
export function guardRoots(): GuardRoots {
  const global = globalRoot();
  let project: string | undefined;
  return {
    get project(): string {
      return project ??= projectRoot();
    },
    global,
    backups: `${global === "/" ? "" : global}/backups`,
  };
}

/** The root of `layer`. */
export function layerRoot(roots: GuardRoots, layer: Layer): string {
  return layer === "global" ? roots.global : roots.project;
}
