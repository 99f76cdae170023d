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

import { agentSource } from "./model/agents.ts";
import { applyBudget, listingBudget } from "./model/budget.ts";
import { pluginHookSource, settingsHookSource } from "./model/hooks.ts";
import { installedPlugins } from "./model/installed.ts";
import { instructionSources } from "./model/instructions.ts";
import {
  commandEntries,
  commandFiles,
  type Entry,
  skillEntries,
  skillFolder,
} from "./model/listing.ts";
import { outputStyleSource } from "./model/output_style.ts";
import { placesOf } from "./model/places.ts";
import { type Plugin, pluginDirectory, pluginParts } from "./model/plugins.ts";
import { join, markdownBelow } from "./model/read.ts";
import { loadingSettings, managedRoot } from "./model/settings.ts";
import type { LoadedSource, LoadingModel, ModelRoots, PluginFile } from "./model/source.ts";
import { LISTING_BUDGET } from "./loading_rules.ts";
import type { RootLabel } from "./schema.ts";

export { applyBudget, listingBudget } from "./model/budget.ts";
export { staticHookOutput } from "./model/hooks.ts";
export { importPath, ruleIsConditional } from "./model/instructions.ts";
export { skillListingPotential } from "./model/listing.ts";
export { memoryFolder, projectSlug } from "./model/memory.ts";
export { pluginName } from "./model/plugins.ts";
export {
  LARGE_FILE_BYTES,
  type LoadedSource,
  type LoadingModel,
  type ModelRoots,
} from "./model/source.ts";

/**
 * The agent files of the folders in `folders` (nearest first): of one name, a folder's
 * alphabetically last file, and a nearer folder's over a farther one's.
 */
function agentListing(folders: readonly { dir: string; root: RootLabel }[]): LoadedSource[] {
  const out: LoadedSource[] = [];
  const named = new Set<string>();
  for (const folder of folders) {
    const own = new Map<string, LoadedSource>();
    for (const path of markdownBelow(folder.dir)) {
      const a = agentSource(path, folder.root, "");
      if (a !== undefined) own.set(a.name!, a); // the alphabetically last of one name (2.1.332)
    }
    for (const [name, a] of own) {
      if (named.has(name)) continue;
      named.add(name);
      out.push(a);
    }
  }
  return out;
}

/**
 * The whole model for `roots`: instruction sources, auto-memory, then the skill listing (managed,
 * global and the project's skills up to its git root, commands, then every plugin's commands and
 * then every plugin's skills, the budget applied to all of them), the agent listing, the hooks'
 * context and the output style (`references/context-scan.md#loaded-figures`).
 */
export function loadingModel(roots: ModelRoots): LoadingModel {
  const places = placesOf(roots.project);
  const managed = roots.managed ?? managedRoot();
  const settings = loadingSettings(places.project, roots.global, managed);
  const instructions = instructionSources(roots, { places, settings, managed });
  const dirs = [...places.listingDirs].reverse(); // the project first, then its parents
  const entries: Entry[] = [];
  const considered = new Set<string>();
  entries.push(
    ...skillEntries(skillFolder(`${managed}/.claude/skills`), "managed", "", considered),
  );
  if (roots.includeGlobal) {
    entries.push(...skillEntries(skillFolder(`${roots.global}/skills`), "global", "", considered));
  }
  for (const dir of dirs) {
    entries.push(
      ...skillEntries(skillFolder(join(dir, ".claude/skills")), "project", "", considered),
    );
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
  // Agents of one name: the project's (nearest folder first) win over the global one.
  const agents = agentListing([
    ...dirs.map((dir) => ({ dir: join(dir, ".claude/agents"), root: "project" as const })),
    ...(roots.includeGlobal ? [{ dir: `${roots.global}/agents`, root: "global" as const }] : []),
  ]);
  // Every plugin's commands, then every plugin's skills, in plugin order (observed:
  // installed-order): the `--plugin-dir` folders, then the installed plugins.
  const plugins: { plugin: Plugin; parts: NonNullable<ReturnType<typeof pluginParts>> }[] = [];
  for (
    const plugin of [
      ...roots.pluginDirs.map(pluginDirectory),
      ...installedPlugins(roots.global, places.project, settings),
    ]
  ) {
    const parts = pluginParts(plugin);
    if (parts !== undefined) plugins.push({ plugin, parts });
  }
  // An installed plugin's sources are the user's own configuration: reported with --global.
  const mark = (plugin: Plugin, s: LoadedSource): LoadedSource =>
    plugin.installed ? { ...s, userLevel: true } : s;
  const markEntry = (plugin: Plugin) => (e: Entry): Entry => ({
    ...e,
    source: mark(plugin, e.source),
  });
  for (const { plugin, parts } of plugins) {
    const files = parts.commands.map((c) => ({ ...c, root: "plugin" as const }));
    entries.push(...commandEntries(files, `${plugin.name}:`).map(markEntry(plugin)));
  }
  const sizes = new Map<string, number>();
  for (const { plugin, parts } of plugins) {
    const skills = skillEntries(parts.skills, "plugin", `${plugin.name}:`, considered);
    for (const e of skills) {
      if (e.source.fileBytes !== undefined) sizes.set(e.source.path, e.source.fileBytes);
    }
    entries.push(...skills.map(markEntry(plugin)));
  }
  const hooks: LoadedSource[] = [];
  const pluginFiles: PluginFile[] = [];
  for (const { plugin, parts } of plugins) {
    // A plugin agent in a subfolder is namespaced by it too (`plugin:sub:name`).
    for (const skill of parts.skills) {
      const size = sizes.get(skill.path);
      pluginFiles.push({
        path: skill.path,
        kind: "skill",
        dir: plugin.dir,
        dataDir: `${roots.global}/plugins/data/${plugin.dataId}`,
        userLevel: plugin.installed,
        ...(size === undefined ? {} : { size }),
      });
    }
    for (const agent of parts.agents) {
      const prefix = `${plugin.name}:${agent.folders.map((f) => `${f}:`).join("")}`;
      const a = agentSource(agent.path, "plugin", prefix, true);
      if (a !== undefined) agents.push(mark(plugin, a));
      pluginFiles.push({
        path: agent.path,
        kind: "agent",
        dir: plugin.dir,
        dataDir: `${roots.global}/plugins/data/${plugin.dataId}`,
        userLevel: plugin.installed,
        ...(a?.fileBytes === undefined ? {} : { size: a.fileBytes }),
      });
    }
    const hook = pluginHookSource(plugin.dir);
    if (hook !== undefined) hooks.push(mark(plugin, hook));
  }
  if (!settings.hooksDisabled) {
    for (const file of settings.files) {
      const hook = settingsHookSource(file);
      if (hook !== undefined) hooks.push(hook);
    }
  }
  // One entry per name, the first listed: global over project, project over parents, skills over
  // commands (observed: name-clashes).
  const names = new Set<string>();
  const listed = entries.filter((e) => {
    if (names.has(e.nameOnly)) return false;
    names.add(e.nameOnly);
    return true;
  });
  const budget = listingBudget(settings.env.get(LISTING_BUDGET.env) ?? roots.budgetOverride);
  const builtinsCut = applyBudget(listed, budget);
  const style = outputStyleSource(places.project, roots.global, settings.outputStyle);
  return {
    sources: [
      ...(style === undefined ? [] : [style]),
      ...instructions.sources,
      ...listed.map((e) => e.source),
      ...agents,
      ...hooks,
    ],
    agentsMdLoaded: instructions.agentsMdLoaded,
    memoryDir: instructions.memoryDir,
    listingFiles: considered,
    instructionFiles: instructions.read,
    excludedFiles: instructions.excluded,
    builtinsCut,
    project: places.project,
    pluginFiles,
  };
}
