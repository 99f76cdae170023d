import assert from "node:assert/strict";
import { refusedShown } from "../_test_utils.ts";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";

import { ManifestError, PathRefusedError, SnapshotMissingError } from "../errors.ts";
import { renderManifest } from "../manifest.ts";
import { writeDraftRecord } from "../ownership.ts";
import { collectingReporter } from "../report.ts";
import type { Layer } from "../roots.ts";
import { keepStateBefore, rootStatePath } from "../run_state.ts";
import { restoreRunDir } from "./restore_run.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const read = (p: string) => readFileSync(p, "utf8");
const modeOf = (p: string) => Deno.statSync(p).mode! & 0o7777;

/**
 * A root holding `files` (rel → original content) and a run dir with their copies and a manifest
 * recording mode 0644 for each.
 */
function fixture(files: Record<string, string>, layer: Layer = "project") {
  const base = makeTempDir("ctxkit-rrun-");
  const root = `${base}/root`;
  const runDir = `${base}/backups/20261012-140307-${layer}_context-slim`;
  mkdirSync(root, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(dirname(`${runDir}/orig/${rel}`), { recursive: true });
    writeFileSync(`${runDir}/orig/${rel}`, content, { mode: 0o600 });
    mkdirSync(dirname(`${root}/${rel}`), { recursive: true });
    writeFileSync(`${root}/${rel}`, content);
    chmodSync(`${root}/${rel}`, 0o644);
  }
  writeFileSync(
    `${runDir}/manifest.json`,
    renderManifest({
      timestamp: "20261012-140307",
      layer,
      root,
      runDir,
      restoreCmd: "x",
      files: Object.keys(files).sort().map((path) => ({
        path,
        size: new TextEncoder().encode(files[path]).length,
        sha256: sha(files[path]),
        mode: 0o644,
      })),
    }),
  );
  return { base, root, runDir, path: (rel: string) => `${root}/${rel}` };
}

const shown = (lines: { stream: string; text: string }[]) =>
  lines.map((l) => `${l.stream}: ${l.text}`);

Deno.test("restoreRunDir puts every manifest file back under the manifest's root, modes included, then the state, then its last line", async () => {
  const f = fixture({ "CLAUDE.md": "NEVER 1\n", "rules/a.md": "A\n", "same.md": "S\n" });
  writeFileSync(f.path("CLAUDE.md"), "draft\n");
  chmodSync(f.path("CLAUDE.md"), 0o600);
  writeDraftRecord(f.runDir, "CLAUDE.md", sha("draft\n"));
  Deno.removeSync(f.path("rules/a.md"));
  writeDraftRecord(f.runDir, "rules/a.md", "MISSING");
  const state = rootStatePath(f.root);
  mkdirSync(dirname(state), { recursive: true });
  keepStateBefore(f.runDir, state, sha("{}\n"));
  writeFileSync(state, "{}\n");
  const out = collectingReporter();
  const r = await restoreRunDir(f.runDir, "ROLLBACK_VERIFIED", [], out);
  assert.deepEqual(r, {
    runDir: f.runDir,
    ok: true,
    restored: ["CLAUDE.md", "rules/a.md", "same.md"],
    mismatches: 0,
    failure: undefined,
    exitCode: 0,
  });
  assert.deepEqual(shown(out.lines), [
    "stdout: RESTORED: CLAUDE.md",
    "stdout: RESTORED: rules/a.md",
    "stdout: RESTORED: same.md",
    `stdout: STATE: removed ${state}`,
    `stdout: ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${f.runDir})`,
  ]);
  assert.equal(read(f.path("CLAUDE.md")), "NEVER 1\n");
  assert.equal(modeOf(f.path("CLAUDE.md")), 0o644);
  assert.equal(read(f.path("rules/a.md")), "A\n");
  assert.equal(modeOf(f.path("rules/a.md")), 0o644);
  assert.equal(existsSync(state), false);
});

Deno.test("restoreRunDir with named files restores only those, resolved against the manifest root, and never the state", async () => {
  const f = fixture({ "a.md": "A\n", "b.md": "B\n" });
  for (const rel of ["a.md", "b.md"]) {
    writeFileSync(f.path(rel), "draft\n");
    writeDraftRecord(f.runDir, rel, sha("draft\n"));
  }
  const state = rootStatePath(f.root);
  mkdirSync(dirname(state), { recursive: true });
  keepStateBefore(f.runDir, state, sha("{}\n"));
  writeFileSync(state, "{}\n");
  const out = collectingReporter();
  const r = await restoreRunDir(f.runDir, "RESTORE_VERIFIED", [f.path("b.md")], out);
  assert.deepEqual(r.restored, ["b.md"]);
  assert.deepEqual(shown(out.lines), [
    "stdout: RESTORED: b.md",
    `stdout: RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${f.runDir})`,
  ]);
  assert.equal(read(f.path("a.md")), "draft\n");
  assert.equal(read(f.path("b.md")), "B\n");
  assert.equal(read(state), "{}\n");
  writeFileSync(f.path("c.md"), "x");
  await assert.rejects(
    () => restoreRunDir(f.runDir, "RESTORE_VERIFIED", [f.path("c.md")], collectingReporter()),
    (e: unknown) =>
      e instanceof SnapshotMissingError && e.problem === "not-in-manifest" && e.rel === "c.md" &&
      e.message === "not in the manifest: c.md",
  );
  writeFileSync(`${f.base}/a.md`, "x");
  await assert.rejects(
    () => restoreRunDir(f.runDir, "RESTORE_VERIFIED", [`${f.base}/a.md`], collectingReporter()),
    (e: unknown) =>
      e instanceof PathRefusedError &&
      e.message === `${f.base}/a.md is outside the snapshot root ${f.root}`,
  );
});

Deno.test("restoreRunDir: a damaged snapshot names every defect and writes nothing", async () => {
  const f = fixture({ "a.md": "A\n", "b.md": "B\n", "c.md": "C\n" });
  for (const rel of ["a.md", "b.md", "c.md"]) {
    writeFileSync(f.path(rel), "draft\n");
    writeDraftRecord(f.runDir, rel, sha("draft\n"));
  }
  Deno.removeSync(`${f.runDir}/orig/a.md`);
  writeFileSync(`${f.runDir}/orig/b.md`, "tampered\n");
  const out = collectingReporter();
  const r = await restoreRunDir(f.runDir, "ROLLBACK_VERIFIED", [], out);
  assert.deepEqual([r.ok, r.failure, r.restored], [false, "damaged", []]);
  assert.deepEqual(shown(out.lines), [
    `stderr: ❌ MISSING FROM SNAPSHOT: a.md (manifest lists it, ${f.runDir}/orig has no copy)`,
    "stderr: ❌ SNAPSHOT CHECKSUM MISMATCH: b.md",
    `stderr: ROLLBACK_VERIFIED: FAILED - snapshot incomplete or damaged; current bytes preserved (${f.runDir})`,
  ]);
  for (const rel of ["a.md", "b.md", "c.md"]) assert.equal(read(f.path(rel)), "draft\n", rel);
});

Deno.test("restoreRunDir: a refused stage prints its lines and FAILED, nothing written; a missing root too", async () => {
  const f = fixture({ "a.md": "A\n", "b.md": "B\n" });
  writeFileSync(f.path("a.md"), "owned\n");
  writeDraftRecord(f.runDir, "a.md", sha("owned\n"));
  writeFileSync(f.path("b.md"), "someone's\n");
  const out = collectingReporter();
  const r = await restoreRunDir(f.runDir, "RESTORE_VERIFIED", [], out);
  assert.deepEqual([r.ok, r.failure], [false, "refused"]);
  assert.deepEqual(shown(out.lines), [
    ...refusedShown(f.runDir, "b.md", f.path("b.md")),
    `stderr: RESTORE_VERIFIED: FAILED - restoration refused; current bytes preserved (${f.runDir})`,
  ]);
  assert.equal(read(f.path("a.md")), "owned\n");

  const g = fixture({ "CLAUDE.md": "G\n" }, "global");
  Deno.removeSync(g.root, { recursive: true });
  const gone = collectingReporter();
  assert.equal((await restoreRunDir(g.runDir, "ROLLBACK_VERIFIED", [], gone)).failure, "refused");
  assert.deepEqual(shown(gone.lines), [
    `stderr: ❌ invalid global root: ${g.root}`,
    `stderr: ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${g.runDir})`,
  ]);
  assert.equal(existsSync(g.root), false);
});

Deno.test("restoreRunDir never writes through a link: outside the root it is unsafe, inside it is refused", async () => {
  const f = fixture({ "out/a.md": "A\n", "in/b.md": "B\n" });
  for (const rel of ["out/a.md", "in/b.md"]) {
    Deno.removeSync(dirname(f.path(rel)), { recursive: true });
  }
  mkdirSync(`${f.base}/elsewhere`);
  symlinkSync(`${f.base}/elsewhere`, f.path("out"));
  await assert.rejects(
    () => restoreRunDir(f.runDir, "ROLLBACK_VERIFIED", [], collectingReporter()),
    (e: unknown) =>
      e instanceof ManifestError && e.problem === "unsafe-path" && e.entry === "out/a.md" &&
      e.message === `unsafe manifest path: out/a.md (${f.runDir}/manifest.json)`,
  );
  Deno.removeSync(f.path("out"));
  mkdirSync(f.path("out"));
  mkdirSync(f.path("real-in"));
  symlinkSync(f.path("real-in"), f.path("in"));
  await assert.rejects(
    () => restoreRunDir(f.runDir, "ROLLBACK_VERIFIED", [], collectingReporter()),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "linked-component" &&
      e.message === `refusing to restore through the symbolic link ${f.path("in")}: in/b.md`,
  );
  assert.deepEqual(Deno.readDirSync(`${f.base}/elsewhere`).toArray(), []);
  assert.deepEqual(Deno.readDirSync(f.path("real-in")).toArray(), []);
  assert.deepEqual(Deno.readDirSync(f.path("out")).toArray(), []);
  // A manifest defect is thrown before anything else.
  writeFileSync(`${f.runDir}/manifest.json`, '{"root": "relative", "files": [{"path": "a"}]}');
  await assert.rejects(
    () => restoreRunDir(f.runDir, "ROLLBACK_VERIFIED", [], collectingReporter()),
    (e: unknown) => e instanceof ManifestError && e.problem === "relative-root",
  );
});
