/**
 * Installed plugins as Claude Code finds them (`references/context-scan.md#installed-plugins`): a
 * plugin `name@marketplace` loads when the merged settings enable it (`enabledPlugins`, in the
 * order its keys were first given), `G/plugins/installed_plugins.json` holds an install record of
 * it that applies here (scope `user` or `managed`, or `project`/`local` for this project), its
 * marketplace is in `G/plugins/known_marketplaces.json` and that marketplace's catalog
 * (`<installLocation>/.claude-plugin/marketplace.json`) lists it.
 *
 * Its folder: for a marketplace added from a local folder (`directory`/`file` source), the entry's
 * source inside that folder; else the record's `installPath` — a path under another
 * `…/plugins/cache/` or `…/plugins/marketplaces/` whose plugins folder is gone is read under this
 * global root's `plugins/` instead (a moved config folder), as Claude Code resolves it.
 *
 * @module
 */

import { normalizeLexical } from "../../paths.ts";
import {
  entriesOf,
  InstalledPluginsSchema,
  type InstallRecord,
  InstallRecordSchema,
  type KnownMarketplace,
  KnownMarketplaceSchema,
  MarketplaceCatalogSchema,
  type MarketplaceEntry,
  MarketplaceEntrySchema,
} from "../claude_schema.ts";
import * as z from "../../_zod.ts";
import { type Plugin, readManifest } from "./plugins.ts";
import { isDirectory, readText, realOrSelf } from "./read.ts";
import type { LoadingSettings } from "./settings.ts";

function readJson(path: string): unknown {
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  try {
    return JSON.parse(read.text);
  } catch {
    return undefined;
  }
}

const Records = z.deferred(() => z.array(z.unknown()));
const KnownMarketplaces = z.deferred(() => z.looseObject({}));

/** The install records of `installed_plugins.json`, by plugin id. */
function installRecords(global: string): Map<string, InstallRecord[]> {
  const parsed = InstalledPluginsSchema.safeParse(
    readJson(`${global}/plugins/installed_plugins.json`),
  );
  const out = new Map<string, InstallRecord[]>();
  if (!parsed.success) return out;
  for (const [id, records] of entriesOf(parsed.data.plugins as Record<string, unknown>, Records)) {
    const valid = records.flatMap((r) => {
      const one = InstallRecordSchema.safeParse(r);
      return one.success ? [one.data] : [];
    });
    out.set(id, valid);
  }
  return out;
}

function knownMarketplaces(global: string): Map<string, KnownMarketplace> {
  const parsed = KnownMarketplaces.safeParse(
    readJson(`${global}/plugins/known_marketplaces.json`),
  );
  if (!parsed.success) return new Map();
  return new Map(entriesOf(parsed.data as Record<string, unknown>, KnownMarketplaceSchema));
}

/** The plugin entries of the catalog at `location`, by name (each catalog read once a run). */
function catalogEntries(
  location: string,
  read: Map<string, Map<string, MarketplaceEntry>>,
): Map<string, MarketplaceEntry> {
  const known = read.get(location);
  if (known !== undefined) return known;
  const entries = new Map<string, MarketplaceEntry>();
  const parsed = MarketplaceCatalogSchema.safeParse(
    readJson(`${location}/.claude-plugin/marketplace.json`),
  );
  for (const raw of parsed.success ? parsed.data.plugins : []) {
    const entry = MarketplaceEntrySchema.safeParse(raw);
    if (entry.success && !entries.has(entry.data.name)) entries.set(entry.data.name, entry.data);
  }
  read.set(location, entries);
  return entries;
}

/**
 * `path` as Claude Code resolves a recorded plugin path: one below `…/plugins/cache/` or
 * `…/plugins/marketplaces/` whose `plugins` folder is not this global root's and does not exist is
 * read below `G/plugins/` instead.
 */
export function resolvePluginPath(path: string, global: string): string {
  const parts = path.split("/");
  for (let i = parts.length - 2; i >= 1; i--) {
    if (parts[i] !== "plugins" || !["cache", "marketplaces"].includes(parts[i + 1])) continue;
    const prefix = parts.slice(0, i + 1).join("/");
    const own = `${global}/plugins`;
    if (prefix === own || isDirectory(prefix)) return path;
    return `${own}/${parts.slice(i + 1).join("/")}`;
  }
  return path;
}

/** True when an install record applies to a run in `project`. */
function applies(record: InstallRecord, project: string): boolean {
  if (record.scope === "project" || record.scope === "local") {
    return record.projectPath !== undefined &&
      realOrSelf(record.projectPath) === realOrSelf(project);
  }
  return true;
}

const LOCAL_SOURCES = new Set(["directory", "file"]);

/** The installed plugins Claude Code loads for a run in `project`, in `enabledPlugins` order. */
export function installedPlugins(
  global: string,
  project: string,
  settings: LoadingSettings,
): Plugin[] {
  const enabled = [...settings.enabledPlugins].filter(([, on]) => on).map(([id]) => id);
  if (enabled.length === 0) return [];
  const records = installRecords(global);
  const markets = knownMarketplaces(global);
  const plugins: Plugin[] = [];
  const catalogs = new Map<string, Map<string, MarketplaceEntry>>();
  for (const id of enabled) {
    const at = id.lastIndexOf("@");
    if (at <= 0) continue;
    const name = id.slice(0, at);
    const market = markets.get(id.slice(at + 1));
    if (market === undefined) continue;
    const location = LOCAL_SOURCES.has(market.source.source)
      ? market.installLocation
      : resolvePluginPath(market.installLocation, global);
    const entry = catalogEntries(location, catalogs).get(name);
    if (entry === undefined) continue;
    // A folder that is there (an install record's is looked at as it is chosen).
    const dir = LOCAL_SOURCES.has(market.source.source) && typeof entry.source === "string"
      ? [normalizeLexical(entry.source, location)].find(isDirectory)
      : (records.get(id) ?? []).filter((r) => applies(r, project))
        .map((r) => resolvePluginPath(r.installPath, global))
        .find(isDirectory);
    if (dir === undefined) continue;
    const own = readManifest(dir);
    const manifest = {
      ...own,
      ...(entry.commands === undefined ? {} : { commands: entry.commands }),
      ...(entry.agents === undefined ? {} : { agents: entry.agents }),
      ...(entry.skills === undefined ? {} : { skills: entry.skills }),
    };
    const rootSource = typeof entry.source === "string" &&
      ["./", ".", ""].includes(entry.source.replace(/\/+$/, "/"));
    plugins.push({
      dir,
      name: own.name !== undefined && own.name !== "" ? own.name : name,
      manifest,
      listedSkillsOnly: rootSource && entry.skills !== undefined,
      installed: true,
      dataId: `${name}-${id.slice(at + 1)}`,
    });
  }
  return plugins;
}
