/**
 * The groups a start-up context is counted in, named and ordered as Claude Code's own `/context`
 * shows them, so a report can be read beside it line for line. `--observe` fills every group;
 * `--loaded` models the groups that files own (memory files, skills, custom agents, hooks).
 * Contract: `references/context-scan.md#categories`.
 *
 * @module
 */

/** One group's key in the JSON document. */
export type ContextCategory =
  | "system-prompt"
  | "tools"
  | "memory-files"
  | "skills"
  | "agents"
  | "hooks"
  | "environment"
  | "messages"
  | "unattributed";

/** Every group, in report order, with the title the table prints (as `/context` names it). */
export const CONTEXT_CATEGORIES: readonly { key: ContextCategory; title: string }[] = [
  { key: "system-prompt", title: "System prompt" },
  { key: "tools", title: "System tools" },
  { key: "memory-files", title: "Memory files" },
  { key: "skills", title: "Skills" },
  { key: "agents", title: "Custom agents" },
  { key: "hooks", title: "Hooks' context" },
  { key: "environment", title: "Environment" },
  { key: "messages", title: "Messages" },
  { key: "unattributed", title: "Unattributed" },
];
