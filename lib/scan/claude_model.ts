/**
 * Claude Code's loading model (`--loaded`; `references/context-scan.md#loaded-figures`): every
 * source Claude Code puts into a session's first request, found the way Claude Code finds it and
 * sized as the exact text it sends — each instruction file and each import its own source, each
 * skill, command and agent listing entry its own source, with the listing budget applied to the
 * whole listing. The rules and their numbers are `loading_rules.ts`; the text rules
 * `claude_text.ts`. Reads files (each instruction file once, whole, up to 8 MiB), never writes.
 *
 * @module
 */

import { dirname } from "../paths.ts";
import { agentSource } from "./model/agents.ts";
import { applyBudget, listingBudget } from "./model/budget.ts";
import { instructionSources } from "./model/instructions.ts";
import { commandEntries, commandFiles, type Entry, skillEntries } from "./model/listing.ts";
import { pluginHookSource, pluginName } from "./model/plugins.ts";
import { ancestry, join, markdownBelow } from "./model/read.ts";
import type { LoadedSource, LoadingModel, ModelRoots } from "./model/source.ts";
import type { RootLabel } from "./schema.ts";

export { applyBudget, listingBudget } from "./model/budget.ts";
export { importPath, ruleIsConditional } from "./model/instructions.ts";
export { skillListingPotential } from "./model/listing.ts";
export { memoryFolder, projectSlug } from "./model/memory.ts";
export { pluginName, staticHookOutput } from "./model/plugins.ts";
export {
  LARGE_FILE_BYTES,
  type LoadedSource,
  type LoadingModel,
  type ModelRoots,
} from "./model/source.ts";

/**
 * The whole model for `roots`: instruction sources, auto-memory, then the skill listing (global
 * skills, the project's and its parents' skills, commands, then plugins' commands and skills, the
 * budget applied to all of them), the agent listing and plugin hooks.
 */
export function loadingModel(roots: ModelRoots): LoadingModel {
  const instructions = instructionSources(roots);
  const dirs = ancestry(roots.project).reverse(); // the project first, then its parents
  const entries: Entry[] = [];
  const considered = new Set<string>();
  if (roots.includeGlobal) {
    entries.push(...skillEntries(`${roots.global}/skills`, "global", "", considered));
  }
  for (const dir of dirs) {
    entries.push(...skillEntries(join(dir, ".claude/skills"), "project", "", considered));
  }
  const commands: { path: string; name: string; root: RootLabel }[] = [];
  if (roots.includeGlobal) {
    for (const c of commandFiles(`${roots.global}/commands`)) {
      commands.push({ ...c, root: "global" });
    }
  }
  for (const dir of dirs) {
    for (const c of commandFiles(join(dir, ".claude/commands"))) {
      commands.push({ ...c, root: "project" });
    }
  }
  commands.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const c of commands) considered.add(c.path);
  entries.push(...commandEntries(commands, ""));
  const agents: LoadedSource[] = [];
  // Agents of one name: the project's (nearest folder first) win over the global one.
  const agentFiles: { path: string; root: RootLabel }[] = [];
  for (const dir of dirs) {
    for (const p of markdownBelow(join(dir, ".claude/agents"))) {
      agentFiles.push({ path: p, root: "project" });
    }
  }
  if (roots.includeGlobal) {
    for (const p of markdownBelow(`${roots.global}/agents`)) {
      agentFiles.push({ path: p, root: "global" });
    }
  }
  const hooks: LoadedSource[] = [];
  for (const dir of roots.pluginDirs) {
    const prefix = `${pluginName(dir)}:`;
    const pluginCommands = commandFiles(`${dir}/commands`).map((c) => ({
      ...c,
      root: "plugin" as const,
    }));
    entries.push(...commandEntries(pluginCommands, prefix));
    entries.push(...skillEntries(`${dir}/skills`, "plugin", prefix, considered));
    // A plugin agent in a subfolder is namespaced by it too (`plugin:sub:name`).
    for (const p of markdownBelow(`${dir}/agents`)) {
      const folders = dirname(p).slice(`${dir}/agents`.length).split("/").filter((f) => f !== "");
      const a = agentSource(p, "plugin", `${prefix}${folders.map((f) => `${f}:`).join("")}`);
      if (a !== undefined) agents.push(a);
    }
    const hook = pluginHookSource(dir);
    if (hook !== undefined) hooks.push(hook);
  }
  const named = new Set<string>();
  for (const f of agentFiles) {
    const a = agentSource(f.path, f.root, "");
    if (a === undefined || named.has(a.name!)) continue;
    named.add(a.name!);
    agents.push(a);
  }
  // One entry per name, the first listed: global over project, project over parents, skills over
  // commands (observed: name-clashes).
  const names = new Set<string>();
  const listed = entries.filter((e) => {
    if (names.has(e.nameOnly)) return false;
    names.add(e.nameOnly);
    return true;
  });
  const builtinsCut = applyBudget(listed, listingBudget(roots.budgetOverride));
  return {
    sources: [...instructions.sources, ...listed.map((e) => e.source), ...agents, ...hooks],
    agentsMdLoaded: instructions.agentsMdLoaded,
    memoryDir: instructions.memoryDir,
    listingFiles: considered,
    instructionFiles: instructions.read,
    builtinsCut,
  };
}
