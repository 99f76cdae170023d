import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

import { UsageError } from "../../errors.ts";
import { ManifestError, SnapshotMissingError } from "../errors.ts";
import { renderManifest } from "../manifest.ts";
import { writeDraftRecord } from "../ownership.ts";
import { collectingReporter } from "../report.ts";
import type { GuardRoots, Layer } from "../roots.ts";
import { restore, restoreRunDirs, rollback } from "./restore.ts";
import { guardRootsFixture, refusedShown } from "../_test_utils.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const read = (p: string) => readFileSync(p, "utf8");

const setup = () => guardRootsFixture("ctxkit-restore-");

/** A complete run `B/<name>` of `layer` snapshotting `CLAUDE.md` = `content` under `root`. */
function run(
  r: GuardRoots,
  name: string,
  layer: Layer,
  seq: number,
  content: string,
  root = layer === "global" ? r.global : r.project,
): string {
  const dir = `${r.backups}/${name}-${layer}_context-slim`;
  mkdirSync(`${dir}/orig`, { recursive: true });
  writeFileSync(`${dir}/orig/CLAUDE.md`, content, { mode: 0o600 });
  writeFileSync(
    `${dir}/manifest.json`,
    renderManifest({
      timestamp: name,
      layer,
      root,
      runDir: dir,
      restoreCmd: "x",
      seq,
      projectRoot: layer === "global" ? r.project : undefined,
      files: [{ path: "CLAUDE.md", size: content.length, sha256: sha(content) }],
    }),
  );
  return dir;
}

/** Rewrite `file` as the optimizer would: new bytes, checkpointed in `runDir`. */
function draft(runDir: string, file: string, content: string): void {
  writeFileSync(file, content);
  writeDraftRecord(runDir, "CLAUDE.md", sha(content));
}

const shown = (lines: { stream: string; text: string }[]) =>
  lines.map((l) => `${l.stream}: ${l.text}`);

Deno.test("restoreRunDirs: --run-dir as named; a layer flag or files give one run; else every layer of the newest run", () => {
  const r = setup();
  mkdirSync(r.global, { recursive: true });
  const p1 = run(r, "20260101-000000", "project", 1, "p1\n");
  const g1 = run(r, "20260101-000001", "global", 2, "g1\n");
  const p2 = run(r, "20260102-000000", "project", 3, "p2\n");
  const g2 = run(r, "20260102-000001", "global", 4, "g2\n");
  const foreign = run(r, "20260103-000000", "project", 5, "o\n", `${r.base}/other`);
  const out = collectingReporter();
  const dirs = (o: Partial<Parameters<typeof restoreRunDirs>[0]>) =>
    restoreRunDirs({ roots: r, files: [], ...o }, out);
  assert.deepEqual(dirs({}), [p2, g2]);
  assert.deepEqual(dirs({ selector: "last" }), [p2, g2]);
  assert.deepEqual(dirs({ selector: "20260101" }), [p1, g1]);
  assert.deepEqual(dirs({ selector: "2026" }), [p2, g2, p1, g1]);
  assert.deepEqual(dirs({ layer: "global" }), [g2]);
  assert.deepEqual(dirs({ layer: "project", selector: "20260101" }), [p1]);
  assert.deepEqual(dirs({ files: [`${r.global}/CLAUDE.md`] }), [g2]);
  assert.deepEqual(dirs({ files: [`${r.project}/CLAUDE.md`], selector: "20260101" }), [p1]);
  assert.deepEqual(dirs({ runDir: foreign, selector: "last" }), [foreign]);
  assert.throws(() => dirs({ runDir: g1, layer: "project" }), UsageError);
  assert.deepEqual(out.lines, []);
});

Deno.test("restore proves ownership per run dir and reports each; ok only when every run dir verified", async () => {
  const r = setup();
  mkdirSync(r.global, { recursive: true });
  const p = run(r, "20260102-000000", "project", 1, "P\n");
  const g = run(r, "20260102-000001", "global", 2, "G\n");
  draft(p, `${r.project}/CLAUDE.md`, "p draft\n");
  writeFileSync(`${r.global}/CLAUDE.md`, "someone's\n"); // not the optimizer's
  const out = collectingReporter();
  const result = await restore({ roots: r, files: [] }, out);
  assert.equal(result.ok, false);
  assert.deepEqual(result.runs.map((x) => [x.runDir, x.ok]), [[p, true], [g, false]]);
  assert.deepEqual(shown(out.lines), [
    "stdout: RESTORED: CLAUDE.md",
    `stdout: RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${p})`,
    ...refusedShown(g, "CLAUDE.md", `${r.global}/CLAUDE.md`),
    `stderr: RESTORE_VERIFIED: FAILED - restoration refused; current bytes preserved (${g})`,
  ]);
  assert.equal(read(`${r.project}/CLAUDE.md`), "P\n");
  assert.equal(read(`${r.global}/CLAUDE.md`), "someone's\n");
  // Once the global file is the optimizer's too, the same restore succeeds (the project file is
  // already original: reported, not rewritten).
  draft(g, `${r.global}/CLAUDE.md`, "g draft\n");
  assert.equal((await restore({ roots: r, files: [] }, collectingReporter())).ok, true);
  assert.equal(read(`${r.global}/CLAUDE.md`), "G\n");
});

Deno.test("rollback: literal run dirs in order, or every layer of the newest run; ROLLBACK_RESULT last", async () => {
  const r = setup();
  mkdirSync(r.global, { recursive: true });
  const p = run(r, "20260102-000000", "project", 1, "P\n");
  const g = run(r, "20260102-000001", "global", 2, "G\n");
  writeFileSync(`${r.project}/CLAUDE.md`, "P\n");
  writeFileSync(`${r.global}/CLAUDE.md`, "G\n");
  const out = collectingReporter();
  assert.equal((await rollback({ roots: r, runDirs: [] }, out)).ok, true);
  assert.deepEqual(shown(out.lines), [
    `stdout: ROLLBACK: ${p}`,
    "stdout: RESTORED: CLAUDE.md",
    `stdout: ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${p})`,
    `stdout: ROLLBACK: ${g}`,
    "stdout: RESTORED: CLAUDE.md",
    `stdout: ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${g})`,
    "stdout: ROLLBACK_RESULT: 2 layer(s), ok",
  ]);
  // Literal paths, in command-line order; a failed one makes the result FAILED.
  writeFileSync(`${r.global}/CLAUDE.md`, "someone's\n");
  const named = collectingReporter();
  const result = await rollback({ roots: r, runDirs: [g, p] }, named);
  assert.equal(result.ok, false);
  assert.deepEqual(result.runs.map((x) => x.runDir), [g, p]);
  assert.equal(named.lines.at(-1)?.text, "ROLLBACK_RESULT: 2 layer(s), FAILED");
  // `last` is no selector here: a literal path without a snapshot dir.
  await assert.rejects(
    () => rollback({ roots: r, runDirs: ["last"] }, collectingReporter()),
    (e: unknown) => e instanceof SnapshotMissingError && e.message === "no snapshot dir: last/orig",
  );
  // A manifest that cannot be read stops everything.
  writeFileSync(`${p}/manifest.json`, "{");
  const stopped = collectingReporter();
  await assert.rejects(() => rollback({ roots: r, runDirs: [p, g] }, stopped), ManifestError);
  assert.deepEqual(shown(stopped.lines), [`stdout: ROLLBACK: ${p}`]);
});

Deno.test("restore and rollback with no run of this invocation: no backups under B", async () => {
  const r = setup();
  for (
    const fn of [() => restore({ roots: r, files: [] }), () => rollback({ roots: r, runDirs: [] })]
  ) {
    await assert.rejects(
      fn,
      (e: unknown) =>
        e instanceof SnapshotMissingError && e.problem === "no-backups" &&
        e.message === `no backups under ${r.backups}`,
    );
  }
  run(r, "20260101-000000", "project", 1, "o\n", `${r.base}/other`);
  await assert.rejects(
    () => restore({ roots: r, files: [] }),
    (e: unknown) =>
      e instanceof SnapshotMissingError &&
      e.message === `no backups under ${r.backups} for the project root ${r.project}`,
  );
});
