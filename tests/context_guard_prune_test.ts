/**
 * Retention never turns a successful snapshot into a failure (`references/context-guard.md#retention`):
 * a run of the user's it cannot remove (an immutable file inside) is skipped with one warning line,
 * and the snapshot's own result (exit 0) stands. A run another user left in the user's backup root
 * (`sudo -E`) is not the user's: named in one line, never counted nor removed
 * (`#whose-runs-are-trusted`). Two real uids: the test runs as root, the snapshot as `nobody`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import {
  IS_ROOT,
  makeSharedTempDir,
  makeTempDir,
  runTool,
  runToolAsUser,
  skipWithoutUnprivilegedUser,
  UNPRIVILEGED_ID,
} from "./_helpers.ts";
import { errLines, outLines } from "./_guard_fixtures.ts";

const TWO_DAYS = 2 * 24 * 60 * 60 * 1000;

Deno.test({
  name:
    "retention leaves a root-owned stale run in the user's backup root alone: named once, never pruned, the snapshot exits 0",
  ignore: !IS_ROOT,
  fn: () => {
    if (skipWithoutUnprivilegedUser()) return;
    const base = makeSharedTempDir("ctxkit-prune-");
    const home = `${base}/home`;
    const proj = `${base}/proj`;
    const backups = `${home}/.claude/backups`;
    mkdirSync(backups, { recursive: true });
    mkdirSync(proj);
    writeFileSync(`${proj}/CLAUDE.md`, "rules NEVER 1\n");
    for (const p of [home, `${home}/.claude`, backups, proj, `${proj}/CLAUDE.md`]) {
      chownSync(p, UNPRIVILEGED_ID, UNPRIVILEGED_ID);
    }
    // root's run, 0700, two days old: not nobody's, so neither counted nor removed.
    const stale = `${backups}/20200101-000000-project_context-slim`;
    mkdirSync(`${stale}/orig`, { recursive: true, mode: 0o700 });
    writeFileSync(`${stale}/orig/CLAUDE.md`, "root's copy\n");
    const old = new Date(Date.now() - TWO_DAYS);
    utimesSync(stale, old, old);
    const r = runToolAsUser("context-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
      cwd: proj,
      env: { HOME: home, CLAUDE_PROJECT_DIR: proj },
    });
    strictEqual(r.code, 0, r.stdout + r.stderr);
    const out = outLines(r);
    ok(out.some((l) => l.startsWith("MANIFEST: ")), r.stdout);
    ok(!out.some((l) => l.startsWith("PRUNED: ")), r.stdout);
    deepStrictEqual(errLines(r), [
      `⚠️ ignoring ${stale}: not yours (owner uid 0) - never selected, restored or pruned`,
    ]);
    ok(existsSync(`${stale}/orig/CLAUDE.md`));
  },
});

Deno.test("retention skips a stale run of the user's it cannot remove: one warning, the snapshot exits 0", () => {
  const base = makeTempDir("ctxkit-prune-");
  const home = `${base}/home`;
  const proj = `${base}/proj`;
  const backups = `${home}/.claude/backups`;
  mkdirSync(backups, { recursive: true, mode: 0o700 });
  mkdirSync(proj);
  writeFileSync(`${proj}/CLAUDE.md`, "rules NEVER 1\n");
  // An incomplete run of the user's, two days old, holding an immutable file.
  const stale = `${backups}/20200101-000000-project_context-slim`;
  mkdirSync(`${stale}/orig`, { recursive: true, mode: 0o700 });
  writeFileSync(`${stale}/orig/CLAUDE.md`, "old copy\n", { mode: 0o600 });
  const chattr = spawnSync("chattr", ["+i", `${stale}/orig/CLAUDE.md`], { encoding: "utf8" });
  if (chattr.status !== 0) {
    console.log(`SKIP: chattr +i is not available here: ${chattr.stderr.trim()}`);
    return;
  }
  try {
    const old = new Date(Date.now() - TWO_DAYS);
    utimesSync(stale, old, old);
    const r = runTool("context-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
      cwd: proj,
      env: { HOME: home, CLAUDE_PROJECT_DIR: proj },
    });
    strictEqual(r.code, 0, r.stdout + r.stderr);
    ok(outLines(r).some((l) => l.startsWith("MANIFEST: ")), r.stdout);
    ok(!outLines(r).some((l) => l.startsWith("PRUNED: ")), r.stdout);
    deepStrictEqual(errLines(r), [
      `⚠️ cannot prune ${stale} (Operation not permitted) - left in place`,
    ]);
    ok(existsSync(`${stale}/orig/CLAUDE.md`));
  } finally {
    spawnSync("chattr", ["-i", `${stale}/orig/CLAUDE.md`]);
  }
});
