/**
 * Plugins as Claude Code loads them (`references/context-scan.md#loaded-figures`): a plugin's name
 * and its `SessionStart` hooks' context.
 *
 * @module
 */

import { basename } from "../../paths.ts";
import {
  type LimitCode,
  type PluginHooks,
  PluginHooksSchema,
  PluginManifestSchema,
} from "../schema.ts";
import { readText } from "./read.ts";
import { type LoadedSource, utf8 } from "./source.ts";

/** The plugin name: `.claude-plugin/plugin.json`'s `name`, else the folder's name. */
export function pluginName(dir: string): string {
  const read = readText(`${dir}/.claude-plugin/plugin.json`);
  if (read.kind === "text") {
    try {
      const parsed = PluginManifestSchema.safeParse(JSON.parse(read.text));
      if (parsed.success && parsed.data.name !== "") return parsed.data.name;
    } catch { /* not JSON: the folder's name */ }
  }
  return basename(dir);
}

/** What a `SessionStart` command prints when that is plain from the command itself. */
export function staticHookOutput(command: string): string | undefined {
  const echo =
    /^echo[ \t]+(?:"([^"`$\\]*)"|'([^']*)'|([^\s"'`$\\;&|<>(){}*?[\]~#]+(?:[ \t]+[^\s"'`$\\;&|<>(){}*?[\]~#]+)*))[ \t]*$/
      .exec(command.trim());
  if (echo === null) return undefined;
  return echo[1] ?? echo[2] ?? echo[3];
}

/**
 * A plugin's `SessionStart` hooks (`hooks/hooks.json`) as one source: the context the start-up hooks
 * inject (`SessionStart:startup hook success: <output>` and a blank line each) where the output is
 * plain from the command (`echo text`); any other command's output is known only when it runs
 * (`hook-runtime`, counted 0).
 */
export function pluginHookSource(dir: string): LoadedSource | undefined {
  const path = `${dir}/hooks/hooks.json`;
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  let parsed: PluginHooks | undefined;
  try {
    const result = PluginHooksSchema.safeParse(JSON.parse(read.text));
    parsed = result.success ? result.data : undefined;
  } catch {
    parsed = undefined;
  }
  const groups = parsed?.hooks?.SessionStart ?? [];
  if (groups.length === 0) return undefined;
  const limits = new Set<LimitCode>();
  let loaded = 0;
  for (const group of groups) {
    let matches = true;
    try {
      matches = group.matcher === undefined || group.matcher === "" ||
        group.matcher === "*" || new RegExp(`^(?:${group.matcher})$`).test("startup");
    } catch {
      matches = group.matcher === "startup";
    }
    if (!matches) continue;
    for (const hook of group.hooks ?? []) {
      if (hook.type !== "command" || hook.command === undefined) continue;
      const output = staticHookOutput(hook.command);
      if (output === undefined) limits.add("hook-runtime");
      else if (output.trim() !== "") {
        loaded += utf8(`SessionStart:startup hook success: ${output.trim()}\n\n`);
      }
    }
  }
  return {
    path,
    root: "plugin",
    category: "hooks",
    kind: "hook-payload",
    loading: "hook-context",
    potential: read.size,
    loaded,
    limits,
  };
}
