/**
 * What `deno task install-skill <plugin-dir>` installs where
 * (`references/migration.md#what-the-installer-changes`), decided from the plugin's own files:
 *
 * - a skill folder `skills/<name>/` gets the wrapper and bundle of a tool when it holds
 *   `scripts/<tool>.sh` (the bash script it replaces), or when a Markdown file of the plugin calls
 *   `skills/<name>/scripts/<tool>.sh` (or, inside the skill, `scripts/<tool>.sh`);
 * - a skill **checkpoints** when its own Markdown runs text-guard's `checkpoint` (the newest
 *   context-slim does; the released 6.1.x skills never do) — otherwise its guards take
 *   snapshot-trust runs (`references/context-guard.md#snapshot-trust`);
 * - prose is installed when asked (`--prose`) or when a skill calls `prose.sh`: into that skill,
 *   else into `skills/prose/scripts/`, with the `/prose` command file and the plugin's hooks.
 *
 * @module
 */

import { type Tool, TOOLS } from "./tools.ts";

/** One skill folder and what goes into its `scripts/`. */
export interface SkillPlan {
  /** The folder name under `skills/`. */
  name: string;
  /** The tools whose wrapper and bundle go into `skills/<name>/scripts/`, in `TOOLS` order. */
  tools: Tool[];
  /** The skill runs `checkpoint` after its writes (else: snapshot-trust runs). */
  checkpoints: boolean;
}

/** The whole installation. */
export interface InstallPlan {
  /** Skills that get at least one tool, sorted by name. */
  skills: SkillPlan[];
  /** The skill folder prose is installed into, when it is. */
  proseSkill?: string;
}

/** A plugin as the planner reads it: its skill folders and its Markdown files. */
export interface PluginFiles {
  /** Skill folder name → the names of the files in its `scripts/` folder. */
  skills: ReadonlyMap<string, readonly string[]>;
  /** Every Markdown file of the plugin: its path relative to the plugin, and its text. */
  markdown: readonly { path: string; text: string }[];
}

const TOOL_CALL =
  /(?:skills\/([A-Za-z0-9._-]+)\/)?scripts\/(context-scan|context-guard|text-guard|prose)\.sh\b/g;
const CHECKPOINT = /text-guard(?:\.sh)?["'`]?[ \t]+checkpoint\b/;

/** The skill a plugin-relative Markdown path belongs to (`skills/<name>/…`), if any. */
function skillOf(path: string): string | undefined {
  const m = /^skills\/([^/]+)\//.exec(path);
  return m === null ? undefined : m[1];
}

/** Every `(skill, tool)` a Markdown text calls: `skills/<s>/scripts/<t>.sh`, or its own `scripts/<t>.sh`. */
export function calledScripts(text: string, ownSkill: string | undefined): [string, Tool][] {
  const calls: [string, Tool][] = [];
  for (const m of text.matchAll(TOOL_CALL)) {
    const skill = m[1] ?? ownSkill;
    if (skill !== undefined) calls.push([skill, m[2] as Tool]);
  }
  return calls;
}

/** True when `text` runs text-guard's `checkpoint` (the newest generation of the skills). */
export function runsCheckpoint(text: string): boolean {
  return CHECKPOINT.test(text);
}

/** Plan the installation into a plugin (`prose`: install prose even when no skill calls it). */
export function planInstall(plugin: PluginFiles, options: { prose?: boolean } = {}): InstallPlan {
  const wanted = new Map<string, Set<Tool>>();
  const want = (skill: string, tool: Tool) => {
    if (!plugin.skills.has(skill)) return;
    if (!wanted.has(skill)) wanted.set(skill, new Set());
    wanted.get(skill)!.add(tool);
  };
  for (const [skill, files] of plugin.skills) {
    for (const tool of TOOLS) if (files.includes(`${tool}.sh`)) want(skill, tool);
  }
  for (const md of plugin.markdown) {
    for (const [skill, tool] of calledScripts(md.text, skillOf(md.path))) want(skill, tool);
  }
  const checkpointing = new Set(
    plugin.markdown.filter((md) => runsCheckpoint(md.text)).flatMap((md) => skillOf(md.path) ?? []),
  );
  let proseSkill = [...wanted].find(([, tools]) => tools.has("prose"))?.[0];
  if (proseSkill === undefined && options.prose) {
    proseSkill = "prose";
    wanted.set("prose", new Set(["prose"]));
  }
  const skills = [...wanted].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map((
    [name, tools],
  ) => ({
    name,
    tools: TOOLS.filter((t) => tools.has(t)),
    checkpoints: checkpointing.has(name),
  }));
  return proseSkill === undefined ? { skills } : { skills, proseSkill };
}
