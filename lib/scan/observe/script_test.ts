import assert from "node:assert/strict";
import { planObservation, SessionLog, spawnPrompt, SPAWNS_PER_TURN } from "./script.ts";
import { mainRequest, spawnRequest } from "./turns.ts";

const billing = (sub: boolean) => ({
  type: "text",
  text: `x-anthropic-billing-header: cc_version=2.1.328.x;${sub ? " cc_is_subagent=true;" : ""}`,
});
const use = (id: string) => ({ type: "tool_use", id, name: "Skill", input: {} });
const body = (sub: boolean, messages: unknown[]) =>
  JSON.stringify({ model: "m", system: [billing(sub)], messages });

Deno.test("planObservation: skills and reads at once; spawns 16 a turn; a command per turn beside them", () => {
  const items = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `${prefix}${i}`, key: `/${prefix}${i}` }));
  const { plan, calls } = planObservation({
    skills: items("s", 2),
    forked: items("f", 1),
    commands: items("c", 3),
    agents: items("a", 20),
    reads: ["/p/x"],
  });
  const shape = plan.turns.map((t) => t.map((c) => c.name[0]).join(""));
  // turn 0: 2 skills, 1 read, 1 forked skill + 15 agents, 1 command; turn 1: 5 agents, a command…
  assert.deepEqual(shape, [`SSRS${"A".repeat(15)}S`, "AAAAAS", "S"]);
  assert.equal(SPAWNS_PER_TURN, 16);
  assert.deepEqual(calls.get("/c2"), { id: "toolu_ctxkit_026", turn: 2 });
  const agent = plan.turns[0].find((c) => c.name === "Agent")!;
  assert.deepEqual(agent.input, {
    description: "ctxkit observe a0",
    prompt: spawnPrompt(agent.id),
    subagent_type: "a0",
    run_in_background: false,
  });
});

Deno.test("SessionLog: the next turn is told by the calls in the history, not by counting messages", () => {
  // Two commands: two turns (toolu_ctxkit_000, then toolu_ctxkit_001).
  const { plan } = planObservation({
    skills: [],
    forked: [],
    commands: [{ name: "c", key: "/c" }, { name: "d", key: "/d" }],
    agents: [],
    reads: [],
  });
  const log = new SessionLog(plan);
  const user = { role: "user", content: "hi" };
  assert.match(log.reply(body(false, [user]), "m"), /"id":"toolu_ctxkit_000"/);
  // Claude Code merged its history: one assistant message holds both turns' calls.
  const merged = { role: "assistant", content: [use("toolu_ctxkit_000"), use("toolu_ctxkit_001")] };
  const after1 = body(false, [user, { role: "assistant", content: [use("toolu_ctxkit_000")] }]);
  assert.match(log.reply(after1, "m"), /"id":"toolu_ctxkit_001"/);
  assert.match(log.reply(body(false, [user, merged]), "m"), /"stop_reason":"end_turn"/);
  // A subagent always gets end_turn; its first request is kept.
  assert.match(log.reply(body(true, [user]), "m"), /"stop_reason":"end_turn"/);
  const kept = log.requests();
  assert.deepEqual([kept.main.map((m) => m.step), kept.subagents.length, kept.requests], [
    [1, 2],
    1,
    4,
  ]);
});

Deno.test("mainRequest: results, skill texts without separators, accesses, command texts", () => {
  const request = {
    messages: [
      { role: "user", content: "hi" },
      { role: "assistant", content: [use("a"), use("b")] },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a", content: "Launching skill: s" },
          { type: "tool_result", tool_use_id: "b", content: "no", is_error: true },
          { type: "text", text: "Base directory for this skill: /p/s\n\nBody\n\n" },
          {
            type: "text",
            text: "<system-reminder>\nContents of /p/sub/CLAUDE.md:\n\nSub\n\n</system-reminder>\n",
          },
          { type: "text", text: "(Re-invocation of /s — …)\n" },
          { type: "text", text: "Command text" },
        ],
      },
    ],
  };
  const m = mainRequest(request);
  assert.deepEqual([...m.results], [["a", { error: false, text: "Launching skill: s" }], [
    "b",
    { error: true, text: "no" },
  ]]);
  assert.deepEqual([...m.skills], [["/p/s", ["Body\n"]]]);
  assert.deepEqual(m.accesses, [{ path: "/p/sub/CLAUDE.md", text: "Sub\n" }]);
  assert.deepEqual(m.bare, ["Command text"]);
});

Deno.test("spawnRequest: the call by its prompt, the body before the notes, preloaded skills", () => {
  const notes = "Messages from the agent that launched you — …";
  const request = {
    model: "claude-haiku",
    system: [billing(true), { type: "text", text: "SDK" }, {
      type: "text",
      text: `Body\n\n${notes}`,
    }],
    messages: [{
      role: "user",
      content: [
        { type: "text", text: `${spawnPrompt("toolu_ctxkit_007")}\n` },
        {
          type: "text",
          text: "<command-message>pre</command-message>\n<command-name>pre</command-name>",
        },
        { type: "text", text: "Base directory for this skill: /p/pre\n\nPre\n" },
      ],
    }],
  };
  assert.deepEqual(spawnRequest(request), {
    callId: "toolu_ctxkit_007",
    body: "Body",
    preloaded: [{ name: "pre", dir: "/p/pre", text: "Pre\n" }],
    model: "claude-haiku",
  });
  const empty = { ...request, system: [billing(true), { type: "text", text: notes }] };
  assert.equal(spawnRequest(empty)?.body, "");
});
