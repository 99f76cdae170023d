/**
 * Roots and the two path models of the guard (spec §2).
 *
 * text-guard works on physical paths (links resolved) under root `T`; context-guard checks arguments
 * logically (links kept, like `cd` + `pwd`) against a layer root, then hands them to the text-guard
 * stage, which refuses whatever physically lies elsewhere.
 *
 * @module
 */

import { lstatSync } from "node:fs";
import { basename, dirname } from "node:path";
import { die } from "../exit.ts";
import { gitToplevel } from "../git.ts";
import {
  envValue,
  globalRoot,
  isDirectory,
  logicalCwd,
  normalizeLexical,
  physicalPath,
} from "../paths.ts";

/** A file argument resolved against a root: the absolute path and the root-relative `rel`. */
export interface ResolvedPath {
  /** The argument as the user typed it. */
  arg: string;
  /** Absolute path (physical directory part for text-guard, logical for context-guard). */
  abs: string;
  /** Path relative to the root, `/`-separated, no leading `./`. */
  rel: string;
}

/** `root + "/"`, except `/` itself, so prefix tests work for the filesystem root too. */
export function rootPrefix(root: string): string {
  return root === "/" ? "/" : `${root}/`;
}

/** True when `path` exists as a symbolic link (dangling links included). */
export function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * text-guard's root `T` (§2.1): physical `projectDir` (the stage's or the environment's
 * `CLAUDE_PROJECT_DIR`) when non-empty, else the physical git toplevel of the cwd, else the physical
 * cwd. An invalid `projectDir` dies with `❌ invalid CLAUDE_PROJECT_DIR: <value>`.
 */
export function textGuardRoot(projectDir: string | undefined): string {
  if (projectDir !== undefined && projectDir !== "") {
    const physical = isDirectory(projectDir) ? physicalPath(projectDir) : undefined;
    if (physical === undefined) die(`❌ invalid CLAUDE_PROJECT_DIR: ${projectDir}`);
    return physical;
  }
  const cwd = Deno.cwd();
  const top = gitToplevel(cwd);
  if (top !== undefined) {
    const physical = physicalPath(top);
    if (physical !== undefined) return physical;
  }
  return physicalPath(cwd) ?? cwd;
}

/** The directory part of an argument as `dirname` gives it (`.` when there is none). */
function dirPart(f: string): string {
  return dirname(f);
}

/**
 * Physical resolution of `f` under root `t` (§2.1): refuses links at `f`, unresolvable directories
 * and anything outside `t`.
 */
export function resolvePhysical(f: string, t: string): ResolvedPath {
  if (isSymlink(f)) die(`❌ symbolic-link target: ${f} - name the intended real file explicitly`);
  const dir = dirPart(f);
  const physicalDir = isDirectory(dir) ? physicalPath(dir) : undefined;
  if (physicalDir === undefined) die(`❌ cannot resolve ${f}`);
  const abs = `${physicalDir === "/" ? "" : physicalDir}/${basename(f)}`;
  const prefix = rootPrefix(t);
  if (!abs.startsWith(prefix) || abs.length === prefix.length) {
    die(`❌ ${f} is outside the project root ${t}`);
  }
  return { arg: f, abs, rel: abs.slice(prefix.length) };
}

/**
 * Logical resolution of `f` against `root` (§2.2): the directory part must exist (links followed);
 * the absolute path is lexical, so a logical path under the root that physically lies elsewhere
 * passes here and is refused later by the stage.
 */
export function resolveLogical(f: string, root: string): ResolvedPath {
  const dir = dirPart(f);
  if (!isDirectory(dir)) die(`❌ cannot resolve ${f}`);
  const absDir = normalizeLexical(dir, logicalCwd());
  const abs = `${absDir === "/" ? "" : absDir}/${basename(f)}`;
  const prefix = rootPrefix(root);
  if (!abs.startsWith(prefix) || abs.length === prefix.length) {
    die(`❌ ${f} is outside the snapshot root ${root}`);
  }
  return { arg: f, abs, rel: abs.slice(prefix.length) };
}

/** The project root `P` (§2.2): `CLAUDE_PROJECT_DIR` normalised lexically, else the logical cwd. */
export function projectRoot(): string {
  const dir = envValue("CLAUDE_PROJECT_DIR");
  const cwd = logicalCwd();
  return dir === undefined ? cwd : normalizeLexical(dir, cwd);
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

/** Compute `P`, `G` and `B` from the environment; dies `❌ HOME is not set` without a global root. */
export function guardRoots(): GuardRoots {
  const global = globalRoot();
  return { project: projectRoot(), global, backups: `${global === "/" ? "" : global}/backups` };
}

/** The root of `layer`. */
export function layerRoot(roots: GuardRoots, layer: Layer): string {
  return layer === "global" ? roots.global : roots.project;
}
