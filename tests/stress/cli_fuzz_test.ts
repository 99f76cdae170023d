/** CLI argument fuzz, 30 seeded vectors per tool (reliability suite; quick variant in tests/). */
import assert from "node:assert/strict";
import { fuzzCli, TOOLS } from "./_cli_fuzz.ts";
import { stressSeed } from "./_harness.ts";

const SEED = stressSeed();
const RUNS = 30;

for (const tool of TOOLS) {
  Deno.test(`fuzz ${tool} arguments: ${RUNS} runs, defined exit codes (seed ${SEED})`, async () => {
    const byCode = await fuzzCli(tool, RUNS, SEED + 7);
    console.log(`${tool}: ${JSON.stringify(Object.fromEntries(byCode))} (seed ${SEED})`);
    assert.equal([...byCode.values()].reduce((a, b) => a + b, 0), RUNS);
  });
}
