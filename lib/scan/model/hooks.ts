/**
 * Hooks' context in the first request (`references/context-scan.md#loaded-figures`): what the
 * `SessionStart` hooks that match `startup` and the `UserPromptSubmit` hooks of a plugin
 * (`hooks/hooks.json`) or a settings file print, where that is plain from the command itself.
 *
 * Claude Code writes a hook's plain output as `SessionStart:startup hook success: <output>` (or
 * `UserPromptSubmit hook success: <output>`) and a blank line; a JSON output naming
 * `hookSpecificOutput.additionalContext` as `SessionStart hook additional context: <text>` and a
 * blank line. Any other command's output is known only when it runs (`hook-runtime`, counted 0).
 *
 * @module
 */

import { type HookGroup, type PluginHooks, PluginHooksSchema } from "../claude_schema.ts";
import type { LimitCode, RootLabel } from "../schema.ts";
import { readText } from "./read.ts";
import type { SettingsFile } from "./settings.ts";
import { type LoadedSource, utf8 } from "./source.ts";

/** What a hook command prints when that is plain from the command itself. */
export function staticHookOutput(command: string): string | undefined {
  const echo =
    /^echo[ \t]+(?:"([^"`$\\]*)"|'([^']*)'|([^\s"'`$\\;&|<>(){}*?[\]~#]+(?:[ \t]+[^\s"'`$\\;&|<>(){}*?[\]~#]+)*))[ \t]*$/
      .exec(command.trim());
  if (echo === null) return undefined;
  return echo[1] ?? echo[2] ?? echo[3];
}

/** The event a hook group belongs to, and the name its output carries. */
type HookEvent = "SessionStart" | "UserPromptSubmit";

function matchesStartup(matcher: string | undefined): boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return true;
  try {
    return new RegExp(`^(?:${matcher})$`).test("startup");
  } catch {
    return matcher === "startup";
  }
}

/** `additionalContext` of a hook's JSON output, when it is one. */
function additionalContext(output: string): string | undefined {
  const text = output.trim();
  if (!text.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(text) as { hookSpecificOutput?: { additionalContext?: unknown } };
    const context = value?.hookSpecificOutput?.additionalContext;
    return typeof context === "string" ? context : "";
  } catch {
    return undefined;
  }
}

/** The context bytes of one event's hook groups, and whether any depends on running it. */
function hookContext(
  groups: readonly HookGroup[],
  event: HookEvent,
): { loaded: number; limits: Set<LimitCode>; any: boolean } {
  const limits = new Set<LimitCode>();
  let loaded = 0;
  let any = false;
  for (const group of groups) {
    if (event === "SessionStart" && !matchesStartup(group.matcher)) continue;
    for (const hook of group.hooks ?? []) {
      if (hook.type !== "command" || hook.command === undefined) continue;
      any = true;
      const output = staticHookOutput(hook.command);
      if (output === undefined) {
        limits.add("hook-runtime");
        continue;
      }
      const context = additionalContext(output);
      if (context !== undefined) {
        if (context !== "") loaded += utf8(`${event} hook additional context: ${context}\n\n`);
      } else if (output.trim() !== "") {
        const name = event === "SessionStart" ? "SessionStart:startup" : event;
        loaded += utf8(`${name} hook success: ${output.trim()}\n\n`);
      }
    }
  }
  return { loaded, limits, any };
}

function hookSource(
  path: string,
  root: RootLabel,
  size: number,
  hooks: { SessionStart?: HookGroup[]; UserPromptSubmit?: HookGroup[] } | undefined,
): LoadedSource | undefined {
  const start = hookContext(hooks?.SessionStart ?? [], "SessionStart");
  const prompt = hookContext(hooks?.UserPromptSubmit ?? [], "UserPromptSubmit");
  if (!start.any && !prompt.any) return undefined;
  return {
    path,
    root,
    category: "hooks",
    kind: "hook-payload",
    loading: "hook-context",
    potential: size,
    loaded: start.loaded + prompt.loaded,
    limits: new Set([...start.limits, ...prompt.limits]),
  };
}

/** A plugin's hooks (`hooks/hooks.json`) as one source, or none when it has no such hooks. */
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
  return hookSource(path, "plugin", read.size, parsed?.hooks);
}

/** A settings file's hooks as one source, or none when it declares no such hooks. */
export function settingsHookSource(file: SettingsFile): LoadedSource | undefined {
  return hookSource(file.path, file.root, file.size, file.settings.hooks);
}
