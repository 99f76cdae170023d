/**
 * Knobs shared by the fuzz tests (tests/fuzz_*_test.ts, quick) and their deep runs in the stress
 * suite: the seed (`CTXKIT_STRESS_SEED`, fixed by default so CI is reproducible) and the run count
 * (`CTXKIT_FUZZ_RUNS` scales every property; the stress task sets it high).
 *
 * @module
 */

import { stressSeed } from "./_harness.ts";

/** The fast-check seed: `CTXKIT_STRESS_SEED` or the fixed default. */
export function fuzzSeed(): number {
  return stressSeed();
}

/** Runs of one property: `CTXKIT_FUZZ_RUNS` if set (a positive integer), else `quick`. */
export function fuzzRuns(quick: number): number {
  const raw = Deno.env.get("CTXKIT_FUZZ_RUNS");
  return raw !== undefined && /^[1-9][0-9]{0,6}$/.test(raw) ? Number(raw) : quick;
}
