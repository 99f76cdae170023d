/**
 * The plugin files `deno task install-skill` writes for prose
 * (`references/migration.md#what-the-installer-changes`): the `/prose` command file and the
 * plugin's `hooks/hooks.json` entries, every command going through the installed wrapper by
 * `${CLAUDE_PLUGIN_ROOT}` (so the plugin may move) and bounded by a timeout.
 *
 * @module
 */

import * as z from "zod/mini";
import { CLAUDE_HOOKS } from "../lib/prose/hooks.ts";

/** The wrapper's path as Claude Code expands it in a plugin's commands and hooks. */
export function proseWrapperRef(skill: string): string {
  return `\${CLAUDE_PLUGIN_ROOT}/skills/${skill}/scripts/prose.sh`;
}

/**
 * Seconds a prose hook may run: the first `npx` run fetches Deno (later runs take milliseconds),
 * so no hook gets less than this, nor less than the documented block gives it (`CLAUDE_HOOKS`).
 */
export const HOOK_TIMEOUT_S: number = Math.max(30, ...CLAUDE_HOOKS.map((h) => h.timeout));

/**
 * The hook commands, by event: the events and `prose` arguments of the documented hook block
 * (`CLAUDE_HOOKS` in `lib/prose/hooks.ts`, the one list of them) run through the wrapper — every
 * prompt may activate the flag, every response consumes a turn, the end of a session ends a
 * `session` flag. Output is discarded and failure ignored: exit 2 of a `UserPromptSubmit` hook
 * would block the prompt, and its stdout would enter the context
 * (`references/prose.md#ready-to-copy-claude-code-hook-setup`).
 */
export function proseHookCommands(skill: string): Record<string, string> {
  const commands: Record<string, string> = {};
  for (const { event, args } of CLAUDE_HOOKS) {
    // `match --hook-input` reads the prompt on stdin; the others read nothing.
    const stdin = args.includes("--hook-input") ? "" : " </dev/null";
    commands[event] = `bash "${proseWrapperRef(skill)}" ${
      args.join(" ")
    }${stdin} >/dev/null 2>&1 || true`;
  }
  return commands;
}

const HookSchema = z.looseObject({ type: z.optional(z.string()), command: z.optional(z.string()) });
const GroupSchema = z.looseObject({ hooks: z.optional(z.array(HookSchema)) });
/** A plugin's `hooks/hooks.json` as the installer reads it: unknown keys kept as they are. */
export const PluginHooksSchema = z.looseObject({
  hooks: z.optional(z.record(z.string(), z.array(GroupSchema))),
});

/**
 * `hooks/hooks.json` with the prose hooks added (`existing`: its text, when the plugin has one).
 * Every other hook and key stays; a prose hook already there (the same command) is not added
 * twice. Throws when the existing file is not such a JSON document.
 */
export function mergedHooksJson(existing: string | undefined, skill: string): string {
  const doc = existing === undefined
    ? { hooks: {} }
    : PluginHooksSchema.parse(JSON.parse(existing));
  const hooks = { ...(doc.hooks ?? {}) };
  for (const [event, command] of Object.entries(proseHookCommands(skill))) {
    const groups = [...(hooks[event] ?? [])];
    const present = groups.some((g) => (g.hooks ?? []).some((h) => h.command === command));
    if (!present) {
      groups.push({ hooks: [{ type: "command", command, timeout: HOOK_TIMEOUT_S }] });
    }
    hooks[event] = groups;
  }
  return `${JSON.stringify({ ...doc, hooks }, null, 2)}\n`;
}

/** The `/prose` command file (`commands/prose.md`), routing every form of the seed's table. */
export function proseCommandFile(skill: string): string {
  const wrapper = proseWrapperRef(skill);
  return `---
description: Prose override - answer in readable prose instead of compressed output (on [N turns|block|session], off, level off|minimal|full, status)
argument-hint: "[on [N turns|block|session] | off | level off|minimal|full | status]"
allowed-tools: Bash
---

Run this one command with the arguments below, and show its output verbatim:

\`\`\`
bash "${wrapper}" $ARGUMENTS
\`\`\`

With no arguments, run it with \`on\`. The arguments are one of: \`on\`, \`on N turns\`, \`on block\`,
\`on session\`, \`off\`, \`level off|minimal|full\`, \`status\`. Exit 0 is success; on any other exit
code, show stderr and stop.
`;
}
