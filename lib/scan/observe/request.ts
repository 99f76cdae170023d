/**
 * Claude Code's first `/v1/messages` request, read defensively: the one module that knows the
 * request's layout, which ctxkit does not own. It splits every text the request carries into
 * parts — the system prompt, each tool schema, each instruction file Claude Code sent, each skill
 * and agent listing entry, the environment block, the messages — and gives each part its exact
 * text and UTF-8 byte count. A block it does not understand becomes one `unattributed` part and a
 * warning; no byte is dropped, so the parts always add up to the whole request's text.
 *
 * Layout checked on the Claude Code versions in {@linkcode LAYOUT_CHECKED_ON}
 * (`references/context-scan.md#observed-request-layout`).
 *
 * @module
 */

import * as z from "../../_zod.ts";
import type { ContextCategory } from "../categories.ts";

/** The Claude Code versions whose request layout this parser was checked against. */
export const LAYOUT_CHECKED_ON: readonly string[] = ["2.1.328", "2.1.332"];

/** What a part of the request is, grouped as Claude Code's own `/context` groups its figures. */
export type ObservedCategory = ContextCategory;

/** One part of the request: its category, what it is, and the exact text Claude Code sent. */
export interface ObservedPart {
  /** The `/context`-style group the part counts in. */
  readonly category: ObservedCategory;
  /**
   * What the part is: the tool's name, the listing entry's name, `framing` for the wrapper text
   * around instruction files, or a short description (`billing header`, `prompt`…).
   */
  readonly label: string;
  /** For an instruction file: the path Claude Code named in its `Contents of …` header. */
  readonly path?: string;
  /** For an instruction file: the description Claude Code gave it (`project instructions, …`). */
  readonly origin?: string;
  /** The exact text of the part. */
  readonly text: string;
  /** The UTF-8 byte count of `text`. */
  readonly bytes: number;
}

/** A parsed request: its parts in request order, and one warning per block not understood. */
export interface ObservedRequest {
  /** Every part, in the order the request carries them. */
  readonly parts: readonly ObservedPart[];
  /** One line per block the parser did not understand (its bytes are an `unattributed` part). */
  readonly warnings: readonly string[];
  /** The Claude Code version the request names in its billing header, when it names one. */
  readonly version?: string;
}

const TextBlock = z.looseObject({ type: z.literal("text"), text: z.string() });
const AnyBlock = z.looseObject({ type: z.string() });
const Message = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(AnyBlock)]),
});

/** The request fields the parser reads; everything else of the body is ignored. */
export const RequestBody = z.deferred(() =>
  z.looseObject({
    system: z.optional(z.union([z.string(), z.array(AnyBlock)])),
    tools: z.optional(z.array(z.looseObject({ name: z.string() }))),
    messages: z.array(Message),
  })
);

const encoder = new TextEncoder();

/** The UTF-8 byte count of `text`. */
export function utf8Bytes(text: string): number {
  return encoder.encode(text).length;
}

function part(
  category: ObservedCategory,
  label: string,
  text: string,
  extra: { path?: string; origin?: string } = {},
): ObservedPart {
  return { category, label, ...extra, text, bytes: utf8Bytes(text) };
}

const INSTRUCTIONS_OPENING =
  "<system-reminder>\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n";
const REMINDER_CLOSING = "\n</system-reminder>";
const CONTENTS_OF = "Contents of ";

/**
 * Split the instruction reminder into its framing and one part per `Contents of PATH (ORIGIN):`
 * section. A header is a line that starts with `Contents of `, ends with `):` and follows a blank
 * line (or the opening); the section's text runs to the blank line before the next header, or to
 * the closing tag. Linear: one pass over the lines.
 */
export function splitInstructions(text: string): ObservedPart[] | undefined {
  if (!text.startsWith(INSTRUCTIONS_OPENING) || !text.endsWith(REMINDER_CLOSING)) return undefined;
  const body = text.slice(INSTRUCTIONS_OPENING.length, text.length - REMINDER_CLOSING.length);
  // Header offsets: a header starts the body or follows "\n\n", and is followed by "\n\n".
  const headers: { at: number; end: number; path: string; origin: string }[] = [];
  let lineStart = 0;
  while (lineStart <= body.length) {
    const nl = body.indexOf("\n", lineStart);
    const lineEnd = nl === -1 ? body.length : nl;
    const line = body.slice(lineStart, lineEnd);
    const afterBlank = lineStart === 0 || body.startsWith("\n\n", lineStart - 2);
    if (afterBlank && line.startsWith(CONTENTS_OF) && line.endsWith("):")) {
      const open = line.lastIndexOf(" (");
      if (open > CONTENTS_OF.length && body.startsWith("\n\n", lineEnd)) {
        headers.push({
          at: lineStart,
          end: lineEnd + 2,
          path: line.slice(CONTENTS_OF.length, open),
          origin: line.slice(open + 2, line.length - 2),
        });
      }
    }
    if (nl === -1) break;
    lineStart = nl + 1;
  }
  if (headers.length === 0 || headers[0].at !== 0) return undefined;
  const parts: ObservedPart[] = [];
  let framing = INSTRUCTIONS_OPENING;
  headers.forEach((h, i) => {
    const next = headers[i + 1];
    // A section's text ends before the blank line that separates it from the next header.
    const stop = next === undefined ? body.length : next.at - 2;
    framing += body.slice(h.at, h.end);
    parts.push(
      part("memory-files", h.path, body.slice(h.end, stop), { path: h.path, origin: h.origin }),
    );
    if (next !== undefined) framing += "\n\n";
  });
  framing += REMINDER_CLOSING;
  parts.unshift(part("memory-files", "framing", framing));
  return parts;
}

const AGENTS_HEADING = "Available agent types for the Agent tool:\n";
const SKILLS_HEADING = "The following skills are available for use with the Skill tool:\n\n";
const DEFERRED_HEADING = "The following deferred tools are now available via ToolSearch.";

/** `- name: description` (or `- name` alone): the name of a listing entry line, else undefined. */
export function entryName(line: string): string | undefined {
  if (!line.startsWith("- ")) return undefined;
  const colon = line.indexOf(": ", 2);
  const name = colon === -1 ? line.slice(2) : line.slice(2, colon);
  // A skill whose frontmatter name differs from its folder is listed as `- folder (name): …`.
  return name.length > 0 && (!name.includes(" ") || /^\S+ \(\S+\)$/.test(name)) ? name : undefined;
}

/** Lines that open what follows a listing in the system-role message. */
const LISTING_HEADS = [
  "The following skills are available",
  "Available agent types",
  "The following deferred tools",
  "When you launch multiple agents",
];

/** An agent entry's last line: it ends with the agent's tools. */
const AGENT_ENTRY_END = /\(Tools: [^\n]*\)$/;

/**
 * Split a listing (the lines after its heading) into one part per entry. A skill entry runs from
 * its `- name` line to the next entry or a blank line (a built-in's description may hold
 * newlines); an agent entry through the line ending in `(Tools: …)` — its description may hold
 * blank lines. The listing ends at the first line that starts no entry. Returns the entries and
 * the offset where it ended.
 */
function splitListing(
  text: string,
  start: number,
  category: ObservedCategory,
): { parts: ObservedPart[]; end: number } {
  const parts: ObservedPart[] = [];
  let at = start;
  while (at < text.length) {
    const nl = text.indexOf("\n", at);
    const lineEnd = nl === -1 ? text.length : nl;
    const name = entryName(text.slice(at, lineEnd));
    if (name === undefined) break;
    let end = nl === -1 ? text.length : nl + 1;
    if (category === "skills") {
      // A built-in's description may run over several lines: up to the next entry, or to a
      // blank line that no entry follows.
      while (end < text.length) {
        const next = text.indexOf("\n", end);
        const stop = next === -1 ? text.length : next;
        if (entryName(text.slice(end, stop)) !== undefined || end === stop) break;
        end = next === -1 ? text.length : next + 1;
      }
    } else if (!AGENT_ENTRY_END.test(text.slice(at, lineEnd))) {
      // Through the line that ends with the tools (a description may hold blank lines); an entry
      // or a heading met first ends it at its first blank line, or right there. One pass.
      let line = end;
      let firstBlank = -1;
      for (;;) {
        if (line >= text.length) {
          end = firstBlank === -1 ? text.length : firstBlank;
          break;
        }
        const next = text.indexOf("\n", line);
        const stop = next === -1 ? text.length : next;
        const content = text.slice(line, stop);
        if (entryName(content) !== undefined || LISTING_HEADS.some((h) => content.startsWith(h))) {
          end = firstBlank === -1 ? line : firstBlank;
          break;
        }
        if (content === "" && firstBlank === -1) firstBlank = line;
        if (AGENT_ENTRY_END.test(content)) {
          end = next === -1 ? text.length : next + 1;
          break;
        }
        line = next === -1 ? text.length : next + 1;
      }
    }
    parts.push(part(category, name, text.slice(at, end)));
    at = end;
  }
  return { parts, end: at };
}

const OUTPUT_STYLE_HEADING = "# Output Style: ";
const OUTPUT_STYLE_REMINDER =
  / output style is active\. Remember to follow the specific guidelines for this style\.\n\n/;
/** The reminder line's start: the line that holds ` output style is active. …`. */
const OUTPUT_STYLE_LINE =
  /\n[^\n]* output style is active\. Remember to follow the specific guidelines for this style\.\n/;
const PROMPT_HOOK = /^UserPromptSubmit hook (?:success|additional context): /;

/**
 * An environment stretch of the system-role message split further: the output style's section
 * (`# Output Style: <name>` to the end of the stretch) and its reminder line are `system-prompt`
 * (`output style`), a `UserPromptSubmit hook …` paragraph is `hooks`; the rest `environment`.
 */
function splitEnvironmentText(text: string, label: string): ObservedPart[] {
  const category: ObservedCategory = label === "deferred tools" ? "tools" : "environment";
  if (category === "tools") return [part(category, label, text)];
  const parts: ObservedPart[] = [];
  let at = 0;
  let plain = 0;
  const flush = (to: number) => {
    if (to > plain) parts.push(part(category, label, text.slice(plain, to)));
  };
  while (at < text.length) {
    const nl = text.indexOf("\n", at);
    const lineEnd = nl === -1 ? text.length : nl;
    const line = text.slice(at, lineEnd);
    const paragraphEnd = () => {
      const blank = text.indexOf("\n\n", at);
      return blank === -1 ? text.length : blank + 2;
    };
    if (line.startsWith(OUTPUT_STYLE_HEADING) && (at === 0 || text[at - 1] === "\n")) {
      flush(at);
      // To the end of the stretch (a listing or the tools follow it), or to the date line or the
      // style's own reminder when they come first.
      const ends = [text.indexOf("\n\nToday's date is ", at), text.search(OUTPUT_STYLE_LINE)]
        .filter((i) => i > at)
        .map((i) => text.indexOf("\n\n", i) === i ? i + 2 : i);
      const end = ends.length === 0 ? text.length : Math.min(...ends);
      parts.push(part("system-prompt", "output style", text.slice(at, end)));
      at = plain = end;
      continue;
    }
    if (PROMPT_HOOK.test(line)) {
      flush(at);
      const end = paragraphEnd();
      parts.push(part("hooks", "UserPromptSubmit hook", text.slice(at, end)));
      at = plain = end;
      continue;
    }
    const reminder = OUTPUT_STYLE_REMINDER.exec(text.slice(at, lineEnd + 2));
    if (reminder !== null && reminder.index + reminder[0].length === lineEnd + 2 - at) {
      flush(at);
      parts.push(part("system-prompt", "output style", text.slice(at, lineEnd + 2)));
      at = plain = lineEnd + 2;
      continue;
    }
    if (nl === -1) break;
    at = nl + 1;
  }
  flush(text.length);
  return parts;
}

const HOOK_OUTPUT = "SessionStart";
const ENVIRONMENT_HEADING = "\n\n# Environment\n";

/**
 * The SessionStart hooks' output at the head of the system-role message, one `hooks` part per
 * paragraph that starts with `SessionStart` (`SessionStart:startup hook success: <stdout>`,
 * `SessionStart hook additional context: <text>`), each with the blank line after it. Everything
 * up to the environment heading belongs to them, so a hook's own blank lines stay in its part.
 * Nothing when the message does not start that way (no hook ran, or the layout changed).
 */
export function splitHookContext(text: string): ObservedPart[] {
  if (!text.startsWith(HOOK_OUTPUT)) return [];
  const env = text.indexOf(ENVIRONMENT_HEADING);
  if (env === -1) return [];
  const head = text.slice(0, env + 2);
  const starts: number[] = [0];
  let from = 0;
  for (;;) {
    const next = head.indexOf(`\n\n${HOOK_OUTPUT}`, from);
    if (next === -1) break;
    starts.push(next + 2);
    from = next + 2;
  }
  return starts.map((start, i) => {
    const t = head.slice(start, starts[i + 1] ?? head.length);
    const colon = t.indexOf(": ");
    return part("hooks", colon === -1 ? "SessionStart hook" : t.slice(0, colon), t);
  });
}

/**
 * Split the system-role message (the SessionStart hooks' output, the environment block, the
 * deferred tools, the agent and skill listings, the date) into parts. Text outside the hooks'
 * output and the two listings is `environment`, except the deferred-tool paragraph (`tools`).
 */
export function splitEnvironment(text: string): ObservedPart[] {
  const parts: ObservedPart[] = splitHookContext(text);
  let at = parts.reduce((n, p) => n + p.text.length, 0);
  const pushEnv = (to: number, label = "environment") => {
    if (to > at) parts.push(...splitEnvironmentText(text.slice(at, to), label));
    at = to;
  };
  while (at < text.length) {
    const agents = text.indexOf(AGENTS_HEADING, at);
    const skills = text.indexOf(SKILLS_HEADING, at);
    const deferred = text.indexOf(DEFERRED_HEADING, at);
    const next = [agents, skills, deferred].filter((i) => i !== -1).sort((a, b) => a - b)[0];
    if (next === undefined) break;
    pushEnv(next);
    if (next === deferred) {
      const end = text.indexOf("\n\n", next);
      pushEnv(end === -1 ? text.length : end + 2, "deferred tools");
      continue;
    }
    const heading = next === agents ? AGENTS_HEADING : SKILLS_HEADING;
    const category: ObservedCategory = next === agents ? "agents" : "skills";
    const listing = splitListing(text, next + heading.length, category);
    parts.push(part(category, "heading", heading));
    parts.push(...listing.parts);
    at = listing.end;
  }
  pushEnv(text.length);
  return parts;
}

// The git snapshot Claude Code attaches in a git repository (2.1.328): part of the environment.
const GIT_STATUS_OPENING =
  "<system-reminder>\nAs you answer the user's questions, you can use the following context:\n# gitStatus\n";

/** A preloaded skill's blocks in a spawned agent's request: its tags, then its text. */
function isPreloadedSkill(text: string | undefined): boolean {
  return text !== undefined &&
    (text.startsWith("<command-message>") || text.startsWith("Base directory for this skill: "));
}

const BILLING = /^x-anthropic-billing-header: cc_version=([0-9]+\.[0-9]+\.[0-9]+)/;

function blockTexts(content: string | readonly { type: string }[]): (string | undefined)[] {
  if (typeof content === "string") return [content];
  return content.map((b) => {
    const t = TextBlock.safeParse(b);
    return t.success ? t.data.text : undefined;
  });
}

function unattributed(where: string, text: string, warnings: string[]): ObservedPart {
  warnings.push(`not understood: ${where} (${utf8Bytes(text)} bytes counted as unattributed)`);
  return part("unattributed", where, text);
}

/**
 * Parse a request body (already JSON-decoded) into its parts. Throws a `RangeError` when the body
 * is not a messages request at all (no `messages` array); anything inside it that is not understood
 * becomes an `unattributed` part with a warning.
 */
export function parseObservedRequest(body: unknown): ObservedRequest {
  const parsed = RequestBody.safeParse(body);
  if (!parsed.success) throw new RangeError("the request is not a messages request");
  const { system, tools, messages } = parsed.data;
  const parts: ObservedPart[] = [];
  const warnings: string[] = [];
  let version: string | undefined;

  (system === undefined ? [] : blockTexts(system)).forEach((t, i) => {
    if (t === undefined) {
      const raw = JSON.stringify((system as { type: string }[])[i]);
      parts.push(unattributed(`system block ${i + 1}`, raw, warnings));
      return;
    }
    const billing = BILLING.exec(t);
    if (billing !== null) version = billing[1];
    parts.push(part("system-prompt", billing !== null ? "billing header" : "system prompt", t));
  });
  for (const tool of tools ?? []) parts.push(part("tools", tool.name, JSON.stringify(tool)));

  messages.forEach((message, m) => {
    const texts = blockTexts(message.content);
    // A spawned agent's preloaded skills follow its prompt (`references/context-scan.md#observing-every-tier`).
    let prompt = texts.length - 1;
    while (prompt > 0 && isPreloadedSkill(texts[prompt])) prompt--;
    texts.forEach((t, i) => {
      const where = `message ${m + 1} (${message.role}) block ${i + 1}`;
      if (t === undefined) {
        const raw = JSON.stringify((message.content as { type: string }[])[i]);
        parts.push(unattributed(where, raw, warnings));
        return;
      }
      if (message.role === "system") {
        parts.push(...splitEnvironment(t));
        return;
      }
      const instructions = splitInstructions(t);
      if (instructions !== undefined) {
        parts.push(...instructions);
      } else if (t.startsWith(GIT_STATUS_OPENING) && t.endsWith(REMINDER_CLOSING)) {
        parts.push(part("environment", "git status", t));
      } else if (t.startsWith("<system-reminder>\nAttribution for git commits")) {
        parts.push(part("messages", "attribution reminder", t));
      } else if (t.startsWith("<system-reminder>\nSessionStart hook")) {
        parts.push(part("hooks", "SessionStart hook context", t));
      } else if (message.role === "user" && i > prompt && isPreloadedSkill(t)) {
        parts.push(part("messages", "preloaded skill", t));
      } else if (
        message.role === "user" && i === prompt && !t.startsWith("<system-reminder>")
      ) {
        parts.push(part("messages", "prompt", t));
      } else {
        parts.push(unattributed(where, t, warnings));
      }
    });
  });
  return { parts, warnings, ...(version === undefined ? {} : { version }) };
}
