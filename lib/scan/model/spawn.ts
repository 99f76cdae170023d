/**
 * What Claude Code sends when it spawns an agent (`references/context-scan.md#tier-rules`): the
 * agent's body in the subagent's system prompt, and what its frontmatter asks for — its tools,
 * its model and the skills it preloads. Pure string functions; the rules are `../tier_rules.ts`.
 *
 * @module
 */

import { parseFrontmatter, scalar } from "../frontmatter.ts";
import { splitClaudeFrontmatter } from "./invocation.ts";

/** An agent file as a spawn uses it. */
export interface AgentSpawn {
  /** The body the subagent's system prompt carries: frontmatter removed, trimmed. */
  readonly body: string;
  /** True when a frontmatter was removed. */
  readonly frontmatterStripped: boolean;
  /** The `tools:` it names (empty: every tool). */
  readonly tools: readonly string[];
  /** The skills it preloads (`skills:`), by name. */
  readonly skills: readonly string[];
  /** Its `model:`, when it names one. */
  readonly model?: string;
}

function list(value: string | string[] | undefined): string[] {
  const items = value === undefined ? [] : Array.isArray(value) ? value : value.split(",");
  return items.map((s) => s.trim()).filter((s) => s !== "");
}

/** A plugin agent's placeholders: its plugin's folders and the project. */
export interface PluginPlaces {
  /** `${CLAUDE_PLUGIN_ROOT}`. */
  readonly root: string;
  /** `${CLAUDE_PLUGIN_DATA}`. */
  readonly data?: string;
  /** `${CLAUDE_PROJECT_DIR}`. */
  readonly project: string;
}

/**
 * The spawn of the agent file `fileText`; a plugin agent's body has its plugin's placeholders
 * filled in (`plugin`: `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}`, `${CLAUDE_PROJECT_DIR}`; a
 * project's agent keeps them as written).
 *
 * @example
 * ```ts
 * import { agentSpawn } from "./spawn.ts";
 * agentSpawn("---\nname: a\ntools: Read, Skill\n---\n\n  Be brief.\n").body; // "Be brief."
 * ```
 */
export function agentSpawn(fileText: string, plugin?: PluginPlaces): AgentSpawn {
  const split = splitClaudeFrontmatter(fileText);
  const fields = split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml);
  let body = split.body;
  if (plugin !== undefined) {
    body = body.replaceAll("${CLAUDE_PLUGIN_ROOT}", () => plugin.root)
      .replaceAll("${CLAUDE_PROJECT_DIR}", () => plugin.project);
    if (plugin.data !== undefined) {
      body = body.replaceAll("${CLAUDE_PLUGIN_DATA}", () => plugin.data!);
    }
  }
  const model = scalar(fields.get("model"));
  return {
    body: body.trim(),
    frontmatterStripped: split.yaml !== undefined,
    tools: list(fields.get("tools")),
    skills: list(fields.get("skills")),
    ...(model === undefined || model === "" ? {} : { model }),
  };
}

/** True when a spawned agent gets the Skill tool (and with it the skill listing). */
export function hasSkillTool(spawn: AgentSpawn): boolean {
  return spawn.tools.length === 0 || spawn.tools.includes("Skill") || spawn.tools.includes("*");
}
