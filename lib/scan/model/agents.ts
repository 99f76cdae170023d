/**
 * Agent listing entries as Claude Code writes them (`references/context-scan.md#loaded-figures`):
 * `- name: description (Tools: …)`.
 *
 * @module
 */

import { parseFrontmatter, scalar, splitFrontmatter } from "../frontmatter.ts";
import type { RootLabel } from "../schema.ts";
import { readText } from "./read.ts";
import { type LoadedSource, utf8 } from "./source.ts";

/** The agent listing entry of the agent file `path`, or undefined when it lists none. */
export function agentSource(
  path: string,
  root: RootLabel,
  prefix: string,
  plugin = false,
): LoadedSource | undefined {
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  const split = splitFrontmatter(read.text.replace(/^\uFEFF/, ""));
  const fields = split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml);
  const name = scalar(fields.get("name"));
  const written = scalar(fields.get("description"));
  // A plugin agent's description loses its final newline (a folded block's); a project's keeps it.
  const description = plugin ? written?.replace(/\n$/, "") : written;
  if (name === undefined || name === "" || description === undefined || description === "") {
    return undefined;
  }
  const tools = fields.get("tools");
  const disallowed = fields.get("disallowedTools");
  const list = (v: unknown) =>
    (typeof v === "string" ? v.split(",") : Array.isArray(v) ? v : []).map((s) => String(s).trim())
      .filter((s) => s !== "");
  const denied = list(disallowed);
  // `*` is every tool; a tool both allowed and disallowed is not allowed (observed:
  // agents-frontmatter-quirks).
  const allowed = list(tools).filter((t) => t !== "*" && !denied.includes(t));
  const everything = list(tools).length === 0 || list(tools).includes("*");
  const toolText = !everything
    ? allowed.join(", ")
    : denied.length > 0
    ? `All tools except ${denied.join(", ")}`
    : "All tools";
  const entry = `- ${prefix}${name}: ${description} (Tools: ${toolText})\n`;
  return {
    path,
    root,
    category: "agents",
    kind: "field:description",
    loading: "agent-listing",
    potential: utf8(entry),
    loaded: utf8(entry),
    limits: new Set(),
    name: `${prefix}${name}`,
    fileBytes: read.size,
  };
}
