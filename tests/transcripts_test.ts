/**
 * Every transcript of the docs runs as printed (tests/_transcripts.ts): same commands, same
 * working directory (the clone), same output but for HOME and timestamps. The transcripts that run
 * the real Claude Code (`--observe`) are run by tests/transcripts_observe_test.ts, in the observed
 * task.
 */
import assert from "node:assert/strict";
import { TARGET } from "./_helpers.ts";
import {
  runTranscript,
  transcriptMismatches,
  transcriptPlace,
  transcripts,
  WRITE_TRANSCRIPTS,
  writeTranscript,
} from "./_transcripts.ts";

/** Transcripts that need the real Claude Code, run by tests/transcripts_observe_test.ts. */
export const OBSERVED_TRANSCRIPTS = ["observe"];

Deno.test("docs: every transcript has a name of its own, and is run by a test", () => {
  const names = transcripts().map((t) => t.name);
  assert.deepEqual([...new Set(names)], names, "two transcripts share a name");
  for (const name of OBSERVED_TRANSCRIPTS) assert.ok(names.includes(name), `${name} is gone`);
});

for (const t of transcripts().filter((t) => !OBSERVED_TRANSCRIPTS.includes(t.name))) {
  Deno.test(`transcript ${t.name} (${t.block.file}:${t.block.line}) runs as printed`, () => {
    if (TARGET !== "source") {
      console.log(`SKIP: the docs' commands run the sources, not the ${TARGET}`);
      return;
    }
    const place = transcriptPlace();
    const run = runTranscript(t, place);
    if (WRITE_TRANSCRIPTS) return writeTranscript(t, run, place);
    assert.equal(transcriptMismatches(t, run, place).join("\n\n"), "");
  });
}
