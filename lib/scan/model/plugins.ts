/**
 * A plugin's parts as Claude Code loads them (`references/context-scan.md#plugins`): its name, its
 * commands, skills and agents — from the default `commands/`, `skills/` and `agents/` folders, or
 * as its manifest says — and whether it loads at all.
 *
 * - `commands` and `agents` in the manifest replace the default folder (a path is a file, or for
 *   commands a folder of them); an `agents` path that is a folder drops the whole plugin;
 * - `skills` paths add to the default `skills/` folder (each a skill folder, or a folder of them;
 *   a skill reached twice counts once) — except for a marketplace entry whose source is the
 *   marketplace itself (`./`), whose listed skills are the only ones;
 * - a plugin with neither a `skills/` folder nor manifest skills but a `SKILL.md` of its own is one
 *   skill, named after its folder.
 *
 * @module
 */

import { basename, normalizeLexical } from "../../paths.ts";
import { type PluginManifest, PluginManifestSchema } from "../claude_schema.ts";
import { commandFiles, skillFolder } from "./listing.ts";
import { isDirectory, isFile, listNames, markdownBelow, readText, realOrSelf } from "./read.ts";

/** A plugin Claude Code loads: a `--plugin-dir` or an installed plugin. */
export interface Plugin {
  /** The folder its files are read from. */
  readonly dir: string;
  /** Its name: the prefix of its entries (`name:`). */
  readonly name: string;
  /** Its manifest: `plugin.json`, with a marketplace entry's paths over it. */
  readonly manifest: PluginManifest;
  /** A marketplace entry rooted at the marketplace itself that lists skills: only those load. */
  readonly listedSkillsOnly: boolean;
  /** An installed plugin (part of the user's own configuration), not a `--plugin-dir`. */
  readonly installed: boolean;
  /**
   * Its data folder's name below `G/plugins/data/` (`${CLAUDE_PLUGIN_DATA}`): `<name>-inline` for a
   * `--plugin-dir`, `<name>-<marketplace>` for an installed plugin (observed: plugin-tiers).
   */
  readonly dataId: string;
}

/** A command file and its name (`a:b` for `a/b.md`). */
export interface CommandFile {
  readonly path: string;
  readonly name: string;
}

/** A skill: its `SKILL.md` and the name it is listed under (before the plugin prefix). */
export interface SkillFile {
  readonly path: string;
  readonly name: string;
}

/** An agent file and the namespace folders between the agents folder and it. */
export interface AgentFile {
  readonly path: string;
  readonly folders: readonly string[];
}

/** What a plugin adds, in Claude Code's order within the plugin. */
export interface PluginParts {
  readonly commands: readonly CommandFile[];
  readonly skills: readonly SkillFile[];
  readonly agents: readonly AgentFile[];
}

/** `.claude-plugin/plugin.json` of `dir`, or an empty manifest. */
export function readManifest(dir: string): PluginManifest {
  const read = readText(`${dir}/.claude-plugin/plugin.json`);
  if (read.kind !== "text") return {};
  try {
    const parsed = PluginManifestSchema.safeParse(JSON.parse(read.text));
    return parsed.success ? parsed.data : {};
  } catch {
    return {}; // not JSON: no manifest
  }
}

/** The plugin name: `.claude-plugin/plugin.json`'s `name`, else the folder's name. */
export function pluginName(dir: string): string {
  const name = readManifest(dir).name;
  return name !== undefined && name !== "" ? name : basename(dir);
}

/** A `--plugin-dir` folder as a plugin. */
export function pluginDirectory(dir: string): Plugin {
  const manifest = readManifest(dir);
  const name = manifest.name !== undefined && manifest.name !== "" ? manifest.name : basename(dir);
  return {
    dir,
    name,
    manifest,
    listedSkillsOnly: false,
    installed: false,
    dataId: `${name}-inline`,
  };
}

function paths(value: string | string[] | undefined, dir: string): string[] {
  if (value === undefined) return [];
  return (typeof value === "string" ? [value] : value).map((p) => normalizeLexical(p, dir));
}

/** The skills of a folder: itself when it holds a `SKILL.md`, else its skill folders. */
function skillsAt(dir: string): SkillFile[] {
  const entries = listNames(dir);
  // The listing answers whether a SKILL.md is there (none listed: only a look can tell).
  const own = entries.length === 0 || entries.some((e) => e.name === "SKILL.md");
  if (own && isFile(`${dir}/SKILL.md`)) return [{ path: `${dir}/SKILL.md`, name: basename(dir) }];
  return skillFolder(dir, entries);
}

/** A folder name as a skill name: anything but letters, digits, `-` and `_` becomes `-`. */
function skillName(folder: string): string {
  return folder.replace(/[^A-Za-z0-9_-]/g, "-");
}

/** The parts of `plugin`, or undefined when Claude Code drops the whole plugin. */
export function pluginParts(plugin: Plugin): PluginParts | undefined {
  const { dir, manifest } = plugin;
  const agentPaths = paths(manifest.agents, dir);
  if (agentPaths.some(isDirectory)) return undefined; // observed: plugin-manifest-agents-folder
  const agents: AgentFile[] = manifest.agents === undefined
    ? markdownBelow(`${dir}/agents`).map((path) => ({
      path,
      folders: path.slice(`${dir}/agents`.length + 1).split("/").slice(0, -1),
    }))
    : agentPaths.filter(isFile).map((path) => ({ path, folders: [] }));
  const commands: CommandFile[] = manifest.commands === undefined
    ? commandFiles(`${dir}/commands`)
    : paths(manifest.commands, dir).flatMap((path) =>
      isDirectory(path)
        ? commandFiles(path)
        : isFile(path)
        ? [{ path, name: basename(path).replace(/\.md$/, "") }]
        : []
    );
  const skills: SkillFile[] = [];
  const seen = new Set<string>();
  // A skill reached twice counts once: only manifest paths can reach one twice.
  const dedupe = manifest.skills !== undefined;
  const add = (found: SkillFile[]) => {
    for (const s of found) {
      const real = dedupe ? realOrSelf(s.path) : s.path;
      if (seen.has(real)) continue;
      seen.add(real);
      skills.push(s);
    }
  };
  const defaultSkills = `${dir}/skills`;
  const hasDefault = isDirectory(defaultSkills);
  if (hasDefault && !plugin.listedSkillsOnly) add(skillsAt(defaultSkills));
  for (const path of paths(manifest.skills, dir)) {
    if (path !== defaultSkills && isDirectory(path)) add(skillsAt(path));
  }
  if (!hasDefault && manifest.skills === undefined && isFile(`${dir}/SKILL.md`)) {
    add([{ path: `${dir}/SKILL.md`, name: skillName(basename(dir)) }]);
  }
  return { commands, skills, agents };
}
