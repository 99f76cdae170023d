/**
 * Claude Code's loading rules beyond start-up, as data (`references/context-scan.md#tier-rules`):
 * what it sends when a skill or command is invoked, when an agent is spawned, and when a file is
 * read or written (the on-access part of always-on). Every rule was **observed** on a real Claude
 * Code driven by a scripted local model (`lib/scan/observe/script.ts`) inside a fresh network
 * namespace, and names the versions it was observed on and the fixtures of
 * {@linkcode TIERS_SUITE} that observe it; `tests/context_scan_tiers_observe_test.ts` holds rules
 * and fixtures to each other. The start-up rules are `loading_rules.ts`.
 *
 * @module
 */

/** The Claude Code version the tier rules were observed on (the pinned one). */
export const TIERS_OBSERVED_ON = "2.1.332";

/**
 * Other installed versions the same fixtures were observed on, with the same bytes
 * (`CTXKIT_TIERS_CLAUDE_VERSION=<version>` runs the suite against one).
 */
export const TIERS_ALSO_AGREES_ON: readonly string[] = ["2.1.328"];

/** The differential suite that observes every tier rule (fixture names in `test`). */
export const TIERS_SUITE = "tests/context_scan_tiers_observe_test.ts";

/** One observed rule of the per-invocation, per-spawn or on-access tier. */
export interface TierRule {
  /** The rule, one line. */
  readonly rule: string;
  /** The Claude Code version it was observed on. */
  readonly observed: string;
  /** The fixture(s) of {@linkcode TIERS_SUITE} that observe it (`*` ends a prefix). */
  readonly test: string;
}

function rule(text: string, test: string): TierRule {
  return { rule: text, observed: TIERS_OBSERVED_ON, test };
}

/** Where the body starts: Claude Code's frontmatter pattern, not a line-based one. */
export const SKILL_FRONTMATTER: TierRule = rule(
  "a skill, command or agent file's frontmatter is what /^---\\s*\\n([\\s\\S]*?)---\\s*\\n?/ matches after a byte-order mark: it closes at the first --- anywhere (even inside a value), and the whitespace after that --- (blank lines, CRs, the first line's indent) goes with it; a file without it keeps every leading byte",
  "frontmatter-forms, skill-no-frontmatter, agent-bodies",
);

/** The body a skill or command sends when invoked without arguments. */
export const INVOCATION_BODY: TierRule = rule(
  "the Skill tool sends `Base directory for this skill: <dir>\\n\\n` + the body for a skill (a command: the body alone), the body's trailing newlines kept; without arguments $ARGUMENTS and every named argument (`arguments:` frontmatter) become empty, $N and $ARGUMENTS[N] stay as written, \\$ keeps a following placeholder literal, ${CLAUDE_SKILL_DIR}, ${CLAUDE_PROJECT_DIR}, ${CLAUDE_SESSION_ID} (36 characters) and ${CLAUDE_EFFORT} (the skill's effort:, else the session's — medium, until an invoked skill's effort: changes it) are filled in, and a plugin's ${CLAUDE_PLUGIN_ROOT} and ${CLAUDE_PLUGIN_DATA} (G/plugins/data/<name>-inline for a --plugin-dir, <name>-<marketplace> installed); a second invocation adds a one-line notice",
  "skill-bodies, skill-substitutions*, commands, plugin-tiers*, global-tiers",
);

/** Arguments given to an invocation. */
export const INVOCATION_ARGUMENTS: TierRule = rule(
  "with arguments, $ARGUMENTS is the whole string, $N and $ARGUMENTS[N] its 0-based shell-split words, named arguments the words in order; when nothing was substituted `\\n\\nARGUMENTS: <args>` is appended",
  "skill-arguments",
);

/** Inline shell commands in skills and commands. */
export const INVOCATION_SHELL: TierRule = rule(
  "a body's !`command` (at the start or after whitespace, outside code spans) and ```! fences run at invocation; with disableSkillShellExecution (as the observation runs) each becomes `[shell command execution disabled by policy]`",
  "skill-shell",
);

/** Which skills can be invoked. */
export const INVOCABLE: TierRule = rule(
  "a listed skill or command can be invoked through the Skill tool by its listed name; a nested skills/group/x/SKILL.md is neither listed nor invocable; disable-model-invocation (1, true, yes or on, any case) refuses the Skill tool, and the user's /name (a plugin's /plugin:name) sends the same text, a skill's header included, after `<command-message>` tags — a command's too, listed or not; context: fork sends the body as a subagent's prompt instead; references/ files are never sent with the body",
  "skill-bodies, skills-nested, skill-fork, user-invoked-only",
);

/** A file's Read result. */
export const READ_RESULT: TierRule = rule(
  "the Read tool's result for a whole file is each line (split at \\n, a CR before it dropped) as `<n>\\t<line>`, joined by \\n — a final newline gives a last numbered empty line; an empty file gives a warning instead; over 256 KiB the read is refused",
  "skill-references",
);

/** The agent body a spawn sends. */
export const SPAWN_BODY: TierRule = rule(
  "a spawned agent's request has the system blocks billing header, SDK line and its body (frontmatter removed, trimmed; a plugin agent's ${CLAUDE_PLUGIN_ROOT}, ${CLAUDE_PLUGIN_DATA} and ${CLAUDE_PROJECT_DIR} filled in, a project agent's left as written) + `\\n\\n` + a fixed notes block (the notes alone for an empty body); its tools are its tools: (all without), the start-up instruction block again, the skill listing only with the Skill tool, model: as the request's model, and each skills: entry preloaded after the prompt as `<command-message>` tags + the skill's invocation text",
  "agent-bodies, agent-tools, agent-preload, plugin-tiers*, global-tiers",
);

/** Instruction files sent on access. */
export const ON_ACCESS: TierRule = rule(
  "reading (or writing) a file — even one that does not exist — sends, once per agent: matching user rules, then for each folder from below the project down to the file's folder its CLAUDE.md (and imports), .claude/CLAUDE.md, CLAUDE.local.md and .claude/rules/*.md (their paths: relative to that folder), then matching project rules; each as `<system-reminder>\\nContents of <path>:\\n\\n<text>\\n</system-reminder>`, the text its frontmatter removed and, when it holds `<!--`, CRs turned to newlines and block comments hidden, not trimmed; nothing for a file whose text is blank",
  "on-access-*, rule-already-loaded, user-and-project-rules",
);

/** When hooks fire. */
export const HOOK_EVENTS: TierRule = rule(
  "SessionStart output is sent once at start-up, UserPromptSubmit output with every prompt, PostToolUse output after each tool call (each in the request's system-role message)",
  "hook-events",
);

/** Every tier rule, in the order the reference lists them. */
export const TIER_RULES: readonly TierRule[] = [
  SKILL_FRONTMATTER,
  INVOCATION_BODY,
  INVOCATION_ARGUMENTS,
  INVOCATION_SHELL,
  INVOCABLE,
  READ_RESULT,
  SPAWN_BODY,
  ON_ACCESS,
  HOOK_EVENTS,
];

/** The placeholder a disabled inline shell command becomes. */
export const SHELL_DISABLED = "[shell command execution disabled by policy]";

/** The length of `${CLAUDE_SESSION_ID}`'s value (a UUID). */
export const SESSION_ID_LENGTH = 36;

/** `${CLAUDE_EFFORT}` when the skill names no effort (the default model's). */
export const DEFAULT_EFFORT = "medium";

/** The Read tool's size limit for a whole file. */
export const READ_MAX_BYTES = 256 * 1024;
