/**
 * Concurrency of the guard's write paths (reliability suite): same-second snapshots of one layer,
 * restore racing an editor, and two restores of one run at once. (Concurrent prose writers:
 * tests/stress/prose_concurrency_test.ts — 20 writers plus a reader.)
 */
import assert from "node:assert/strict";
import { renameSync, writeFileSync } from "node:fs";
import { readManifest } from "../lib/guard/manifest.ts";
import { lines, runTool, runToolAsync } from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  exampleProject,
  fileHash,
  outLines,
  read,
  refusedLines,
  STYLE_MD,
} from "./_guard_fixtures.ts";

const FILES = ["CLAUDE.md", ".claude/rules/style.md"];

function runDirOf(stdout: string): string {
  return lines(stdout).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
}

/** Wait until just after a wall-clock second starts, so two runs launched now share that second. */
async function secondStart(): Promise<void> {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
}

/**
 * How many pairs may be launched until two land in one second. Each run takes its stamp as it
 * starts, and on a loaded machine two processes launched together start seconds apart often: the
 * test tries until the pair it needs happens (mostly the first), the cap only keeps it finite.
 */
const SAME_SECOND_ATTEMPTS = 20;

Deno.test("two snapshots of one layer in the same second get distinct run dirs, both manifests valid", async () => {
  let sameSecond = false;
  for (let attempt = 0; attempt < SAME_SECOND_ATTEMPTS && !sameSecond; attempt++) {
    const p = exampleProject();
    const args = ["snapshot", ...FILES];
    await secondStart();
    const [a, b] = await Promise.all([
      runToolAsync("context-guard", args, { cwd: p.proj, env: p.env }),
      runToolAsync("context-guard", args, { cwd: p.proj, env: p.env }),
    ]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const dirs = [runDirOf(a.stdout), runDirOf(b.stdout)];
    assert.notEqual(dirs[0], dirs[1]);
    const stamps = dirs.map((d) => d.slice(p.backups.length + 1, p.backups.length + 16));
    for (const [i, r] of [a, b].entries()) {
      assert.ok(outLines(r).includes(`MANIFEST: ${dirs[i]}/manifest.json`), r.stdout);
      const m = readManifest(dirs[i]);
      assert.equal(m.root, p.proj);
      assert.deepEqual(m.files, [
        {
          path: ".claude/rules/style.md",
          sha256: fileHash(`${p.proj}/.claude/rules/style.md`),
          mode: 0o644,
        },
        { path: "CLAUDE.md", sha256: fileHash(`${p.proj}/CLAUDE.md`), mode: 0o644 },
      ]);
      for (const f of m.files) assert.equal(fileHash(`${dirs[i]}/orig/${f.path}`), f.sha256);
      const doc = JSON.parse(read(`${dirs[i]}/manifest.json`));
      assert.equal(doc.run_dir, dirs[i]);
    }
    sameSecond = stamps[0] === stamps[1];
    if (sameSecond) {
      const names = dirs.map((d) => d.slice(p.backups.length + 1)).sort();
      assert.deepEqual(names, [
        `${stamps[0]}-project-2_context-slim`,
        `${stamps[0]}-project_context-slim`,
      ]);
    }
  }
  assert.ok(
    sameSecond,
    `could not start two snapshots within one second in ${SAME_SECOND_ATTEMPTS} attempts`,
  );
});

Deno.test("restore racing an editor refuses with the ownership proof and keeps the editor's bytes", async () => {
  const p = exampleProject({ git: false });
  const snap = runTool("context-guard", ["snapshot", ...FILES], { cwd: p.proj, env: p.env });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  // The optimizer's drafts, checkpointed (owned).
  writeFileSync(`${p.proj}/CLAUDE.md`, "# Project rules (draft)\n");
  writeFileSync(`${p.proj}/.claude/rules/style.md`, "# Style (draft)\n");
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, ...FILES], {
    cwd: p.proj,
    env: { CLAUDE_PROJECT_DIR: p.proj, HOME: p.home },
  });
  assert.equal(cp.code, 0, cp.stderr);
  const styleDraft = fileHash(`${p.proj}/.claude/rules/style.md`);
  // The user's editor saves CLAUDE.md again and again (in place and by rename) while restore runs.
  let version = 0;
  let last = "";
  const save = () => {
    last = `# Project rules\n\nedited by the user, save ${++version}\n`;
    if (version % 2 === 0) writeFileSync(`${p.proj}/CLAUDE.md`, last);
    else {
      writeFileSync(`${p.proj}/.CLAUDE.md.swp`, last);
      renameSync(`${p.proj}/.CLAUDE.md.swp`, `${p.proj}/CLAUDE.md`);
    }
  };
  save();
  let running = true;
  const editor = (async () => {
    while (running) {
      save();
      await new Promise((r) => setTimeout(r, 1));
    }
  })();
  const r = await runToolAsync("context-guard", ["restore", "--run-dir", runDir], {
    cwd: p.proj,
    env: p.env,
  });
  running = false;
  await editor;
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(errLines(r), [
    ...refusedLines("context-guard", runDir, "CLAUDE.md", `${p.proj}/CLAUDE.md`),
    `RESTORE_VERIFIED: FAILED - restoration refused; current bytes preserved (${runDir})`,
  ]);
  assert.equal(r.stdout, "");
  assert.ok(version > 1);
  assert.equal(read(`${p.proj}/CLAUDE.md`), last); // the editor's last save, whole
  assert.equal(fileHash(`${p.proj}/.claude/rules/style.md`), styleDraft); // all or nothing
});

Deno.test("two restores of one run at once both succeed and leave the originals", async () => {
  const p = exampleProject({ git: false });
  const snap = runTool("context-guard", ["snapshot", ...FILES], { cwd: p.proj, env: p.env });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  writeFileSync(`${p.proj}/CLAUDE.md`, "draft\n");
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: p.proj,
    env: { CLAUDE_PROJECT_DIR: p.proj, HOME: p.home },
  });
  assert.equal(cp.code, 0, cp.stderr);
  const runs = await Promise.all(
    [1, 2].map(() =>
      runToolAsync("context-guard", ["restore", "--run-dir", runDir], { cwd: p.proj, env: p.env })
    ),
  );
  for (const r of runs) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      outLines(r).at(-1),
      `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`,
    );
  }
  assert.equal(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  assert.equal(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
});
