/**
 * Root resolution for context-scan (`references/context-scan.md#roots`): the project root `R`
 * (a logical path) and the per-project memory slugs. The global root is `globalRoot` from
 * `lib/paths.ts`.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { gitToplevel } from "../git.ts";
import { envValue, logicalCwd, normalizeLexical } from "../paths.ts";
import { text } from "../text.ts";
import { isDirectoryFollow, physicalPath } from "../_fs/inspect.ts";

/** Normalise an existing directory candidate logically; fall back to its physical path. */
export function logicalDirectory(candidate: string, cwd: string): string {
  const lexical = normalizeLexical(candidate, cwd);
  if (isDirectoryFollow(lexical)) return lexical;
  return physicalPath(candidate) ?? lexical;
}

/**
 * The project root: `--root` (must be a directory, else a {@linkcode UsageError}
 * `not a directory: <value as given>`), else a usable `CLAUDE_PROJECT_DIR`, else the git toplevel
 * of the cwd, else the logical cwd.
 *
 * @example
 * ```ts ignore
 * resolveProjectRoot("lnk/repo/.."); // "<logical cwd>/lnk" — links kept, `..` lexical
 * ```
 */
export function resolveProjectRoot(rootArg: string | undefined): string {
  const cwd = logicalCwd();
  if (rootArg !== undefined) {
    if (!isDirectoryFollow(rootArg)) throw new UsageError(text`not a directory: ${rootArg}`);
    return logicalDirectory(rootArg, cwd);
  }
  const projectDir = envValue("CLAUDE_PROJECT_DIR");
  if (projectDir !== undefined && isDirectoryFollow(projectDir)) {
    return logicalDirectory(projectDir, cwd);
  }
  const top = gitToplevel(Deno.cwd());
  if (top !== undefined && isDirectoryFollow(top)) return logicalDirectory(top, cwd);
  return cwd;
}

/**
 * The per-project memory slugs of `root`: the original `/`→`-` slug, then (when different) Claude
 * Code's slug where every UTF-16 code unit other than an ASCII letter or digit becomes `-`
 * (`references/context-scan.md#per-project-memory`).
 *
 * @example
 * ```ts
 * import { memorySlugs } from "./roots.ts";
 * memorySlugs("/home/u/demo"); // ["-home-u-demo"]
 * memorySlugs("/home/u/my_app.v2"); // ["-home-u-my_app.v2", "-home-u-my-app-v2"]
 * ```
 */
export function memorySlugs(root: string): string[] {
  const original = root.replaceAll("/", "-");
  const claude = root.replace(/[^A-Za-z0-9]/g, "-");
  return claude === original ? [original] : [original, claude];
}

/**
 * The `--plugin-dir` folders, each normalised like `--root` (a {@linkcode UsageError}
 * `not a directory: <value as given>` for one that is not a directory).
 */
export function resolvePluginDirs(dirs: readonly string[]): string[] {
  const cwd = logicalCwd();
  return dirs.map((dir) => {
    if (!isDirectoryFollow(dir)) throw new UsageError(text`not a directory: ${dir}`);
    return logicalDirectory(dir, cwd);
  });
}
