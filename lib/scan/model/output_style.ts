/**
 * The output style (`references/context-scan.md#settings`): the settings' `outputStyle` names a
 * style file — `.claude/output-styles/*.md` of the start directory, else `G/output-styles/*.md` —
 * by its frontmatter `name` (else its file name). Claude Code sends its body (frontmatter stripped,
 * trimmed) as a `# Output Style: <name>` section and a reminder line in the system-role message;
 * the source counts both. A built-in style has no file and is not a source.
 *
 * @module
 */

import { scalar, splitFrontmatter } from "../frontmatter.ts";
import type { RootLabel } from "../schema.ts";
import { frontmatterOf, markdownBelow, readText } from "./read.ts";
import { type LoadedSource, utf8 } from "./source.ts";

/** The output style source of a run, or undefined when none (or a built-in one) is set. */
export function outputStyleSource(
  project: string,
  global: string,
  style: string | undefined,
): LoadedSource | undefined {
  if (style === undefined || style === "") return undefined;
  const folders: { dir: string; root: RootLabel }[] = [
    { dir: `${project}/.claude/output-styles`, root: "project" },
    { dir: `${global}/output-styles`, root: "global" },
  ];
  for (const { dir, root } of folders) {
    for (const path of markdownBelow(dir)) {
      const own = scalar(frontmatterOf(path).get("name"));
      const name = own !== undefined && own !== ""
        ? own
        : path.slice(path.lastIndexOf("/") + 1, -3);
      if (name !== style) continue;
      const read = readText(path);
      if (read.kind !== "text") return undefined;
      const body = splitFrontmatter(read.text.replace(/^\uFEFF/, "")).body.trim();
      const sent = `# Output Style: ${name}\n${body}\n\n` +
        `${name} output style is active. Remember to follow the specific guidelines for this style.\n\n`;
      return {
        path,
        root,
        category: "system-prompt",
        kind: "file",
        loading: "output-style",
        potential: read.size,
        loaded: utf8(sent),
        limits: new Set(),
      };
    }
  }
  return undefined;
}
