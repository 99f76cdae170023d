/**
 * Root resolution for context-scan (§2): the project root `R` (logical path) and the per-project
 * memory slugs. The global root is {@linkcode globalRoot} from `lib/paths.ts`.
 *
 * @module
 */

import { die } from "../exit.ts";
import { gitToplevel } from "../git.ts";
import { envValue, isDirectory, logicalCwd, normalizeLexical, physicalPath } from "../paths.ts";

/** Normalise an existing directory candidate logically; fall back to its physical path. */
export function logicalDirectory(candidate: string, cwd: string): string {
  const lexical = normalizeLexical(candidate, cwd);
  if (isDirectory(lexical)) return lexical;
  return physicalPath(candidate) ?? lexical;
}

/**
 * The project root: `--root` (must be a directory, else `❌ not a directory: <value>`), else a
 * usable `CLAUDE_PROJECT_DIR`, else the git toplevel of the cwd, else the logical cwd.
 *
 * @example
 * ```ts ignore
 * resolveProjectRoot("lnk/repo/.."); // "<logical cwd>/lnk" — links kept, `..` lexical
 * ```
 */
export function resolveProjectRoot(rootArg: string | undefined): string {
  const cwd = logicalCwd();
  if (rootArg !== undefined) {
    if (!isDirectory(rootArg)) die(`❌ not a directory: ${rootArg}`);
    return logicalDirectory(rootArg, cwd);
  }
  const projectDir = envValue("CLAUDE_PROJECT_DIR");
  if (projectDir !== undefined && isDirectory(projectDir)) return logicalDirectory(projectDir, cwd);
  const top = gitToplevel(Deno.cwd());
  if (top !== undefined && isDirectory(top)) return logicalDirectory(top, cwd);
  return cwd;
}

/**
 * The per-project memory slugs of `root`: the original `/`→`-` slug, then (when different) Claude
 * Code's slug where every UTF-16 code unit other than an ASCII letter or digit becomes `-` (D7).
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
