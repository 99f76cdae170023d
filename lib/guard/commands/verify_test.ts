import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

import { UsageError } from "../../errors.ts";
import { LedgerError, PathRefusedError, SnapshotMissingError } from "../errors.ts";
import { renderManifest } from "../manifest.ts";
import { writeDraftRecord } from "../ownership.ts";
import { collectingReporter } from "../report.ts";
import type { GuardRoots, Layer } from "../roots.ts";
import { verify } from "./verify.ts";
import { guardRootsFixture, refusedShown } from "../_test_utils.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const read = (p: string) => readFileSync(p, "utf8");

const setup = () => guardRootsFixture("ctxkit-verify-");

/** A complete run of `layer` snapshotting `files` (rel → original), the root holding them. */
function run(r: GuardRoots, layer: Layer, files: Record<string, string>): string {
  const root = layer === "global" ? r.global : r.project;
  const dir = `${r.backups}/20261012-140307-${layer}_context-slim`;
  mkdirSync(`${dir}/orig`, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    writeFileSync(`${dir}/orig/${rel}`, content, { mode: 0o600 });
    writeFileSync(`${root}/${rel}`, content);
  }
  writeFileSync(
    `${dir}/manifest.json`,
    renderManifest({
      timestamp: "20261012-140307",
      layer,
      root,
      runDir: dir,
      restoreCmd: "x",
      seq: 1,
      files: Object.keys(files).sort().map((path) => ({
        path,
        size: files[path].length,
        sha256: sha(files[path]),
      })),
    }),
  );
  return dir;
}

/** Rewrite `rel` as the optimizer would: new bytes, checkpointed. */
function draft(runDir: string, root: string, rel: string, content: string): void {
  writeFileSync(`${root}/${rel}`, content);
  writeDraftRecord(runDir, rel, sha(content));
}

const shown = (lines: { stream: string; text: string }[]) =>
  lines.map((l) => `${l.stream}: ${l.text}`);

Deno.test("verify: every file passing keeps every rewrite and rolls nothing back", async () => {
  const r = setup();
  const rd = run(r, "project", { "a.md": "NEVER 1\n", "b.md": "ALWAYS 2\n" });
  draft(rd, r.project, "a.md", "NEVER 1, shorter\n");
  const out = collectingReporter();
  const result = await verify({ roots: r, files: [`${r.project}/a.md`] }, out);
  assert.deepEqual([result.runDir, result.passed, result.rollback], [rd, true, undefined]);
  assert.deepEqual(shown(out.lines), [
    "stdout: FILE: a.md",
    "stdout: MISSING: 0",
    "stdout: GATE: PASS",
    "stdout: ACTION: kept",
    "stdout: FILES_FAILED: 0",
  ]);
  assert.equal(read(`${r.project}/a.md`), "NEVER 1, shorter\n");
});

Deno.test("verify: one failing file rolls the whole run back, passing files included", async () => {
  const r = setup();
  const rd = run(r, "project", { "a.md": "NEVER 1\n", "b.md": "ALWAYS 2\n" });
  draft(rd, r.project, "a.md", "lost\n");
  draft(rd, r.project, "b.md", "ALWAYS 2 kept\n");
  const out = collectingReporter();
  // Only a.md is verified; b.md, rewritten in the same run, comes back with it.
  const result = await verify({ roots: r, files: [`${r.project}/a.md`] }, out);
  assert.equal(result.passed, false);
  assert.equal(result.gate.filesFailed, 1);
  assert.equal(result.rollback?.ok, true);
  assert.deepEqual(shown(out.lines).slice(-6), [
    "stdout: FILES_FAILED: 1",
    `stdout: ROLLBACK: whole run (gate failed) ${rd}`,
    "stdout: RESTORED: a.md",
    "stdout: RESTORED: b.md",
    `stdout: ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    `stdout: RUN: FAILED - every file of ${rd} is back at its pre-edit bytes`,
  ]);
  assert.equal(read(`${r.project}/a.md`), "NEVER 1\n");
  assert.equal(read(`${r.project}/b.md`), "ALWAYS 2\n");
  // The gate itself never restores per file: without ownership the rollback is refused as a whole.
  writeFileSync(`${r.project}/a.md`, "someone's\n");
  const refused = collectingReporter();
  const again = await verify({ roots: r, files: [`${r.project}/a.md`] }, refused);
  assert.equal(again.rollback?.ok, false);
  assert.deepEqual(shown(refused.lines).slice(-8), [
    "stdout: ACTION: kept",
    "stdout: FILES_FAILED: 1",
    `stdout: ROLLBACK: whole run (gate failed) ${rd}`,
    ...refusedShown(rd, "a.md", `${r.project}/a.md`),
    `stderr: ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${rd})`,
    `stderr: RUN: FAILED - recovery incomplete; inspect preserved current files in ${rd}`,
  ]);
  assert.equal(read(`${r.project}/a.md`), "someone's\n");
});

Deno.test("verify: misses all ledgered pass with nothing rolled back", async () => {
  const r = setup();
  const rd = run(r, "project", { "a.md": "NEVER 1\n" });
  draft(rd, r.project, "a.md", "gone\n");
  const ledger = `${r.base}/ledger.tsv`;
  writeFileSync(ledger, `${r.project}/a.md\t1\t-\taccepted loss\n`);
  const out = collectingReporter();
  const result = await verify({ roots: r, ledger, files: [`${r.project}/a.md`] }, out);
  assert.equal(result.passed, true);
  assert.deepEqual(shown(out.lines).slice(-3), [
    "stdout: GATE: PASS (every miss ledgered)",
    "stdout: ACTION: kept",
    "stdout: FILES_FAILED: 0",
  ]);
  assert.equal(read(`${r.project}/a.md`), "gone\n");
});

Deno.test("verify dies before any gate output: no run, no orig/, no file, no ledger, a file of another layer", async () => {
  const r = setup();
  const none = collectingReporter();
  await assert.rejects(
    () => verify({ roots: r, files: [`${r.project}/a.md`] }, none),
    (e: unknown) =>
      e instanceof SnapshotMissingError && e.message === `no backups under ${r.backups}`,
  );
  const rd = run(r, "project", { "a.md": "NEVER 1\n" });
  await assert.rejects(
    () => verify({ roots: r, runDir: rd, files: [] }),
    (e: unknown) => e instanceof UsageError && e.message === "verify needs at least one file",
  );
  await assert.rejects(
    () => verify({ roots: r, ledger: `${r.base}/none.tsv`, files: [`${r.project}/a.md`] }, none),
    (e: unknown) =>
      e instanceof LedgerError && e.message === `no such ledger file: ${r.base}/none.tsv`,
  );
  const bare = `${r.base}/bare`;
  mkdirSync(bare);
  await assert.rejects(
    () => verify({ roots: r, runDir: bare, files: [] }),
    (e: unknown) =>
      e instanceof SnapshotMissingError && e.message === `no snapshot dir: ${bare}/orig`,
  );
  // Against a global run, a project file is outside the global root (named as such).
  mkdirSync(r.global, { recursive: true });
  const g = run(r, "global", { "CLAUDE.md": "G 1\n" });
  await assert.rejects(
    () => verify({ roots: r, runDir: g, files: [`${r.project}/a.md`] }, none),
    (e: unknown) =>
      e instanceof PathRefusedError &&
      e.message === `${r.project}/a.md is outside the global root ${r.global}`,
  );
  assert.deepEqual(none.lines, []);
  assert.equal(read(`${r.project}/a.md`), "NEVER 1\n");
});
