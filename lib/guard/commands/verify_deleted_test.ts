import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";

import { join } from "node:path";
import { plain, type Text } from "../../text.ts";
import { collectingReporter, type Reporter } from "../report.ts";
import { PathRefusedError } from "../errors.ts";
import type { GuardRoots } from "../roots.ts";
import { verifyDeleted } from "./verify_deleted.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

/** A project root, a run dir holding `orig/<rel>` = `original`, and the survivor `keep.md`. */
function fixture(rel: string, original: string, survivor: string) {
  const base = makeTempDir("vd-");
  const proj = join(base, "proj");
  const global = join(base, "g");
  const runDir = join(global, "backups", "20261012-140307-project_context-slim");
  mkdirSync(join(runDir, "orig", rel, ".."), { recursive: true, mode: 0o700 });
  writeFileSync(join(runDir, "orig", rel), original, { mode: 0o600 });
  mkdirSync(proj, { recursive: true });
  writeFileSync(join(proj, "keep.md"), survivor);
  const roots: GuardRoots = { project: proj, global, backups: join(global, "backups") };
  return { base, proj, runDir, roots };
}

/** A reporter that collects lines and runs `hook` when a stdout line equals `trigger`. */
function hooked(trigger: string, hook: () => void): Reporter & { text(): string[] } {
  const inner = collectingReporter();
  return {
    out(line: Text) {
      inner.out(line);
      if (plain(line) === trigger) hook();
    },
    err: (line) => inner.err(line),
    text: () => inner.lines.map((l) => `${l.stream}: ${l.text}`),
  };
}

Deno.test("verify-deleted never writes at the deleted path; a pass puts the draft record back", async () => {
  const f = fixture("rules/old.md", "NEVER 42\n", "NEVER 42 kept\n");
  const deleted = join(f.proj, "rules/old.md");
  mkdirSync(join(f.proj, "rules"));
  const record = join(f.runDir, "draft/rules/old.md.sha256");
  let sawPath = false;
  // While the proof runs (any line), the deleted path stays absent and the deletion is owned.
  const reporter = hooked("FILES_FAILED: 0", () => {
    sawPath = existsSync(deleted);
    assert.equal(readFileSync(record, "utf8"), "MISSING\n");
  });
  const result = await verifyDeleted({
    roots: f.roots,
    runDir: f.runDir,
    survivors: [join(f.proj, "keep.md")],
    targets: [deleted],
  }, reporter);
  assert.equal(result.outcome, "merged");
  assert.equal(sawPath, false);
  assert.deepEqual(reporter.text(), [
    "stdout: CHECKPOINT: rules/old.md",
    "stdout: FILE: rules/old.md",
    "stdout: MISSING: 0",
    "stdout: GATE: PASS",
    "stdout: ACTION: kept",
    "stdout: FILES_FAILED: 0",
    `stdout: MERGED_VERIFIED: rules/old.md -> ${join(f.proj, "keep.md")}`,
  ]);
  assert.equal(existsSync(deleted), false);
  assert.equal(existsSync(record), false, "no record before: none after");
});

Deno.test("verify-deleted: a target physically outside the root is refused before anything is written", async () => {
  // `ext` is a link out of the project: logical resolution passes, the physical check refuses it.
  const f = fixture("ext/old.md", "NEVER 42\n", "NEVER 42\n");
  const outside = join(f.base, "outside");
  mkdirSync(outside);
  symlinkSync(outside, join(f.proj, "ext"));
  const draft = join(f.runDir, "draft/ext/old.md.sha256");
  mkdirSync(join(draft, ".."), { recursive: true });
  writeFileSync(draft, "previous\n");
  await assert.rejects(
    async () =>
      await verifyDeleted({
        roots: f.roots,
        runDir: f.runDir,
        survivors: [join(f.proj, "keep.md")],
        targets: [join(f.proj, "ext/old.md")],
      }),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "outside-root" &&
      e.message === `${join(f.proj, "ext/old.md")} is outside the project root ${f.proj}`,
  );
  assert.deepEqual(Deno.readDirSync(outside).toArray(), []);
  assert.equal(readFileSync(draft, "utf8"), "previous\n", "record untouched");
});
