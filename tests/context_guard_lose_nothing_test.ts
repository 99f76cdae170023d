/**
 * Issue 22, round two of "lose nothing" (`references/context-guard.md#ownership-what-may-be-restored`,
 * `#restoring-a-run-dir`): an unreadable file is never "missing", a damaged copy never passes the
 * gate, OS errors are one line with the summary still printed, and a deleted directory comes back.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import {
  makeSharedTempDir,
  runTool,
  runToolAsUser,
  skipWithoutUnprivilegedUser,
} from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  exampleProject,
  fileHash,
  outLines,
  read,
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

/** Let the unprivileged user read the run dirs and write into the project's directories. */
function shareWith(home: string, proj: string): void {
  spawnSync("chmod", ["-R", "a+rX", `${home}/.claude`]);
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
    "RESTORE_REFUSED: CLAUDE.md (current bytes lack matching draft ownership)",
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
  spawnSync("chmod", ["-R", "a+rwX", `${p.home}/.claude`]);
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
