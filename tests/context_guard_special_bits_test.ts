/**
 * setuid, setgid and sticky bits are never restored (`references/context-guard.md#restoring-one-file`):
 * the manifest records the permission bits (`0o777`) only, so a restore never makes a file
 * setuid from a backup — a documented limit, on the safe side.
 */
import { strictEqual } from "node:assert/strict";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { makeTempDir, runTool } from "./_helpers.ts";
import { modeOf, outLines } from "./_guard_fixtures.ts";

Deno.test("restore gives back the permission bits, never setuid/setgid/sticky", () => {
  const base = makeTempDir("ctxkit-bits-");
  const proj = `${base}/proj`;
  Deno.mkdirSync(proj);
  const env = { HOME: `${base}/home`, CLAUDE_PROJECT_DIR: proj };
  const file = `${proj}/CLAUDE.md`;
  writeFileSync(file, "rules NEVER 1\n");
  chmodSync(file, 0o7755);
  strictEqual(modeOf(file), 0o7755);
  const snap = runTool("context-guard", ["snapshot", "CLAUDE.md"], { cwd: proj, env });
  strictEqual(snap.code, 0, snap.stderr);
  const runDir = outLines(snap).find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  const manifest = JSON.parse(readFileSync(`${runDir}/manifest.json`, "utf8"));
  strictEqual(manifest.files[0].mode, "0755");
  writeFileSync(file, "draft\n");
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: proj,
    env,
  });
  strictEqual(cp.code, 0, cp.stderr);
  const r = runTool("context-guard", ["restore", "--run-dir", runDir], { cwd: proj, env });
  strictEqual(r.code, 0, r.stderr);
  strictEqual(readFileSync(file, "utf8"), "rules NEVER 1\n");
  strictEqual(modeOf(file), 0o755);
});
