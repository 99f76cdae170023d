/**
 * The per-tier model laid over the inventory (`--loaded`; `references/context-scan.md#tier-rules`):
 * each per-invocation row's `loaded_bytes` is what invoking it sends (a skill or command body, a
 * skill's other file as the Read tool returns it), each per-spawn row's what spawning the agent
 * sends, path-scoped rules and subfolders' instruction files gain `on_access_bytes`, and hook rows
 * say when they fire. Rows the inventory lacks (commands, parents' and plugins' skills and agents,
 * subfolders' instruction files) are added.
 *
 * @module
 */

import type { CandidateRow } from "./discovery.ts";
import { statFollow } from "./files.ts";
import { LIMIT_MEANINGS } from "./loading_rules.ts";
import type { OnAccessSource } from "./model/on_access.ts";
import { readText } from "./model/read.ts";
import { recalled } from "./read_memo.ts";
import { readFigure, type TierModel } from "./model/tiers.ts";
import { PluginHooksSchema } from "./claude_schema.ts";
import type { HookFiring, LimitCode, ScanRow } from "./schema.ts";

const LIMIT_ORDER = Object.keys(LIMIT_MEANINGS) as LimitCode[];

function ordered(limits: Iterable<LimitCode>): LimitCode[] {
  // Every caller passes a fresh array or a set: an array is the list itself.
  const list = Array.isArray(limits) ? limits : [...limits];
  // Most rows have one limit or none: nothing to order.
  if (list.length <= 1) return list;
  const set = new Set(list);
  return LIMIT_ORDER.filter((code) => set.has(code));
}

function laterFigure(bytes: number, limits: Iterable<LimitCode>): LaterFigure {
  return { bytes, limits: ordered(limits) };
}

function sizeOf(path: string): number {
  // A text the run has read is sized (`read_memo.ts`).
  const read = recalled(path);
  if (read?.kind === "text") return read.size;
  const st = statFollow(path);
  return "error" in st ? 0 : st.size;
}

const EVENT_FIRING: Readonly<Record<string, HookFiring>> = {
  SessionStart: "start-up",
  UserPromptSubmit: "every-prompt",
  PreToolUse: "every-tool-call",
  PostToolUse: "every-tool-call",
};

/**
 * When the hooks of a `hooks.json` or settings file fire, in the order start-up, every prompt,
 * every tool call; undefined when it cannot be read or names none of those events.
 */
export function hookFiring(path: string): HookFiring[] | undefined {
  const read = readText(path);
  // No JSON object, no hooks (a hook script, say): spared a JSON.parse that would throw.
  if (read.kind !== "text" || !/^[ \t\n\r]*\{/.test(read.text)) return undefined;
  let events: string[];
  try {
    const parsed = PluginHooksSchema.safeParse(JSON.parse(read.text));
    events = parsed.success ? Object.keys(parsed.data.hooks ?? {}) : [];
  } catch {
    return undefined;
  }
  const fires = new Set(events.map((e) => EVENT_FIRING[e]).filter((f) => f !== undefined));
  const order: HookFiring[] = ["start-up", "every-prompt", "every-tool-call"];
  const out = order.filter((f) => fires.has(f));
  return out.length === 0 ? undefined : out;
}

/** The per-tier rows and figures of one scan. */
export interface TierRows {
  /** The rows the inventory lacks, in the order they follow it. */
  extraRows(candidates: readonly CandidateRow[], includeGlobal: boolean): CandidateRow[];
  /** The per-tier keys of an admitted always-on row, or undefined when it has none. */
  figures(row: ScanRow): Partial<ScanRow> | undefined;
  /** What an admitted per-invocation or per-spawn row sends, and what limited it. */
  later(row: ScanRow): LaterFigure;
}

/** What a per-invocation or per-spawn row sends when its skill, command or agent is used. */
export interface LaterFigure {
  /** Bytes sent. */
  readonly bytes: number;
  /** What shaped `bytes`, in the documented order. */
  readonly limits: LimitCode[];
}

function loadingOf(source: OnAccessSource): CandidateRow["loading"] {
  if (source.kind === "import") return "imported-instruction";
  return source.kind === "rule" ? "path-scoped-rule" : "on-access-instruction";
}

/**
 * The rows and figures of the tier model `tiers`, its paths renamed by `name` (the model names
 * files from the start directory's physical path, the inventory from the root as given).
 */
export function tierRows(tiers: TierModel, name?: (path: string) => string): TierRows {
  // Without a renaming (the start directory is the root as given), the items are the model's own.
  const renamed = <T extends { path: string }>(items: Iterable<T>) =>
    new Map(
      [...items].map((i) =>
        name === undefined ? [i.path, i] : [name(i.path), { ...i, path: name(i.path) }]
      ),
    );
  const onAccess = renamed(tiers.onAccess);
  const invocations = renamed(tiers.invocations.values());
  const spawns = renamed(tiers.spawns.values());
  return {
    extraRows(candidates, includeGlobal) {
      // Only the inventory's rows of files the tiers name can be had already: those, by tier (a
      // set each, so no key is built per row).
      const named = new Set([...invocations.keys(), ...spawns.keys(), ...onAccess.keys()]);
      // Their lengths first: a path of another length is none of them, and is never hashed.
      const lengths = new Set([...named].map((p) => p.length));
      const have = new Map<string, Set<string>>();
      for (const c of candidates) {
        if (!lengths.has(c.path.length) || !named.has(c.path)) continue;
        const paths = have.get(c.tier);
        if (paths === undefined) have.set(c.tier, new Set([c.path]));
        else paths.add(c.path);
      }
      const rows: CandidateRow[] = [];
      // A file row the inventory lacks, sized only then (most are in it already).
      const push = (
        row: Omit<CandidateRow, "kind" | "bytes" | "estimated">,
        userLevel = false,
      ) => {
        let paths = have.get(row.tier);
        // Global and installed-plugin sources are reported with --global only.
        if (paths?.has(row.path) || (!includeGlobal && (row.root === "global" || userLevel))) {
          return;
        }
        if (paths === undefined) have.set(row.tier, paths = new Set());
        paths.add(row.path);
        rows.push({ ...row, kind: "file", bytes: sizeOf(row.path), estimated: false });
      };
      for (const f of invocations.values()) {
        const loading = f.kind === "skill" ? "invoked-skill" : "invoked-command";
        push({ path: f.path, root: f.root, tier: "per-invocation", loading }, f.userLevel);
      }
      for (const f of spawns.values()) {
        push(
          { path: f.path, root: f.root, tier: "per-spawn", loading: "selected-agent" },
          f.userLevel,
        );
      }
      for (const s of onAccess.values()) {
        push({ path: s.path, root: s.root, tier: "always-on", loading: loadingOf(s) });
      }
      return rows;
    },
    figures(row) {
      if (row.kind === "hook-payload") {
        const fires = hookFiring(row.path);
        return fires === undefined ? undefined : { fires };
      }
      const source = row.kind === "file" ? onAccess.get(row.path) : undefined;
      if (source === undefined) return undefined;
      // A path-scoped rule keeps its start-up figures (0, path-scoped); the access's bytes join.
      if (row.loading === "path-scoped-rule") return { on_access_bytes: source.bytes };
      return {
        loaded_bytes: 0,
        loaded_tokens: 0,
        limits: ordered(["on-access", ...source.limits]),
        category: "memory-files",
        on_access_bytes: source.bytes,
        ...(source.importedBy === undefined ? {} : { imported_by: source.importedBy }),
      };
    },
    later(row) {
      if (row.tier === "per-spawn") {
        const spawn = spawns.get(row.path);
        if (spawn !== undefined) return laterFigure(spawn.bytes, spawn.limits);
        return laterFigure(0, [
          row.path.includes("/.claude/agents/") ? "not-listed" : "not-loaded",
        ]);
      }
      if (row.loading === "on-demand") {
        // A skill's other file: read whole by the Read tool, once its skill is in use.
        const at = row.path.lastIndexOf("/references/");
        const skill = at === -1 ? undefined : `${row.path.slice(0, at)}/SKILL.md`;
        if (skill === undefined || !invocations.has(skill)) return laterFigure(0, ["not-loaded"]);
        const read = readFigure(row.path);
        return laterFigure(read.bytes, read.limits);
      }
      const invocation = invocations.get(row.path);
      if (invocation !== undefined) return laterFigure(invocation.bytes, invocation.limits);
      // A SKILL.md or command Claude Code never lists: outside its layout, or a folder too deep.
      return laterFigure(0, ["not-loaded"]);
    },
  };
}
