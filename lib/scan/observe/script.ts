/**
 * The scripted local model of a tier observation (`--observe-tiers`;
 * `references/context-scan.md#observing-every-tier`): what to make Claude Code do — invoke every
 * skill and command once, spawn every agent once (`run_in_background: false`), read one path that
 * each on-access source answers — and how to answer its requests so it does: the main thread gets
 * the next turn's `tool_use` blocks in the Messages API's streamed form, a subagent a plain
 * `end_turn`. The recorder (`recorder.ts`) serves these replies and keeps the requests a
 * {@linkcode SessionLog} needs. Pure but for the log.
 *
 * @module
 */

import * as z from "../../_zod.ts";
import { messageStart, minimalStreamedReply, sse } from "./recorder.ts";
import { RequestBody } from "./request.ts";

/** One tool call of the script. */
export interface PlannedCall {
  /** The `tool_use` id (unique in the session). */
  readonly id: string;
  /** The tool. */
  readonly name: "Skill" | "Agent" | "Read";
  /** Its input. */
  readonly input: Readonly<Record<string, unknown>>;
}

/** The whole script: the main thread's tool calls, turn by turn. */
export interface ObservePlan {
  /** Turn `i` is the reply to the main thread's request with `i` assistant messages before it. */
  readonly turns: readonly (readonly PlannedCall[])[];
}

/** Schema of a plan passed to the observation child (inside `CTXKIT_OBSERVE_CHILD`). */
export const ObservePlanSchema = z.deferred(() =>
  z.strictObject({
    turns: z.array(z.array(z.strictObject({
      id: z.string(),
      name: z.enum(["Skill", "Agent", "Read"]),
      input: z.looseObject({}),
    }))),
  })
);

/** The prompt an Agent call gives its subagent, which names the call (to match its request). */
export function spawnPrompt(id: string): string {
  return `ctxkit-observe spawn ${id}: reply done.`;
}

/** A call the plan makes for a source: the name the tool takes, and the source's key. */
export interface PlanItem {
  /** The Skill tool's `skill`, or the Agent tool's `subagent_type`. */
  readonly name: string;
  /** What the caller knows the source by (its file). */
  readonly key: string;
}

/** What the plan asks of the model's figures: one call per source. */
export interface PlanInput {
  /** Skills to invoke, by the name the Skill tool takes (not forked). */
  readonly skills: readonly PlanItem[];
  /** Skills that run forked (`context: fork`): each takes a subagent. */
  readonly forked: readonly PlanItem[];
  /** Commands (no header in their invocation: one per turn, so their text is known). */
  readonly commands: readonly PlanItem[];
  /** Agents to spawn, by `subagent_type`. */
  readonly agents: readonly PlanItem[];
  /** Paths to read (each sends on-access sources). */
  readonly reads: readonly string[];
}

/**
 * How many subagents one turn starts (observed on 2.1.332: Claude Code refuses more than 20 at
 * once, `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`); a margin below it.
 */
export const SPAWNS_PER_TURN = 16;

/** A plan and the call made for each source (by its key). */
export interface PlannedSession {
  /** The script. */
  readonly plan: ObservePlan;
  /** Each source's call: its id and the turn it is in. */
  readonly calls: ReadonlyMap<string, { readonly id: string; readonly turn: number }>;
}

/**
 * The script of one session: the first turn invokes every skill and reads every path at once
 * (Claude Code runs them concurrently); agents and forked skills start {@linkcode SPAWNS_PER_TURN}
 * a turn; each command goes in a turn of its own (its text carries no header to tell it by),
 * beside those spawns.
 */
export function planObservation(input: PlanInput): PlannedSession {
  let n = 0;
  const calls = new Map<string, { id: string; turn: number }>();
  const turns: PlannedCall[][] = [];
  const call = (
    turn: number,
    key: string | undefined,
    name: PlannedCall["name"],
    make: (id: string) => Record<string, unknown>,
  ) => {
    const id = `toolu_ctxkit_${String(n++).padStart(3, "0")}`;
    if (key !== undefined) calls.set(key, { id, turn });
    (turns[turn] ??= []).push({ id, name, input: make(id) });
  };
  for (const s of input.skills) call(0, s.key, "Skill", () => ({ skill: s.name }));
  for (const path of input.reads) call(0, undefined, "Read", () => ({ file_path: path }));
  const spawns = [
    ...input.forked.map((s) => ({ ...s, tool: "Skill" as const })),
    ...input.agents.map((a) => ({ ...a, tool: "Agent" as const })),
  ];
  spawns.forEach((s, i) => {
    const turn = Math.floor(i / SPAWNS_PER_TURN);
    if (s.tool === "Skill") call(turn, s.key, "Skill", () => ({ skill: s.name }));
    else {
      call(turn, s.key, "Agent", (id) => ({
        description: `ctxkit observe ${s.name}`,
        prompt: spawnPrompt(id),
        subagent_type: s.name,
        run_in_background: false,
      }));
    }
  });
  // A command per turn, beside the turn's spawns (their results carry no text of their own).
  input.commands.forEach((c, turn) => call(turn, c.key, "Skill", () => ({ skill: c.name })));
  return { plan: { turns }, calls };
}

/** The billing header's mark of a subagent's request (2.1.328). */
const SUBAGENT_MARK = "cc_is_subagent=true";

/** True when a parsed request is a subagent's (its billing header says so). */
export function isSubagentRequest(body: z.infer<typeof RequestBody>): boolean {
  const system = body.system;
  const first = typeof system === "string" ? system : (system?.[0] as { text?: unknown })?.text;
  return typeof first === "string" && first.includes(SUBAGENT_MARK);
}

/** The streamed reply carrying `calls` as `tool_use` blocks (`stop_reason: tool_use`). */
export function toolUseReply(model: string, calls: readonly PlannedCall[]): string {
  const events: [string, unknown][] = [messageStart(model)];
  calls.forEach((c, index) => {
    events.push(["content_block_start", {
      type: "content_block_start",
      index,
      content_block: { type: "tool_use", id: c.id, name: c.name, input: {} },
    }]);
    events.push(["content_block_delta", {
      type: "content_block_delta",
      index,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(c.input) },
    }]);
    events.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  events.push(["message_delta", {
    type: "message_delta",
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 1 },
  }]);
  events.push(["message_stop", { type: "message_stop" }]);
  return sse(events);
}

/** The requests a session keeps: the main thread's after each turn, each subagent's first. */
export interface SessionRequests {
  /**
   * The main thread's request after each turn: `step` turns' calls have their results in it
   * (each holds the whole conversation so far); the last is the session's last.
   */
  readonly main: readonly { readonly step: number; readonly body: string }[];
  /** Each subagent's first request, in arrival order. */
  readonly subagents: readonly string[];
  /** How many messages requests Claude Code sent. */
  readonly requests: number;
}

/** The most subagent requests a session keeps (the planned spawns and forks, with room). */
const MAX_SUBAGENTS = 512;

/**
 * The scripted model's memory of a session: answers each request (the next turn's tool calls,
 * or `end_turn`) and keeps the requests {@linkcode SessionRequests} names.
 */
export class SessionLog {
  readonly #main = new Map<number, string>();
  readonly #subagents: string[] = [];
  #requests = 0;

  constructor(readonly plan: ObservePlan) {}

  /** The streamed reply to one request body (`model` as the request named it). */
  reply(text: string, model: string): string {
    this.#requests++;
    let parsed: z.infer<typeof RequestBody> | undefined;
    try {
      const result = RequestBody.safeParse(JSON.parse(text));
      parsed = result.success ? result.data : undefined;
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) return minimalStreamedReply(model);
    if (isSubagentRequest(parsed)) {
      // A subagent's first request has no assistant message yet; later ones are not needed.
      const first = !parsed.messages.some((m) => m.role === "assistant");
      if (first && this.#subagents.length < MAX_SUBAGENTS) this.#subagents.push(text);
      return minimalStreamedReply(model);
    }
    // The next turn: the first whose calls are not all in the history yet (Claude Code may merge
    // its history's turns, so they are not counted by messages).
    const made = new Set<string>();
    for (const m of parsed.messages) {
      if (m.role !== "assistant" || typeof m.content === "string") continue;
      for (const b of m.content) {
        const id = (b as { id?: unknown }).id;
        if (b.type === "tool_use" && typeof id === "string") made.add(id);
      }
    }
    let turn = 0;
    while (turn < this.plan.turns.length && this.plan.turns[turn].every((c) => made.has(c.id))) {
      turn++;
    }
    if (turn > 0) this.#main.set(turn, text);
    const calls = this.plan.turns[turn];
    return calls === undefined || calls.length === 0
      ? minimalStreamedReply(model)
      : toolUseReply(model, calls);
  }

  /** What was kept. */
  requests(): SessionRequests {
    return {
      main: [...this.#main].sort((a, b) => a[0] - b[0]).map(([step, body]) => ({ step, body })),
      subagents: [...this.#subagents],
      requests: this.#requests,
    };
  }
}
