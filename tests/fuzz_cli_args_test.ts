/**
 * Quick CLI argument fuzz (a few seeded vectors per tool); the stress suite runs 30 per tool
 * (tests/stress/cli_fuzz_test.ts). See tests/stress/_cli_fuzz.ts for the contract checked.
 */
import assert from "node:assert/strict";
import { fuzzCli, TOOLS } from "./stress/_cli_fuzz.ts";
import { fuzzSeed } from "./stress/_properties.ts";

const SEED = fuzzSeed();

for (const tool of TOOLS) {
  Deno.test(`fuzz ${tool} arguments: defined exit code and exit line, no stack trace (seed ${SEED}, 4 runs)`, async () => {
    const byCode = await fuzzCli(tool, 4, SEED);
    assert.equal([...byCode.values()].reduce((a, b) => a + b, 0), 4);
  });
}
