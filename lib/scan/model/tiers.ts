/**
 * The loading model beyond start-up (`references/context-scan.md#tier-rules`): for every skill and
 * command Claude Code lists, what invoking it sends; for every agent it lists, what spawning it
 * sends; for every on-access source, what the first access sends. Built from the start-up model's
 * own listing (so every place a skill or agent comes from — the project, its parents, the global
 * root, plugins — is the same place here). Reads files, never writes.
 *
 * @module
 */

import { basename, dirname } from "../../paths.ts";
import { parseFrontmatter, scalar } from "../frontmatter.ts";
import { statFollow } from "../files.ts";
import { recalled } from "../read_memo.ts";
import type { LimitCode, RootLabel } from "../schema.ts";
import { READ_MAX_BYTES } from "../tier_rules.ts";
import { invocationText, readResult, splitClaudeFrontmatter } from "./invocation.ts";
import { type OnAccessSource, onAccessSources } from "./on_access.ts";
import { readText } from "./read.ts";
import { isTrue } from "./listing.ts";
import { pluginName } from "./plugins.ts";
import type { LoadingModel, ModelRoots } from "./source.ts";
import { utf8 } from "./source.ts";
import { agentSpawn, hasSkillTool } from "./spawn.ts";

/** What invoking one skill or command sends. */
export interface InvocationFigure {
  /** Its file (`SKILL.md` or the command file). */
  readonly path: string;
  /** Its root label. */
  readonly root: RootLabel;
  /** Part of the user's own configuration (an installed plugin's): reported with `--global`. */
  readonly userLevel: boolean;
  /** A skill or a command. */
  readonly kind: "skill" | "command";
  /** The name the Skill tool takes (as listed, without a `(name)` note). */
  readonly name: string;
  /** Bytes of the text sent at an invocation without arguments (a skill's header not counted). */
  readonly bytes: number;
  /** What shaped `bytes`. */
  readonly limits: ReadonlySet<LimitCode>;
  /** False when only the user may invoke it (`disable-model-invocation`). */
  readonly modelInvocable: boolean;
  /** True when it runs forked, its body a subagent's prompt (`context: fork`). */
  readonly forked: boolean;
}

/** What spawning one agent sends. */
export interface SpawnFigure {
  /** Its file. */
  readonly path: string;
  /** Its root label. */
  readonly root: RootLabel;
  /** Part of the user's own configuration (an installed plugin's): reported with `--global`. */
  readonly userLevel: boolean;
  /** The `subagent_type` that spawns it (its listed name). */
  readonly name: string;
  /** Bytes of its body in the subagent's system prompt. */
  readonly bytes: number;
  /** What shaped `bytes`. */
  readonly limits: ReadonlySet<LimitCode>;
  /** Whether it gets the Skill tool (and the skill listing). */
  readonly skillTool: boolean;
  /** The skills it preloads (by name). */
  readonly preloads: readonly string[];
  /** Its `model:`, when it names one. */
  readonly model?: string;
}

/** The whole per-tier model. */
export interface TierModel {
  /** Every listed skill and command (and those only the user may invoke), by file. */
  readonly invocations: ReadonlyMap<string, InvocationFigure>;
  /** Every listed agent, by file. */
  readonly spawns: ReadonlyMap<string, SpawnFigure>;
  /** Every source an access can send, in the order an access sends them. */
  readonly onAccess: readonly OnAccessSource[];
}

/** A plugin's folders, for its files' placeholders. */
export interface PluginFolders {
  /** `${CLAUDE_PLUGIN_ROOT}`. */
  readonly dir: string;
  /** `${CLAUDE_PLUGIN_DATA}`. */
  readonly dataDir: string;
}

/** Plugin folders, deepest first, each with the prefix its files' paths start with. */
type PluginPrefixes = readonly (PluginFolders & { readonly prefix: string })[];

/** `plugins` as {@linkcode pluginOf} looks them up. */
function prefixesOf(plugins: readonly PluginFolders[]): PluginPrefixes {
  return plugins.map((p) => ({ ...p, prefix: `${p.dir}/` }))
    .sort((a, b) => b.dir.length - a.dir.length);
}

/** The plugin a file belongs to (the deepest folder that holds it), if any. */
function pluginOf(path: string, plugins: PluginPrefixes): PluginFolders | undefined {
  return plugins.find((p) => path.startsWith(p.prefix));
}

/**
 * Every plugin's folders: the model's (`--plugin-dir` and installed plugins with skills or
 * agents), then each `--plugin-dir` (`<name>-inline` data) the model names no file of.
 */
function pluginFolders(roots: ModelRoots, model: LoadingModel): PluginFolders[] {
  const out = new Map(model.pluginFiles.map((f) => [f.dir, { dir: f.dir, dataDir: f.dataDir }]));
  for (const dir of roots.pluginDirs) {
    if (!out.has(dir)) {
      out.set(dir, { dir, dataDir: `${roots.global}/plugins/data/${pluginName(dir)}-inline` });
    }
  }
  return [...out.values()];
}

/** The invocation figure of the skill or command file `path`. */
export function invocationFigure(
  path: string,
  entry: { root: RootLabel; userLevel: boolean; kind: "skill" | "command"; name: string },
  roots: ModelRoots,
  plugins: PluginPrefixes = [],
): InvocationFigure | undefined {
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  const plugin = pluginOf(path, plugins);
  const sent = invocationText(read.text, {
    projectDir: roots.project,
    ...(entry.kind === "skill" ? { skillDir: dirname(path) } : {}),
    ...(plugin === undefined ? {} : { pluginRoot: plugin.dir, pluginData: plugin.dataDir }),
  });
  const yaml = splitClaudeFrontmatter(read.text).yaml;
  const fields = yaml === undefined ? new Map() : parseFrontmatter(yaml);
  const disabled = isTrue(fields.get("disable-model-invocation"));
  const limits = new Set<LimitCode>();
  if (sent.frontmatterStripped) limits.add("frontmatter-stripped");
  if (sent.shell) limits.add("shell-runtime");
  if (disabled) limits.add("user-invoked-only");
  return {
    path,
    ...entry,
    bytes: utf8(sent.text),
    limits,
    modelInvocable: !disabled,
    forked: scalar(fields.get("context")) === "fork",
  };
}

/** The Read tool's result for the whole file `path`, in bytes, and what limited it. */
export function readFigure(path: string): { bytes: number; limits: LimitCode[] } {
  // Sized first: a file the Read tool refuses is never read (a text the run has read is sized).
  if (recalled(path)?.kind !== "text") {
    const st = statFollow(path);
    if (!("error" in st) && st.size > READ_MAX_BYTES) {
      return { bytes: 0, limits: ["read-too-large"] };
    }
  }
  const read = readText(path);
  if (read.kind === "large" || (read.kind === "text" && read.size > READ_MAX_BYTES)) {
    return { bytes: 0, limits: ["read-too-large"] };
  }
  if (read.kind !== "text") return { bytes: 0, limits: ["unreadable"] };
  return { bytes: utf8(readResult(read.text)), limits: [] };
}

/**
 * The per-tier model of `roots` from its start-up model `model` (its listing: the skills,
 * commands and agents, wherever they come from) and `nested`, the instruction files below the
 * project the inventory's walk met.
 */
export function tierModel(
  roots: ModelRoots,
  model: LoadingModel,
  nested: readonly string[],
): TierModel {
  const invocations = new Map<string, InvocationFigure>();
  const spawns = new Map<string, SpawnFigure>();
  const plugins = prefixesOf(pluginFolders(roots, model));
  for (const source of model.sources) {
    if (source.name === undefined) continue;
    const name = source.name.replace(/ \([^()]*\)$/, "");
    if (source.loading === "skill-listing" || source.loading === "command-listing") {
      if (invocations.has(source.path)) continue;
      const kind = source.loading === "skill-listing" ? "skill" : "command";
      const entry = {
        root: source.root,
        userLevel: source.userLevel === true,
        kind,
        name,
      } as const;
      const figure = invocationFigure(source.path, entry, roots, plugins);
      if (figure !== undefined) invocations.set(source.path, figure);
    } else if (source.loading === "agent-listing" && !spawns.has(source.path)) {
      const read = readText(source.path);
      if (read.kind !== "text") continue;
      const plugin = pluginOf(source.path, plugins);
      const spawn = agentSpawn(
        read.text,
        plugin === undefined
          ? undefined
          : { root: plugin.dir, data: plugin.dataDir, project: roots.project },
      );
      spawns.set(source.path, {
        path: source.path,
        root: source.root,
        userLevel: source.userLevel === true,
        name,
        bytes: utf8(spawn.body),
        limits: new Set(spawn.frontmatterStripped ? ["frontmatter-stripped"] : []),
        skillTool: hasSkillTool(spawn),
        preloads: spawn.skills,
        ...(spawn.model === undefined ? {} : { model: spawn.model }),
      });
    }
  }
  // Skills and commands Claude Code reads but does not list (disable-model-invocation): the
  // user's /name. (The name is the file's or folder's: the Skill tool never takes it.)
  for (const path of model.listingFiles) {
    if (invocations.has(path)) continue;
    const kind = basename(path) === "SKILL.md" ? "skill" : "command";
    const plugin = pluginOf(path, plugins);
    const root: RootLabel = plugin !== undefined
      ? "plugin"
      : path.startsWith(`${roots.global}/`)
      ? "global"
      : "project";
    const userLevel = model.pluginFiles.some((f) => f.path === path && f.userLevel);
    const name = kind === "skill" ? basename(dirname(path)) : basename(path).replace(/\.md$/, "");
    const entry = { root, userLevel, kind, name } as const;
    const figure = invocationFigure(path, entry, roots, plugins);
    if (figure !== undefined && !figure.modelInvocable) invocations.set(path, figure);
  }
  return {
    invocations,
    spawns,
    // What start-up sent is not sent again on access (a path-scoped rule was read, not sent).
    onAccess: onAccessSources(
      roots,
      nested,
      new Set(model.sources.filter((s) => s.category === "memory-files").map((s) => s.path)),
    ),
  };
}
