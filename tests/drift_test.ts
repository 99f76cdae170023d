/**
 * The drift task's report (`scripts/drift.ts`, `references/context-scan.md#the-differential-suite`):
 * the rules named are exactly those whose fixtures disagree, and the version-dependent behaviour the
 * rules record is printed for its version. (The task itself runs the observed suite.)
 */
import assert from "node:assert/strict";
import { driftedRules, driftLines, driftReport } from "../scripts/drift.ts";
import { AGENT_NAME_CLASH, INSTALLED_PLUGINS, MEMORY_INDEX } from "../lib/scan/loading_rules.ts";

Deno.test("drift: DRIFT lines name fixtures; fixtures map to the rules that name them (patterns with *)", () => {
  const out =
    "516 sources compared byte for byte (Claude Code 2.1.332)\nDRIFT: agents-same-name\n" +
    "  DRIFT: memory-lines\nnoise DRIFT: x\n";
  assert.deepEqual(driftLines(out), ["agents-same-name", "memory-lines"]);
  const rules = driftedRules(["agents-same-name", "memory-lines", "installed-order"]);
  assert.deepEqual(
    rules.map((r) => [r.rule, r.fixtures]),
    [
      [MEMORY_INDEX, ["memory-lines"]],
      [
        rules.find((r) => r.rule.test.includes("installed-order"))!.rule,
        ["installed-order"],
      ],
      [INSTALLED_PLUGINS, ["installed-order"]],
      [AGENT_NAME_CLASH, ["agents-same-name"]],
    ].sort((a, b) =>
      rules.findIndex((r) => r.rule === a[0]) - rules.findIndex((r) => r.rule === b[0])
    ),
  );
});

Deno.test("drift: the report names each drifted rule, the recorded behaviour of the version, and a summary", () => {
  const lines = driftReport("2.1.328", ["agents-same-name"]);
  assert.equal(lines.length, 3);
  assert.match(
    lines[0],
    /^DRIFTED \(observed on [0-9.]+, fixtures agents-same-name\): of two agents/,
  );
  assert.equal(
    lines[1],
    `RECORDED for 2.1.328: two agents of one name in one folder: ${
      AGENT_NAME_CLASH.drift["2.1.328"]
    }`,
  );
  assert.equal(lines[2], "1 fixture(s) disagree with Claude Code 2.1.328");
  assert.deepEqual(driftReport("9.9.9", []), [
    "NO DRIFT: every fixture agrees with Claude Code 9.9.9",
  ]);
});
