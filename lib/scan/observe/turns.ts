/**
 * The requests of a scripted session after the first, read defensively: the one module that knows
 * how Claude Code lays out what a tool call brings into the conversation (`LAYOUT_CHECKED_ON` of
 * `request.ts`; `references/context-scan.md#observing-every-tier`). From the main thread's last
 * request: each tool call's result, each invoked skill's or command's text, each instruction
 * file an access sent. From a subagent's first request: the call that spawned it, its agent body,
 * the skills it preloaded, its model.
 *
 * @module
 */

import * as z from "../../_zod.ts";
import { RequestBody } from "./request.ts";

const AnyBlock = z.looseObject({ type: z.string() });
const TextBlock = z.looseObject({ type: z.literal("text"), text: z.string() });
const ToolUse = z.looseObject({ type: z.literal("tool_use"), id: z.string() });
const ToolResult = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  is_error: z.optional(z.boolean()),
  content: z.optional(z.union([z.string(), z.array(AnyBlock)])),
});

/** The header a skill's invocation text starts with. */
export const SKILL_HEADER = "Base directory for this skill: ";
const REMINDER = "<system-reminder>\n";
const CONTENTS_OF = "Contents of ";
const REMINDER_END = "\n</system-reminder>";
const RE_INVOCATION = "(Re-invocation of /";
/** The @-mention reads a skill's text brings (`Called the Read tool…`, `Result of calling…`). */
const MENTION_READS = [`${REMINDER}Called the Read tool`, `${REMINDER}Result of calling the Read`];
const COMMAND_MESSAGE = "<command-message>";
/** The notes block Claude Code puts after a subagent's agent body (2.1.328, 2.1.332). */
export const AGENT_NOTES = "Messages from the agent that launched you";

/** One text block of a user message, with whether Claude Code appended its separator to it. */
interface Block {
  readonly text: string;
  /**
   * True when the block is not the last of its message: merging consecutive user messages,
   * Claude Code ends such a block with one `\n` of its own.
   */
  readonly separated: boolean;
}

/** A block's own text: without the separator Claude Code appended when merging messages. */
function own(block: Block): string {
  return block.separated && block.text.endsWith("\n") ? block.text.slice(0, -1) : block.text;
}

/** What one of the main thread's requests says about the tool calls made so far. */
export interface MainRequest {
  /** Each call's result: whether it was an error, and its text. */
  readonly results: ReadonlyMap<string, { error: boolean; text: string }>;
  /** Skill texts by the folder their header names (the header not counted), in order. */
  readonly skills: ReadonlyMap<string, string[]>;
  /** Texts without a header (commands), in request order. */
  readonly bare: readonly string[];
  /** Instruction files an access sent: path and text, in request order. */
  readonly accesses: readonly { path: string; text: string }[];
  /** Bytes of the @-mention reads a skill's text brought (not any source's own). */
  readonly mentionBytes: number;
  /** Blocks not understood. */
  readonly warnings: readonly string[];
}

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

function textOfResult(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => {
    const t = TextBlock.safeParse(b);
    return t.success ? t.data.text : "";
  }).join("");
}

/** An on-access reminder's path and text, or undefined when `text` is none. */
export function accessReminder(text: string): { path: string; text: string } | undefined {
  if (!text.startsWith(`${REMINDER}${CONTENTS_OF}`)) return undefined;
  const headerEnd = text.indexOf(":\n\n", REMINDER.length);
  const end = text.lastIndexOf(REMINDER_END);
  if (headerEnd === -1 || end < headerEnd + 3) return undefined;
  const path = text.slice(REMINDER.length + CONTENTS_OF.length, headerEnd);
  // The start-up block names its files `Contents of PATH (ORIGIN):` inside another wrapper.
  if (path.includes("\n")) return undefined;
  return { path, text: text.slice(headerEnd + 3, end) };
}

/** A skill's invocation text: the folder its header names and the text after it. */
export function skillText(text: string): { dir: string; text: string } | undefined {
  if (!text.startsWith(SKILL_HEADER)) return undefined;
  const nl = text.indexOf("\n\n", SKILL_HEADER.length);
  if (nl === -1) return undefined;
  return { dir: text.slice(SKILL_HEADER.length, nl), text: text.slice(nl + 2) };
}

/** True for Claude Code's own notes about a repeated invocation. */
function isNotice(text: string): boolean {
  return text.startsWith(RE_INVOCATION) ||
    (text.startsWith("Skill /") && text.includes(" is already loaded"));
}

/**
 * What one main-thread request (already JSON-decoded) carries after its tool calls: every result,
 * every skill's and command's text, every instruction file an access sent. Claude Code may merge
 * the turns of its history into one assistant and one user message, so nothing here depends on
 * where a turn starts; a command's text is told by comparing consecutive requests.
 */
export function mainRequest(body: unknown): MainRequest {
  const results = new Map<string, { error: boolean; text: string }>();
  const skills = new Map<string, string[]>();
  const bare: string[] = [];
  const accesses: { path: string; text: string }[] = [];
  const warnings: string[] = [];
  let mentionBytes = 0;
  const parsed = RequestBody.safeParse(body);
  if (!parsed.success) {
    return { results, skills, bare, accesses, mentionBytes, warnings: ["unreadable request"] };
  }
  let afterCalls = false;
  for (const message of parsed.data.messages) {
    if (typeof message.content === "string") continue;
    if (message.role === "assistant") {
      afterCalls ||= message.content.some((b) => ToolUse.safeParse(b).success);
      continue;
    }
    if (message.role !== "user" || !afterCalls) continue;
    const blocks = message.content;
    blocks.forEach((b, i) => {
      const result = ToolResult.safeParse(b);
      if (result.success) {
        results.set(result.data.tool_use_id, {
          error: result.data.is_error === true,
          text: textOfResult(result.data.content),
        });
        return;
      }
      const t = TextBlock.safeParse(b);
      if (!t.success) return;
      const block: Block = { text: t.data.text, separated: i < blocks.length - 1 };
      const access = accessReminder(block.text);
      if (access !== undefined) {
        accesses.push(access);
        return;
      }
      const skill = skillText(own(block));
      if (skill !== undefined) {
        skills.set(skill.dir, [...(skills.get(skill.dir) ?? []), skill.text]);
        return;
      }
      if (MENTION_READS.some((m) => block.text.startsWith(m))) {
        mentionBytes += utf8(block.text);
        return;
      }
      if (isNotice(block.text)) return;
      if (block.text.startsWith(REMINDER)) {
        warnings.push(`not understood: a reminder after a tool call (${utf8(block.text)} bytes)`);
        return;
      }
      bare.push(own(block));
    });
  }
  return { results, skills, bare, accesses, mentionBytes, warnings };
}

/** What a subagent's first request says. */
export interface SpawnRequest {
  /** The id of the Agent call whose prompt it carries (undefined: a forked skill's). */
  readonly callId?: string;
  /** The agent body in its system prompt (the notes after it not counted). */
  readonly body?: string;
  /** The skills it preloads: the name its tags give and its invocation text. */
  readonly preloaded: readonly { name: string; dir: string; text: string }[];
  /** A forked skill's text (its prompt), by folder. */
  readonly forked?: { dir: string; text: string };
  /** The model the request names. */
  readonly model?: string;
}

const SPAWN_MARK = /ctxkit-observe spawn (toolu_ctxkit_[0-9]+):/;

/** Read a subagent's first request (already JSON-decoded). */
export function spawnRequest(body: unknown): SpawnRequest | undefined {
  const parsed = RequestBody.safeParse(body);
  if (!parsed.success) return undefined;
  const raw = body as { model?: unknown };
  const system = parsed.data.system;
  const systemTexts = system === undefined
    ? []
    : typeof system === "string"
    ? [system]
    : system.flatMap((b) => {
      const t = TextBlock.safeParse(b);
      return t.success ? [t.data.text] : [];
    });
  const last = systemTexts.at(-1);
  let agentBody: string | undefined;
  if (last !== undefined) {
    if (last.startsWith(AGENT_NOTES)) agentBody = "";
    else {
      const at = last.lastIndexOf(`\n\n${AGENT_NOTES}`);
      if (at !== -1) agentBody = last.slice(0, at);
    }
  }
  let callId: string | undefined;
  const preloaded: { name: string; dir: string; text: string }[] = [];
  let forked: { dir: string; text: string } | undefined;
  for (const message of parsed.data.messages) {
    if (message.role !== "user") continue;
    const blocks = typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content;
    let pendingName: string | undefined;
    blocks.forEach((b, i) => {
      const t = TextBlock.safeParse(b);
      if (!t.success) return;
      const block: Block = { text: t.data.text, separated: i < blocks.length - 1 };
      const mark = SPAWN_MARK.exec(block.text);
      if (mark !== null) callId ??= mark[1];
      if (block.text.startsWith(COMMAND_MESSAGE)) {
        const end = block.text.indexOf("</command-message>");
        pendingName = end === -1 ? undefined : block.text.slice(COMMAND_MESSAGE.length, end);
        return;
      }
      const skill = skillText(own(block));
      if (skill === undefined) return;
      if (pendingName !== undefined) preloaded.push({ name: pendingName, ...skill });
      else forked ??= skill;
      pendingName = undefined;
    });
  }
  return {
    ...(callId === undefined ? {} : { callId }),
    ...(agentBody === undefined ? {} : { body: agentBody }),
    preloaded,
    ...(forked === undefined || callId !== undefined ? {} : { forked }),
    ...(typeof raw.model === "string" ? { model: raw.model } : {}),
  };
}
