/**
 * Retention never turns a successful snapshot into a failure (`references/context-guard.md#retention`):
 * a run it cannot remove — another user's, left in the user's backup root by `sudo -E` — is
 * skipped with one warning line, and the snapshot's own result (exit 0) stands. Two real uids: the
 * test runs as root, the snapshot as `nobody`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { chownSync, existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import {
  IS_ROOT,
  makeSharedTempDir,
  runToolAsUser,
  skipWithoutUnprivilegedUser,
  UNPRIVILEGED_ID,
} from "./_helpers.ts";
import { errLines, outLines } from "./_guard_fixtures.ts";

Deno.test({
  name:
    "retention skips a root-owned stale run it cannot remove: one warning, the snapshot exits 0",
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
    // root's run, 0700, two days old: for nobody an unreadable (incomplete) run due for removal.
    const stale = `${backups}/20200101-000000-project_context-slim`;
    mkdirSync(`${stale}/orig`, { recursive: true, mode: 0o700 });
    writeFileSync(`${stale}/orig/CLAUDE.md`, "root's copy\n");
    const old = new Date(Date.now() - 2 * 24 * 60 * 60 * 1000);
    utimesSync(stale, old, old);
    const r = runToolAsUser("context-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
      cwd: proj,
      env: { HOME: home, CLAUDE_PROJECT_DIR: proj },
    });
    strictEqual(r.code, 0, r.stdout + r.stderr);
    const out = outLines(r);
    ok(out.some((l) => l.startsWith("MANIFEST: ")), r.stdout);
    ok(!out.some((l) => l.startsWith("PRUNED: ")), r.stdout);
    deepStrictEqual(errLines(r), [`⚠️ cannot prune ${stale} (Permission denied) - left in place`]);
    ok(existsSync(`${stale}/orig/CLAUDE.md`));
  },
});
