/**
 * Issue 22, round two of "lose nothing" (`references/context-guard.md#ownership-what-may-be-restored`,
 * `#restoring-a-run-dir`): an unreadable file is never "missing", a damaged copy never passes the
 * gate, OS errors are one line with the summary still printed, and a deleted directory comes back.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import {
  makeSharedTempDir,
  runTool,
  runToolAsUser,
  skipWithoutUnprivilegedUser,
  UNPRIVILEGED_ID,
} from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  exampleProject,
  giveRunsTo,
  outLines,
  read,
  refusedLines,
  STYLE_MD,
  writeTree,
} from "./_guard_fixtures.ts";

function runDirOf(stdout: string): string {
  return stdout.split("\n").find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
}

/** A project (no git) readable by the unprivileged user, its run dir snapshotting `files`. */
function sharedProject(files: Record<string, string>) {
  const base = makeSharedTempDir("ctxkit-lose-");
  const home = `${base}/home`;
  const proj = `${home}/proj`;
  writeTree(proj, files);
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const snap = runTool("context-guard", ["snapshot", ...Object.keys(files)], { cwd: proj, env });
  assert.equal(snap.code, 0, snap.stderr);
  return { home, proj, env, runDir: runDirOf(snap.stdout) };
}

/**
 * Let the unprivileged user act on the run dirs (they become its own: a run is trusted only by its
 * owner) and write into the project's directories.
 */
function shareWith(home: string, proj: string): void {
  giveRunsTo(UNPRIVILEGED_ID, home);
  chmodSync(home, 0o755);
  spawnSync("find", [proj, "-type", "d", "-exec", "chmod", "0777", "{}", "+"]);
}

Deno.test("item 1: a file that exists but cannot be read is never 'still missing': rollback refuses it", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const p = sharedProject({ "CLAUDE.md": CLAUDE_MD });
  // The optimizer deleted the file and owned the deletion (MISSING).
  rmSync(`${p.proj}/CLAUDE.md`);
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", p.runDir, "CLAUDE.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  // Another user's file now lives at that path, unreadable to whoever runs the rollback.
  writeFileSync(`${p.proj}/CLAUDE.md`, "someone else's file\n", { mode: 0o600 });
  shareWith(p.home, p.proj);
  const r = runToolAsUser("context-guard", ["rollback", "--run-dir", p.runDir], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.deepEqual(errLines(r), [
    ...refusedLines(
      "context-guard",
      p.runDir,
      "CLAUDE.md",
      `${p.proj}/CLAUDE.md`,
      undefined,
      true,
    ),
    `ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${p.runDir})`,
  ]);
  assert.deepEqual(outLines(r), [`ROLLBACK: ${p.runDir}`, "ROLLBACK_RESULT: 1 layer(s), FAILED"]);
  assert.equal(read(`${p.proj}/CLAUDE.md`), "someone else's file\n");
});

Deno.test("item 1: checkpoint never records an unreadable file as MISSING", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const p = sharedProject({ "CLAUDE.md": CLAUDE_MD });
  chmodSync(`${p.proj}/CLAUDE.md`, 0o600);
  shareWith(p.home, p.proj);
  const r = runToolAsUser("text-guard", ["checkpoint", "--run-dir", p.runDir, "CLAUDE.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.deepEqual(errLines(r), ["❌ cannot read CLAUDE.md: Permission denied"]);
  assert.equal(r.stdout, "");
  assert.ok(!existsSync(`${p.runDir}/draft/CLAUDE.md.sha256`));
});

Deno.test("item 8: verify checks each snapshot copy against its manifest hash first: a damaged copy never gives GATE: PASS", () => {
  const p = exampleProject();
  const snap = runTool("context-guard", ["snapshot", "CLAUDE.md", ".claude/rules/style.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  // The copy of style.md loses a line (and every token on it); the current file still has them.
  writeFileSync(`${runDir}/orig/.claude/rules/style.md`, "# Style\n");
  const r = runTool("context-guard", ["verify", "CLAUDE.md", ".claude/rules/style.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal(r.stdout, "");
  assert.deepEqual(errLines(r), [
    "❌ SNAPSHOT CHECKSUM MISMATCH: .claude/rules/style.md",
    `RUN: FAILED - snapshot incomplete or damaged; nothing verified, current bytes preserved (${runDir})`,
  ]);
  assert.equal(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  assert.equal(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
});

/** The mode `mkdir` gives a new directory in this process (0777 minus the umask). */
function plainDirMode(): number {
  const d = `${makeSharedTempDir("ctxkit-umask-")}/d`;
  mkdirSync(d);
  return Deno.statSync(d).mode! & 0o7777;
}

const SKILL = ".claude/skills/slim/SKILL.md";
const SKILL_REF = ".claude/skills/slim/refs/deep/notes.md";

Deno.test("item 16: the LLM deleting a whole skill directory: checkpoint records it, rollback makes the directories again", () => {
  const p = exampleProject({ git: false });
  writeTree(p.proj, { [SKILL]: "# Slim\n\nNEVER drop 30.\n", [SKILL_REF]: "notes 4.2\n" });
  const snap = runTool("context-guard", ["snapshot", SKILL, SKILL_REF, "CLAUDE.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  rmSync(`${p.proj}/.claude/skills`, { recursive: true });
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, SKILL, SKILL_REF], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  assert.deepEqual(outLines(cp), [`CHECKPOINT: ${SKILL}`, `CHECKPOINT: ${SKILL_REF}`]);
  assert.equal(read(`${runDir}/draft/${SKILL}.sha256`), "MISSING\n");
  const r = runTool("context-guard", ["rollback", "--run-dir", runDir], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(outLines(r), [
    `ROLLBACK: ${runDir}`,
    `RESTORED: ${SKILL}`,
    `RESTORED: ${SKILL_REF}`,
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`,
    "ROLLBACK_RESULT: 1 layer(s), ok",
  ]);
  assert.equal(read(`${p.proj}/${SKILL}`), "# Slim\n\nNEVER drop 30.\n");
  assert.equal(read(`${p.proj}/${SKILL_REF}`), "notes 4.2\n");
  // Ordinary project directories (0777 minus the umask), not owner-only backup ones.
  for (const d of ["skills", "skills/slim", "skills/slim/refs", "skills/slim/refs/deep"]) {
    assert.equal(Deno.statSync(`${p.proj}/.claude/${d}`).mode! & 0o7777, plainDirMode(), d);
  }
});

Deno.test("item 16: restore <file> of a deleted directory, and verify-deleted of a file whose directory is gone", () => {
  const p = exampleProject({ git: false });
  writeTree(p.proj, { [SKILL]: "# Slim\n\nUse Node 20.11; NEVER skip review.\n" });
  const snap = runTool("context-guard", ["snapshot", SKILL, "CLAUDE.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  rmSync(`${p.proj}/.claude/skills`, { recursive: true });
  // The survivor lacks "review": the proof fails, and its rollback brings the directory back.
  const vd = runTool(
    "context-guard",
    ["verify-deleted", "--run-dir", runDir, "--survivor", "CLAUDE.md", SKILL],
    { cwd: p.proj, env: p.env },
  );
  assert.equal(vd.code, 0, vd.stdout + vd.stderr); // every token of the skill is in CLAUDE.md
  assert.ok(outLines(vd).includes(`MERGED_VERIFIED: ${SKILL} -> CLAUDE.md`), vd.stdout);
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, SKILL], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  const r = runTool("context-guard", ["restore", "--run-dir", runDir, SKILL], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(outLines(r), [
    `RESTORED: ${SKILL}`,
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`,
  ]);
  assert.equal(read(`${p.proj}/${SKILL}`), "# Slim\n\nUse Node 20.11; NEVER skip review.\n");
});

Deno.test("item 16: a link where the deleted directory was is never restored through", () => {
  const p = exampleProject({ git: false });
  writeTree(p.proj, { [SKILL]: "# Slim\n" });
  const snap = runTool("context-guard", ["snapshot", SKILL], { cwd: p.proj, env: p.env });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  rmSync(`${p.proj}/.claude/skills`, { recursive: true });
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, SKILL], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  // A link inside the root (one leading outside it is an unsafe manifest path, exit 2 as well).
  const outside = `${p.proj}/elsewhere`;
  mkdirSync(outside);
  Deno.symlinkSync(outside, `${p.proj}/.claude/skills`);
  const r = runTool("context-guard", ["rollback", "--run-dir", runDir], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(errLines(r), [
    `❌ refusing to restore through the symbolic link ${p.proj}/.claude/skills: ${SKILL}`,
  ]);
  assert.deepEqual(readdirSync(outside), []);
});

Deno.test("item 12: ENOTDIR making the run dir is one line naming the directory, exit 2, with the snapshot's summary", () => {
  const p = exampleProject({ git: false });
  const r = runTool("context-guard", [
    "snapshot",
    "--run-dir",
    `${p.proj}/CLAUDE.md/run`,
    "CLAUDE.md",
  ], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(errLines(r), [
    `❌ cannot create directory ${p.proj}/CLAUDE.md/run: Not a directory`,
    "❌ snapshot failed (text-guard exit 2)",
  ]);
  assert.equal(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("item 12: ENAMETOOLONG making the run dir is one line naming the directory, exit 2, with the snapshot's summary", () => {
  const p = exampleProject({ git: false });
  const runDir = `${p.proj}/${"x".repeat(300)}`; // one component over NAME_MAX (255 bytes)
  const r = runTool("context-guard", ["snapshot", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(errLines(r), [
    `❌ cannot create directory ${runDir}: File name too long`,
    "❌ snapshot failed (text-guard exit 2)",
  ]);
  assert.equal(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("item 12: EACCES in rollback and in verify's rollback: one line naming path and operation, exit 2, every summary printed", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const p = sharedProject({ "CLAUDE.md": CLAUDE_MD, "rules/style.md": STYLE_MD });
  writeFileSync(`${p.proj}/rules/style.md`, "# Style (draft)\n");
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", p.runDir, "rules/style.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  shareWith(p.home, p.proj);
  chmodSync(`${p.proj}/rules`, 0o755); // the user may read rules/ but not create its temp file
  const rb = runToolAsUser("context-guard", ["rollback", "--run-dir", p.runDir], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(rb.code, 2, rb.stdout + rb.stderr);
  assert.deepEqual(errLines(rb), [
    `❌ cannot write ${p.proj}/rules/style.md: Permission denied`,
    `ROLLBACK_VERIFIED: FAILED - restoration failed; current bytes preserved (${p.runDir})`,
  ]);
  assert.deepEqual(outLines(rb), [`ROLLBACK: ${p.runDir}`, "ROLLBACK_RESULT: 1 layer(s), FAILED"]);
  const v = runToolAsUser("context-guard", ["verify", "--run-dir", p.runDir, "rules/style.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(v.code, 2, v.stdout + v.stderr);
  assert.deepEqual(errLines(v), [
    `❌ cannot write ${p.proj}/rules/style.md: Permission denied`,
    `ROLLBACK_VERIFIED: FAILED - restoration failed; current bytes preserved (${p.runDir})`,
    `RUN: FAILED - recovery incomplete; inspect preserved current files in ${p.runDir}`,
  ]);
  assert.equal(outLines(v).at(-1), `ROLLBACK: whole run (gate failed) ${p.runDir}`);
  assert.equal(read(`${p.proj}/rules/style.md`), "# Style (draft)\n");
  assert.equal(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("item 12: ENOSPC while restoring: one line, exit 2, summary printed, nothing replaced", () => {
  const p = exampleProject({ git: false });
  const disk = `${p.base}/small`;
  mkdirSync(disk);
  const mount = spawnSync("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk]);
  if (mount.status !== 0) {
    console.log(`SKIP: cannot mount a small tmpfs (${String(mount.stderr).trim()})`);
    return;
  }
  try {
    const proj = `${disk}/proj`;
    writeTree(proj, { "CLAUDE.md": CLAUDE_MD });
    const env = { HOME: p.home, CLAUDE_PROJECT_DIR: proj };
    const snap = runTool("context-guard", ["snapshot", "CLAUDE.md"], { cwd: proj, env });
    assert.equal(snap.code, 0, snap.stderr);
    const runDir = runDirOf(snap.stdout);
    writeFileSync(`${proj}/CLAUDE.md`, "draft\n");
    const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"], {
      cwd: proj,
      env,
    });
    assert.equal(cp.code, 0, cp.stderr);
    // Fill the disk.
    const fill = Deno.openSync(`${disk}/fill`, { write: true, create: true });
    try {
      for (;;) fill.writeSync(new Uint8Array(4096));
    } catch {
      /* full */
    } finally {
      fill.close();
    }
    const r = runTool("context-guard", ["restore", "--run-dir", runDir], { cwd: proj, env });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.deepEqual(errLines(r), [
      `❌ cannot write ${proj}/CLAUDE.md: No space left on device`,
      `RESTORE_VERIFIED: FAILED - restoration failed; current bytes preserved (${runDir})`,
    ]);
    assert.equal(read(`${proj}/CLAUDE.md`), "draft\n");
    assert.deepEqual(readdirSync(proj).sort(), ["CLAUDE.md"]);
  } finally {
    spawnSync("umount", [disk]);
  }
});

Deno.test("setuid, setgid and sticky bits are dropped when restore rewrites a file (references: Restoring one file)", () => {
  const p = exampleProject({ git: false });
  chmodSync(`${p.proj}/CLAUDE.md`, 0o7755);
  const snap = runTool("context-guard", ["snapshot", "CLAUDE.md"], { cwd: p.proj, env: p.env });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  assert.equal(JSON.parse(read(`${runDir}/manifest.json`)).files[0].mode, "0755");
  writeFileSync(`${p.proj}/CLAUDE.md`, "draft\n");
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  const r = runTool("context-guard", ["restore", "--run-dir", runDir], { cwd: p.proj, env: p.env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  assert.equal(Deno.statSync(`${p.proj}/CLAUDE.md`).mode! & 0o7777, 0o755);
});

/** Five owned drafts in a fresh project (no git), checkpointed; returns the project and run dir. */
function fiveDrafts() {
  const p = exampleProject({ git: false });
  const rels = ["a.md", "b.md", "c.md", "d.md", "e.md"];
  writeTree(p.proj, Object.fromEntries(rels.map((r) => [r, `# ${r} original\n`])));
  const snap = runTool("context-guard", ["snapshot", ...rels], { cwd: p.proj, env: p.env });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  for (const r of rels) writeFileSync(`${p.proj}/${r}`, `# ${r} draft\n`);
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, ...rels], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  return { p, rels, runDir };
}

/** `chattr +i` on `path`, or why it cannot be done here. */
function makeImmutable(path: string): string | undefined {
  const r = spawnSync("chattr", ["+i", path]);
  return r.status === 0 ? undefined : `chattr +i failed (${String(r.stderr).trim() || r.error})`;
}

Deno.test("item 11: a rename failing mid-restore (immutable file) stops there; the summary names exactly what changed", () => {
  const { p, rels, runDir } = fiveDrafts();
  const why = makeImmutable(`${p.proj}/c.md`);
  if (why !== undefined) {
    console.log(`SKIP: ${why}`);
    return;
  }
  try {
    for (const [command, label] of [["restore", "RESTORE"], ["rollback", "ROLLBACK"]]) {
      const r = runTool("context-guard", [command, "--run-dir", runDir], {
        cwd: p.proj,
        env: p.env,
      });
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.deepEqual(errLines(r), [
        `❌ cannot replace ${p.proj}/c.md: Operation not permitted`,
        `${label}_VERIFIED: FAILED - restoration stopped at c.md; 2 of 5 file(s) restored (the RESTORED: lines), every other file keeps its current bytes (${runDir})`,
      ]);
      const restored = outLines(r).filter((l) => l.startsWith("RESTORED: "));
      assert.deepEqual(restored, ["RESTORED: a.md", "RESTORED: b.md"]);
      for (const rel of rels) {
        const want = rel === "a.md" || rel === "b.md" ? "original" : "draft";
        assert.equal(read(`${p.proj}/${rel}`), `# ${rel} ${want}\n`, rel);
      }
      assert.deepEqual(readdirSync(p.proj).sort(), [".claude", "CLAUDE.md", ...rels]);
    }
  } finally {
    spawnSync("chattr", ["-i", `${p.proj}/c.md`]);
  }
  const again = runTool("context-guard", ["restore", "--run-dir", runDir], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(again.code, 0, again.stderr);
  for (const rel of rels) assert.equal(read(`${p.proj}/${rel}`), `# ${rel} original\n`);
});

Deno.test("item 12: a target verify cannot read is one line naming it, exit 2, nothing gated", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const p = sharedProject({ "CLAUDE.md": CLAUDE_MD });
  shareWith(p.home, p.proj);
  chmodSync(`${p.proj}/CLAUDE.md`, 0o600); // another user's file now
  const r = runToolAsUser("context-guard", ["verify", "--run-dir", p.runDir, "CLAUDE.md"], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.deepEqual(errLines(r), ["❌ cannot read CLAUDE.md: Permission denied"]);
  assert.equal(r.stdout, "");
});
