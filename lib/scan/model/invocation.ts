/**
 * What Claude Code sends when a skill or command is invoked (`references/context-scan.md#tier-rules`):
 * the body after Claude Code's own frontmatter pattern, its placeholders filled in, its inline
 * shell commands as the observation runs them (disabled); and a file as the Read tool returns it.
 * Pure string functions, one pass each; the rules and numbers are `../tier_rules.ts`.
 *
 * @module
 */

import { parseFrontmatter, scalar } from "../frontmatter.ts";
import { DEFAULT_EFFORT, SESSION_ID_LENGTH, SHELL_DISABLED } from "../tier_rules.ts";

/** JavaScript's `\s`: what Claude Code's frontmatter pattern treats as whitespace. */
function isJsSpace(c: string): boolean {
  return /\s/.test(c);
}

/** A file split as Claude Code splits a skill, command or agent file. */
export interface ClaudeFrontmatter {
  /** The frontmatter text between the fences, or undefined when there is none. */
  readonly yaml: string | undefined;
  /** Everything after the closing `---` and the whitespace after it (the whole text without one). */
  readonly body: string;
}

/**
 * Split `text` the way Claude Code does for skills, commands, agents and on-access files:
 * `/^---\s*\n([\s\S]*?)---\s*\n?/` after a byte-order mark — the frontmatter closes at the first
 * `---` anywhere after the opening line, and the whitespace after it goes with it. Linear: the
 * pattern's one match is found by hand.
 *
 * @example
 * ```ts
 * import { splitClaudeFrontmatter } from "./invocation.ts";
 * splitClaudeFrontmatter("---\nd: x\n---\n\n  body\n").body; // "body\n"
 * ```
 */
export function splitClaudeFrontmatter(text: string): ClaudeFrontmatter {
  const t = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (!t.startsWith("---")) return { yaml: undefined, body: text };
  // `\s*\n`: the whitespace run after the fence must hold a newline; the greedy match ends at
  // its last one (an earlier one could only start the search for `---` sooner, in whitespace).
  let at = 3;
  let lastNewline = -1;
  while (at < t.length && isJsSpace(t[at])) {
    if (t[at] === "\n") lastNewline = at;
    at++;
  }
  if (lastNewline === -1) return { yaml: undefined, body: text };
  const close = t.indexOf("---", lastNewline + 1);
  if (close === -1) return { yaml: undefined, body: text };
  let end = close + 3;
  while (end < t.length && isJsSpace(t[end])) end++;
  return { yaml: t.slice(lastNewline + 1, close), body: t.slice(end) };
}

/** Where an invoked skill or command lives, for its placeholders. */
export interface InvocationContext {
  /** The skill's folder (`${CLAUDE_SKILL_DIR}`); undefined for a command. */
  readonly skillDir?: string;
  /** The project root (`${CLAUDE_PROJECT_DIR}`). */
  readonly projectDir: string;
  /** The plugin's folder (`${CLAUDE_PLUGIN_ROOT}`) when the file is a plugin's. */
  readonly pluginRoot?: string;
  /** The plugin's data folder (`${CLAUDE_PLUGIN_DATA}`) when the file is a plugin's. */
  readonly pluginData?: string;
}

/** The invocation of one file: its text as sent, and what shaped it. */
export interface InvocationText {
  /** The text Claude Code sends (the body; a skill's header line is not counted). */
  readonly text: string;
  /** True when a frontmatter was removed. */
  readonly frontmatterStripped: boolean;
  /** True when the body runs shell commands at invocation (their output is known only then). */
  readonly shell: boolean;
}

const EFFORTS = new Set(["low", "medium", "high", "xhigh", "max"]);

/** Named arguments from `arguments:` (words; none empty or all digits), longest first. */
function argumentNames(value: string | string[] | undefined): string[] {
  const words = value === undefined ? [] : Array.isArray(value) ? value : value.split(/\s+/);
  return words.filter((w) => w.trim() !== "" && !/^\d+$/.test(w)).sort((a, b) =>
    b.length - a.length
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A shell-style split of an argument string (quotes group words), as `$N` reads it; falls back to
 * whitespace words when quotes are unbalanced.
 */
export function argumentWords(args: string): string[] {
  if (args.trim() === "") return [];
  const words: string[] = [];
  let current = "";
  let started = false;
  let quote: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const c = args[i];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < args.length) current += args[++i];
      else current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      started = true;
    } else if (c === "\\" && i + 1 < args.length) {
      current += args[++i];
      started = true;
    } else if (/\s/.test(c)) {
      if (started) words.push(current);
      current = "";
      started = false;
    } else {
      current += c;
      started = true;
    }
  }
  if (quote !== undefined) return args.split(/\s+/).filter((w) => w !== "");
  if (started) words.push(current);
  return words;
}

/**
 * Fill in a body's placeholders as Claude Code does for an invocation with `args` (`""`: none):
 * `${CLAUDE_…}` variables first, then `\$` escapes, named arguments, `$ARGUMENTS[N]`, `$N` and
 * `$ARGUMENTS`; with arguments and nothing substituted, `\n\nARGUMENTS: <args>` is appended.
 */
export function substitute(
  body: string,
  fields: ReadonlyMap<string, string | string[] | undefined>,
  context: InvocationContext,
  args = "",
): string {
  // Values are inserted through markers, so a `$` in a value is never read as a placeholder.
  const DOLLAR = "\uE000";
  // Every placeholder starts with `$`: without one (or a marker) and arguments, nothing changes.
  if (args === "" && !body.includes("$") && !body.includes(DOLLAR)) return body;
  const value = (v: string) => v.replaceAll("$", DOLLAR);
  let text = body;
  if (context.pluginRoot !== undefined) {
    text = text.replaceAll("${CLAUDE_PLUGIN_ROOT}", () => value(context.pluginRoot!));
  }
  if (context.pluginData !== undefined) {
    text = text.replaceAll("${CLAUDE_PLUGIN_DATA}", () => value(context.pluginData!));
  }
  if (context.skillDir !== undefined) {
    text = text.replaceAll("${CLAUDE_SKILL_DIR}", () => value(context.skillDir!));
  }
  text = text.replaceAll("${CLAUDE_PROJECT_DIR}", () => value(context.projectDir));
  text = text.replaceAll("${CLAUDE_SESSION_ID}", () => "0".repeat(SESSION_ID_LENGTH));
  const effort = scalar(fields.get("effort"));
  const shownEffort = effort !== undefined && (EFFORTS.has(effort) || /^\d+$/.test(effort))
    ? effort
    : DEFAULT_EFFORT;
  text = text.replaceAll("${CLAUDE_EFFORT}", () => value(shownEffort));
  const names = argumentNames(fields.get("arguments"));
  const words = argumentWords(args);
  const placeholders = ["\\d", "ARGUMENTS", ...names.map((n) => `${escapeRegExp(n)}(?![\\[\\w])`)]
    .join("|");
  text = text.replace(new RegExp(`(?<!\\\\)\\\\\\$(?=${placeholders})`, "g"), DOLLAR);
  let substituted = false;
  names.forEach((name, i) => {
    text = text.replace(new RegExp(`\\$${escapeRegExp(name)}(?![\\[\\w])`, "g"), () => {
      substituted = true;
      return value(words[i] ?? "");
    });
  });
  text = text.replace(/\$ARGUMENTS\[(\d+)\]/g, (whole, n: string) => {
    const word = words[Number(n)];
    if (word === undefined) return DOLLAR + whole.slice(1);
    substituted = true;
    return value(word);
  });
  text = text.replace(/\$(\d+)(?!\w)/g, (whole, n: string) => {
    const word = words[Number(n)];
    if (word === undefined) return whole;
    substituted = true;
    return value(word);
  });
  text = text.replaceAll("$ARGUMENTS", () => {
    substituted = true;
    return value(args);
  });
  if (!substituted && args !== "") text += `\n\nARGUMENTS: ${value(args)}`;
  return text.replaceAll(DOLLAR, "$");
}

const SHELL_FENCE = /```!\s*\n?[\s\S]*?\n?```/g;
const SHELL_INLINE = /(?<=^|\s)!`[^`]+`/gm;

/** True when `body` runs shell commands at invocation (`!`cmd`` or a ```` ```! ```` fence). */
export function runsShell(body: string): boolean {
  SHELL_FENCE.lastIndex = 0;
  if (SHELL_FENCE.test(body)) return true;
  return withShellDisabled(body) !== body;
}

/**
 * `body` as Claude Code sends it with inline shell execution disabled: each ```` ```! ```` fence,
 * then each `!`cmd`` at the start or after whitespace and outside code spans, becomes
 * {@linkcode SHELL_DISABLED}.
 */
export function withShellDisabled(body: string): string {
  let text = body.replace(SHELL_FENCE, () => SHELL_DISABLED);
  if (!text.includes("!`")) return text;
  // Code spans are blanked for the search (not the ones a `!` or backtick opens), so a `!`x`` in
  // code is kept; the replacements are made on the text itself, last first.
  const masked = text.replace(/`[^`\n]+`/g, (span, at: number) => {
    const before = text[at - 1];
    return before === "!" || before === "`" ? span : `\`${" ".repeat(span.length - 2)}\``;
  });
  const hits = [...masked.matchAll(SHELL_INLINE)].reverse();
  for (const hit of hits) {
    text = text.slice(0, hit.index) + SHELL_DISABLED + text.slice(hit.index! + hit[0].length);
  }
  return text;
}

/**
 * The text a skill or command file sends when invoked (`args`: `""` for none): its body after
 * the frontmatter, placeholders filled in, inline shell commands disabled.
 *
 * @example
 * ```ts
 * import { invocationText } from "./invocation.ts";
 * invocationText("---\nd: x\n---\nUse $ARGUMENTS.\n", { projectDir: "/p" }).text; // "Use .\n"
 * ```
 */
export function invocationText(
  fileText: string,
  context: InvocationContext,
  args = "",
): InvocationText {
  const split = splitClaudeFrontmatter(fileText);
  const fields = split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml);
  const filled = substitute(split.body, fields, context, args);
  const text = withShellDisabled(filled);
  return { text, frontmatterStripped: split.yaml !== undefined, shell: text !== filled };
}

/** The warning the Read tool returns for an empty file. */
export const EMPTY_READ =
  "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>";

/**
 * The Read tool's result for a whole file: every line (split at `\n`, a CR before it dropped) as
 * `<n>\t<line>`, joined by `\n`; a final newline gives a last, empty, numbered line.
 *
 * @example
 * ```ts
 * import { readResult } from "./invocation.ts";
 * readResult("a\nb\n"); // "1\ta\n2\tb\n3\t"
 * ```
 */
export function readResult(text: string): string {
  if (text === "") return EMPTY_READ;
  const t = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lines = t.split("\n");
  let out = "";
  lines.forEach((line, i) => {
    const own = i < lines.length - 1 && line.endsWith("\r") ? line.slice(0, -1) : line;
    out += `${i === 0 ? "" : "\n"}${i + 1}\t${own}`;
  });
  return out;
}
