/**
 * The docs' transcript of `--observe` runs as printed (tests/_transcripts.ts), against the pinned
 * Claude Code in a fresh network namespace (the command itself makes it; the test only checks that
 * one can be made, and installs the pinned version the way the transcript does). Part of the
 * observed task (`deno task test:observed`).
 *
 * What Claude Code sends beside the project's files depends on the machine and the day (its
 * environment block names the working directory, the date, the git status), so the figures on the
 * lines of the observed groups, on the budget line and in the whole request's cell of the start-up
 * row compare as `N`; every other line, the model's and the observed sources', compares exactly.
 */
import assert from "node:assert/strict";
import { observedClaude } from "./_claude.ts";
import { TARGET } from "./_helpers.ts";
import {
  runTranscript,
  transcript,
  transcriptMismatches,
  transcriptPlace,
  WRITE_TRANSCRIPTS,
  writeTranscript,
} from "./_transcripts.ts";
import { CONTEXT_CATEGORIES } from "../lib/scan/categories.ts";
import { claudeCodeCache } from "../scripts/claude_code.ts";

/** The observed groups' lines and the budget line with their figures as `N` and bars as `▮`. */
function maskMachineFigures(text: string): string {
  const titles = [...CONTEXT_CATEGORIES.map((c) => c.title), "total"];
  return text.split("\n").map((line) => {
    if (line.endsWith("(observed: whole request)")) {
      // WHEN IT LOADS' start-up row: the model's figure stays exact, the whole request's is the day's.
      return line.replace(/^( *[0-9][0-9,]*) +[0-9][0-9,]*/, "$1 N");
    }
    const group = titles.some((t) => line.startsWith(`  ${t} `));
    if (!group && !line.startsWith("BUDGET: ")) return line;
    return line.replace(/[0-9][0-9,.]*%?/g, "N").replace(/█+/g, "▮").replace(/ +/g, " ");
  }).join("\n");
}

Deno.test("transcript observe (README) runs as printed, against the pinned Claude Code", async () => {
  if (TARGET !== "source") {
    console.log(`SKIP: the docs' commands run the sources, not the ${TARGET}`);
    return;
  }
  if (await observedClaude() === undefined) return;
  const t = transcript("observe");
  const place = transcriptPlace();
  // The reader has run the command before (the transcript shows a later run, not the one-time
  // install's announcement): its copy of the checkout finds the version observedClaude() installed.
  const run = runTranscript(t, place, { CTXKIT_CLAUDE_CODE_CACHE: claudeCodeCache() });
  if (WRITE_TRANSCRIPTS) return writeTranscript(t, run, place);
  assert.equal(transcriptMismatches(t, run, place, maskMachineFigures).join("\n\n"), "");
});
