/**
 * The settings that shape what Claude Code loads (`references/context-scan.md#settings`): the user's
 * (`G/settings.json`), the project's (`.claude/settings.json`), the local ones
 * (`.claude/settings.local.json`) and the managed policy's (`managed-settings.json`), merged in that
 * order as Claude Code merges them — a later file's key wins, objects merge key by key (a key keeps
 * the place it was first given), lists add up.
 *
 * @module
 */

import {
  type ClaudeSettings,
  ClaudeSettingsSchema,
  entriesOf,
  type HookGroup,
} from "../claude_schema.ts";
import type { RootLabel } from "../schema.ts";
import * as z from "../../_zod.ts";
import { readText } from "./read.ts";

/** Where the managed policy lives on this platform (Claude Code's own choice of folder). */
export function managedRoot(os: typeof Deno.build.os = Deno.build.os): string {
  switch (os) {
    case "darwin":
      return "/Library/Application Support/ClaudeCode";
    case "windows":
      return "C:\\Program Files\\ClaudeCode";
    default:
      return "/etc/claude-code";
  }
}

/** One settings file that was read. */
export interface SettingsFile {
  /** Its path. */
  readonly path: string;
  /** The root its rows belong to. */
  readonly root: RootLabel;
  /** Its parsed content. */
  readonly settings: ClaudeSettings;
  /** Its size in bytes. */
  readonly size: number;
}

/** The merged settings, and the files they came from. */
export interface LoadingSettings {
  /** The files read, in merge order. */
  readonly files: readonly SettingsFile[];
  /** `enabledPlugins`, merged: `name@marketplace` → on, in the order keys were first given. */
  readonly enabledPlugins: ReadonlyMap<string, boolean>;
  /** Every `claudeMdExcludes` pattern of every file. */
  readonly claudeMdExcludes: readonly string[];
  /** `env`, merged (string values only). */
  readonly env: ReadonlyMap<string, string>;
  /** `outputStyle`, the last one given. */
  readonly outputStyle?: string;
  /** True when a file sets `disableAllHooks`. */
  readonly hooksDisabled: boolean;
}

/** The hooks a settings file declares for `event`. */
export function settingsHooks(file: SettingsFile, event: "SessionStart"): readonly HookGroup[] {
  return file.settings.hooks?.[event] ?? [];
}

const EnabledValue = z.deferred(() => z.boolean());
const EnvValue = z.deferred(() => z.union([z.string(), z.number(), z.boolean()]));

function readSettings(path: string, root: RootLabel): SettingsFile | undefined {
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(read.text);
  } catch {
    return undefined; // Claude Code reports the file and goes on without it
  }
  const parsed = ClaudeSettingsSchema.safeParse(value);
  return parsed.success ? { path, root, settings: parsed.data, size: read.size } : undefined;
}

/**
 * The settings of a run in `project` (its physical path) with the global root `global` and the
 * managed policy folder `managed`.
 */
export function loadingSettings(
  project: string,
  global: string,
  managed: string,
): LoadingSettings {
  const files = [
    readSettings(`${global}/settings.json`, "global"),
    readSettings(`${project}/.claude/settings.json`, "project"),
    readSettings(`${project}/.claude/settings.local.json`, "project"),
    readSettings(`${managed}/managed-settings.json`, "managed"),
  ].filter((f): f is SettingsFile => f !== undefined);
  const enabledPlugins = new Map<string, boolean>();
  const env = new Map<string, string>();
  const claudeMdExcludes: string[] = [];
  let outputStyle: string | undefined;
  let hooksDisabled = false;
  for (const { settings } of files) {
    const enabled = entriesOf(settings.enabledPlugins as Record<string, unknown>, EnabledValue);
    for (const [id, on] of enabled) enabledPlugins.set(id, on);
    for (const [name, value] of entriesOf(settings.env as Record<string, unknown>, EnvValue)) {
      env.set(name, String(value));
    }
    claudeMdExcludes.push(...(settings.claudeMdExcludes ?? []));
    if (settings.outputStyle !== undefined) outputStyle = settings.outputStyle;
    if (settings.disableAllHooks === true) hooksDisabled = true;
  }
  return {
    files,
    enabledPlugins,
    claudeMdExcludes,
    env,
    ...(outputStyle === undefined ? {} : { outputStyle }),
    hooksDisabled,
  };
}
