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
import { minimalStreamedReply, sse } from "./recorder.ts";
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

/** What the plan asks of the model's figures: one call per source. */
export interface PlanInput {
  /** Skills and commands to invoke, by the name the Skill tool takes. */
  readonly skills: readonly string[];
  /** Commands (no header in their invocation: one per turn, so their text is known). */
  readonly commands: readonly string[];
  /** Agents to spawn, by `subagent_type`. */
  readonly agents: readonly string[];
  /** Paths to read (each sends on-access sources). */
  readonly reads: readonly string[];
}

/**
 * The script of one session: the first turn invokes every skill, spawns every agent and reads
 * every path at once (Claude Code runs them concurrently); each command follows in a turn of its
 * own, because a command's text carries no header to tell it by.
 */
export function planObservation(input: PlanInput): ObservePlan {
  let n = 0;
  const call = (name: PlannedCall["name"], make: (id: string) => Record<string, unknown>) => {
    const id = `toolu_ctxkit_${String(n++).padStart(3, "0")}`;
    return { id, name, input: make(id) };
  };
  const first: PlannedCall[] = [
    ...input.skills.map((skill) => call("Skill", () => ({ skill }))),
    ...input.agents.map((type) =>
      call("Agent", (id) => ({
        description: `ctxkit observe ${type}`,
        prompt: spawnPrompt(id),
        subagent_type: type,
        run_in_background: false,
      }))
    ),
    ...input.reads.map((file_path) => call("Read", () => ({ file_path }))),
  ];
  const turns: PlannedCall[][] = first.length > 0 ? [first] : [];
  for (const skill of input.commands) turns.push([call("Skill", () => ({ skill }))]);
  return { turns };
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
  const events: [string, unknown][] = [["message_start", {
    type: "message_start",
    message: {
      id: "msg_ctxkit_observe",
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 1, output_tokens: 1 },
    },
  }]];
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
