import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";

import { SnapshotMissingError } from "../errors.ts";
import { collectingReporter } from "../report.ts";
import { stageStatus } from "./status.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

Deno.test("stageStatus lists the regular files under orig/, recursive, sorted by code point, links excluded", () => {
  const runDir = `${makeTempDir("ctxkit-status-")}/run`;
  mkdirSync(`${runDir}/orig/.claude/rules`, { recursive: true });
  const names = ["b.md", "B.md", ".claude/rules/é.md", ".claude/rules/z.md", "a b.md"];
  for (const rel of [...names, "\u{1f600}.md", "\uff21.md"]) {
    writeFileSync(`${runDir}/orig/${rel}`, "x");
  }
  symlinkSync(`${runDir}/orig/b.md`, `${runDir}/orig/link.md`);
  mkdirSync(`${runDir}/orig/empty`);
  const out = collectingReporter();
  const rels = stageStatus(runDir, out);
  // Code point order: U+FF21 before U+1F600 (UTF-16 order would put the surrogate pair first).
  const want = [
    ".claude/rules/z.md",
    ".claude/rules/é.md",
    "B.md",
    "a b.md",
    "b.md",
    "\uff21.md",
    "\u{1f600}.md",
  ];
  assert.deepEqual(rels, want);
  assert.deepEqual(out.lines.map((l) => `${l.stream}: ${l.text}`), [
    `stdout: RUN_DIR: ${runDir}`,
    "stdout: SNAPSHOT: 7 files",
    ...want.map((r) => `stdout:   ${r}`),
  ]);
  assert.throws(
    () => stageStatus(`${runDir}/orig`, collectingReporter()),
    (e: unknown) =>
      e instanceof SnapshotMissingError && e.message === `no snapshot dir: ${runDir}/orig/orig`,
  );
});
