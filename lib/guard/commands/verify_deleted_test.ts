import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";

import { join } from "node:path";
import { plain, type Text } from "../../text.ts";
import { collectingReporter, type Reporter } from "../report.ts";
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

Deno.test("verify-deleted: a stand-in changed during the gate is kept and reported, exit 1", () => {
  const f = fixture("rules/old.md", "NEVER 42\n", "NEVER 42 kept\n");
  const standIn = join(f.proj, "rules/old.md");
  mkdirSync(join(f.proj, "rules"));
  const reporter = hooked("FILES_FAILED: 0", () => writeFileSync(standIn, "someone else\n"));
  const result = verifyDeleted({
    roots: f.roots,
    runDir: f.runDir,
    survivors: [join(f.proj, "keep.md")],
    targets: [standIn],
  }, reporter);
  assert.equal(result.outcome, "aborted");
  assert.equal(result.standInChanged, true);
  assert.deepEqual(reporter.text(), [
    "stdout: CHECKPOINT: rules/old.md",
    "stdout: FILE: rules/old.md",
    "stdout: MISSING: 0",
    "stdout: GATE: PASS",
    "stdout: ACTION: kept",
    "stdout: FILES_FAILED: 0",
    "stderr: ❌ stand-in changed concurrently: rules/old.md",
  ]);
  assert.equal(readFileSync(standIn, "utf8"), "someone else\n", "stand-in kept");
});

Deno.test("verify-deleted: a stage failure after the stand-in is written cleans up, exit c", () => {
  // `ext` is a link out of the project: logical resolution passes, the stage refuses it.
  const f = fixture("ext/old.md", "NEVER 42\n", "NEVER 42\n");
  const outside = join(f.base, "outside");
  mkdirSync(outside);
  symlinkSync(outside, join(f.proj, "ext"));
  const draft = join(f.runDir, "draft/ext/old.md.sha256");
  mkdirSync(join(draft, ".."), { recursive: true });
  writeFileSync(draft, "MISSING\n");
  const reporter = hooked("", () => {});
  const result = verifyDeleted({
    roots: f.roots,
    runDir: f.runDir,
    survivors: [join(f.proj, "keep.md")],
    targets: [join(f.proj, "ext/old.md")],
  }, reporter);
  assert.equal(result.outcome, "aborted");
  assert.equal(result.failure?.exitCode, 2);
  assert.deepEqual(reporter.text(), [
    `stderr: ❌ ${join(f.proj, "ext/old.md")} is outside the project root ${f.proj}`,
  ]);
  assert.ok(!existsSync(join(outside, "old.md")), "stand-in removed");
  assert.equal(readFileSync(draft, "utf8"), "MISSING\n", "record untouched");
});
