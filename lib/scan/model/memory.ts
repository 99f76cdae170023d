/**
 * Auto-memory as Claude Code loads it (`references/context-scan.md#loaded-figures`): the project
 * folder's slug, the memory folder, and `MEMORY.md`'s index cut to its limits.
 *
 * @module
 */

import { memoryIndexText, shownText } from "../claude_text.ts";
import { MEMORY_INDEX } from "../loading_rules.ts";
import type { LimitCode } from "../schema.ts";
import type { Places } from "./places.ts";
import { readText } from "./read.ts";
import { type LoadedSource, utf8 } from "./source.ts";

/**
 * Claude Code's project folder name for `path`: every UTF-16 unit outside `[A-Za-z0-9]` as `-`;
 * past {@linkcode MEMORY_INDEX.maxSlug} units, the first ones, `-` and a base-36 hash of the path
 * (`(h << 5) - h + unit`, 32-bit, its absolute value).
 *
 * @example
 * ```ts
 * import { projectSlug } from "./memory.ts";
 * projectSlug("/home/u/my_app.v2"); // "-home-u-my-app-v2"
 * ```
 */
export function projectSlug(path: string): string {
  const slug = path.replace(/[^A-Za-z0-9]/g, "-");
  if (slug.length <= MEMORY_INDEX.maxSlug) return slug;
  let hash = 0;
  for (let i = 0; i < path.length; i++) hash = ((hash << 5) - hash + path.charCodeAt(i)) | 0;
  return `${slug.slice(0, MEMORY_INDEX.maxSlug)}-${Math.abs(hash).toString(36)}`;
}

/**
 * The auto-memory folder Claude Code reads from `places`: its main checkout's (a worktree), else its
 * git root's, else the start directory's.
 */
export function memoryFolder(global: string, places: Places): string {
  const owner = places.mainCheckout ?? places.gitRoot ?? places.project;
  return `${global}/projects/${projectSlug(owner)}/memory`;
}

/** `MEMORY.md` of `project`'s memory folder as a source (none when it sends nothing). */
export function memoryIndexSource(
  global: string,
  places: Places,
): { source: LoadedSource | undefined; memoryDir: string } {
  const memoryDir = memoryFolder(global, places);
  const memory = `${memoryDir}/MEMORY.md`;
  const read = readText(memory);
  const source = (potential: number, loaded: number, limits: Set<LimitCode>) => ({
    memoryDir,
    source: {
      path: memory,
      root: "project" as const,
      category: "memory-files" as const,
      kind: "file" as const,
      loading: "memory-index-limited" as const,
      potential,
      loaded,
      limits,
    },
  });
  if (read.kind === "text") {
    const shown = shownText(read.text);
    const cut = memoryIndexText(shown.text);
    const limits = new Set<LimitCode>();
    if (shown.frontmatterStripped) limits.add("frontmatter-stripped");
    if (shown.commentsHidden) limits.add("html-comments-hidden");
    if (cut.truncated) limits.add("memory-truncated");
    if (cut.text !== "") return source(read.size, utf8(cut.text), limits);
  } else if (read.kind === "large") {
    return source(read.size, 0, new Set(["estimated-large-file"]));
  } else if (read.kind === "unreadable") {
    return source(0, 0, new Set(["unreadable"]));
  }
  return { memoryDir, source: undefined };
}
