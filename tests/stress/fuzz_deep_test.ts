/**
 * The in-process fuzz tests (tests/fuzz_tokens_test.ts, tests/fuzz_parsers_test.ts) with 20x their
 * quick run count, same seed: run in a child so `CTXKIT_FUZZ_RUNS` applies to it alone.
 */
import assert from "node:assert/strict";
import { REPO } from "../_helpers.ts";
import { stressSeed } from "./_harness.ts";

const SEED = stressSeed();

Deno.test(`deep fuzz: tokens and parsers at 20,000 runs per property (seed ${SEED})`, () => {
  const r = new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      "-A",
      "--config",
      `${REPO}/deno.json`,
      `${REPO}/tests/fuzz_tokens_test.ts`,
      `${REPO}/tests/fuzz_parsers_test.ts`,
    ],
    env: { CTXKIT_FUZZ_RUNS: "20000", CTXKIT_STRESS_SEED: String(SEED), NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const out = new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr);
  assert.equal(r.code, 0, out);
  // Every property both files hold ran and passed, none ignored or filtered out (a count written
  // here went stale when a property was added).
  const running = [...out.matchAll(/^running ([0-9]+) tests? from \S+\/(fuzz_\w+_test\.ts)$/gm)];
  assert.deepEqual(running.map((m) => m[2]).sort(), [
    "fuzz_parsers_test.ts",
    "fuzz_tokens_test.ts",
  ]);
  const planned = running.reduce((n, m) => n + Number(m[1]), 0);
  assert.ok(planned > 0, out);
  assert.match(out, new RegExp(`^ok \\| ${planned} passed \\| 0 failed \\(`, "m"));
});
