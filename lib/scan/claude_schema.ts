/**
 * Claude Code's own files, as `--loaded` and `--observe` read them (not ctxkit's documents: every
 * key not named here is kept and ignored): settings, a plugin's manifest and hooks, the installed
 * plugins list, the known marketplaces and a marketplace's catalog. Every one of them read from
 * disk is parsed through the schema here (`references/context-scan.md#installed-plugins`).
 *
 * zod/mini as vendored has no `record`: an object of any keys is a loose object whose values are
 * parsed one by one with the value schema ({@linkcode entriesOf}).
 *
 * @module
 */

import * as z from "../_zod.ts";

/** A string, or a list of strings: the form manifest paths and settings lists take. */
const StringOrList = z.deferred(() => z.union([z.string(), z.array(z.string())]));

/** One hook command of a `hooks` block (settings or a plugin's `hooks/hooks.json`). */
const HookGroupList = z.deferred(() =>
  z.array(z.looseObject({
    matcher: z.optional(z.string()),
    hooks: z.optional(z.array(z.looseObject({
      type: z.optional(z.string()),
      command: z.optional(z.string()),
    }))),
  }))
);

/** A `hooks` object: the events `--loaded` reads. */
const HooksObject = z.deferred(() =>
  z.looseObject({
    SessionStart: z.optional(HookGroupList),
    UserPromptSubmit: z.optional(HookGroupList),
  })
);

/** One group of a hook event: its matcher and commands. */
export type HookGroup = z.infer<typeof HookGroupList>[number];

/**
 * A settings file (`settings.json`, `settings.local.json`, `managed-settings.json`): the fields that
 * shape loading and the ones that could send a request elsewhere or run a credential helper
 * (`references/context-scan.md#what-is-refused`).
 */
export const ClaudeSettingsSchema = z.deferred(() =>
  z.looseObject({
    // Objects of any keys: their entries are read with entriesOf.
    env: z.optional(z.looseObject({})),
    enabledPlugins: z.optional(z.looseObject({})),
    claudeMdExcludes: z.optional(z.array(z.string())),
    outputStyle: z.optional(z.string()),
    hooks: z.optional(HooksObject),
    disableAllHooks: z.optional(z.boolean()),
    apiKeyHelper: z.optional(z.unknown()),
    awsAuthRefresh: z.optional(z.unknown()),
    awsCredentialExport: z.optional(z.unknown()),
    gcpAuthRefresh: z.optional(z.unknown()),
    otelHeadersHelper: z.optional(z.unknown()),
  })
);

/** A parsed settings file. */
export type ClaudeSettings = z.infer<typeof ClaudeSettingsSchema>;

/** A plugin's `hooks/hooks.json`. */
export const PluginHooksSchema = z.deferred(() =>
  z.looseObject({ hooks: z.optional(HooksObject) })
);

/** A parsed plugin `hooks/hooks.json`. */
export type PluginHooks = z.infer<typeof PluginHooksSchema>;

/**
 * A plugin's manifest (`.claude-plugin/plugin.json`, or a marketplace entry standing in for it):
 * its name and the component paths that replace (`commands`, `agents`) or add to (`skills`) the
 * default folders.
 */
export const PluginManifestSchema = z.deferred(() =>
  z.looseObject({ name: z.optional(z.string()), ...componentPaths() })
);

/** The component paths a manifest (or a marketplace entry standing in for one) may give. */
function componentPaths() {
  return {
    commands: z.optional(StringOrList),
    agents: z.optional(StringOrList),
    skills: z.optional(StringOrList),
  };
}

/** A parsed plugin manifest. */
export type PluginManifest = z.infer<typeof PluginManifestSchema>;

/** One install record of `plugins/installed_plugins.json` (version 2). */
export const InstallRecordSchema = z.deferred(() =>
  z.looseObject({
    scope: z.optional(z.string()),
    projectPath: z.optional(z.string()),
    installPath: z.string(),
  })
);

/** A parsed install record. */
export type InstallRecord = z.infer<typeof InstallRecordSchema>;

/** `plugins/installed_plugins.json`: `plugins` maps `name@marketplace` to install records. */
export const InstalledPluginsSchema = z.deferred(() =>
  z.looseObject({
    version: z.optional(z.number()),
    plugins: z.looseObject({}),
  })
);

/** One marketplace of `plugins/known_marketplaces.json`. */
export const KnownMarketplaceSchema = z.deferred(() =>
  z.looseObject({
    source: z.looseObject({
      source: z.string(),
      path: z.optional(z.string()),
      repo: z.optional(z.string()),
    }),
    installLocation: z.string(),
  })
);

/** A parsed known marketplace. */
export type KnownMarketplace = z.infer<typeof KnownMarketplaceSchema>;

/** One plugin entry of a marketplace catalog (`.claude-plugin/marketplace.json`). */
export const MarketplaceEntrySchema = z.deferred(() =>
  z.looseObject({
    name: z.string(),
    source: z.unknown(),
    strict: z.optional(z.boolean()),
    ...componentPaths(),
  })
);

/** A parsed marketplace entry. */
export type MarketplaceEntry = z.infer<typeof MarketplaceEntrySchema>;

/** A marketplace catalog: its plugin entries (each parsed with {@linkcode MarketplaceEntrySchema}). */
export const MarketplaceCatalogSchema = z.deferred(() =>
  z.looseObject({ plugins: z.array(z.unknown()) })
);

/**
 * The entries of a loose object whose values parse with `schema`, in key order; an entry whose
 * value does not parse is left out.
 */
export function entriesOf<T>(
  value: Record<string, unknown> | undefined,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
): [string, T][] {
  const out: [string, T][] = [];
  for (const [key, v] of Object.entries(value ?? {})) {
    const parsed = schema.safeParse(v);
    if (parsed.success) out.push([key, parsed.data]);
  }
  return out;
}
