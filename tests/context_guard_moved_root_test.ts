/**
 * Every run belongs to its project, also when the project is reached through a link that is later
 * re-pointed (`references/context-guard.md#backups-and-run-dirs`, `#reading`): the manifest
 * records the physical root, and a run whose root now resolves elsewhere is not this project's.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  copyFileSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { makeTempDir, type RunResult, runTool } from "./_helpers.ts";
import { errLines, outLines, read } from "./_guard_fixtures.ts";

Deno.test("a re-pointed project link sends no run into another project: restore last, --run-dir, verify", () => {
  const base = makeTempDir("ctxkit-moved-");
  const home = `${base}/home`;
  const projA = `${base}/projA`;
  const projB = `${base}/projB`;
  mkdirSync(projA);
  mkdirSync(projB);
  const current = `${base}/current`;
  symlinkSync(projA, current);
  const env = { HOME: home, CLAUDE_PROJECT_DIR: current };
  const cg = (args: string[]): RunResult => runTool("context-guard", args, { cwd: current, env });
  writeFileSync(`${projA}/CLAUDE.md`, "A: NEVER push 1\n");
  const snap = cg(["snapshot", "CLAUDE.md"]);
  strictEqual(snap.code, 0, snap.stderr);
  const runDir = outLines(snap).find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  const manifest = JSON.parse(readFileSync(`${runDir}/manifest.json`, "utf8"));
  strictEqual(manifest.root, current);
  strictEqual(manifest.root_physical, projA);
  // A's draft, checkpointed; B is a copy of A made after the edit (so A's record owns B's bytes).
  writeFileSync(`${projA}/CLAUDE.md`, "A draft\n");
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: current,
    env,
  });
  strictEqual(cp.code, 0, cp.stderr);
  copyFileSync(`${projA}/CLAUDE.md`, `${projB}/CLAUDE.md`);
  unlinkSync(current);
  symlinkSync(projB, current);

  const last = cg(["restore", "last"]);
  strictEqual(last.code, 2, last.stdout + last.stderr);
  deepStrictEqual(outLines(last), []);
  deepStrictEqual(errLines(last), [
    `❌ no backups under ${home}/.claude/backups for the project root ${current}`,
  ]);
  const moved =
    `❌ manifest root ${current} is now ${projB}, not ${projA} where the run was taken (${runDir}/manifest.json)`;
  for (const args of [["restore", "--run-dir", runDir], ["rollback", "--run-dir", runDir]]) {
    const r = cg(args);
    strictEqual(r.code, 2, `${args.join(" ")}\n${r.stdout}${r.stderr}`);
    deepStrictEqual(errLines(r), [moved]);
  }
  const verify = cg(["verify", "--run-dir", runDir, "CLAUDE.md"]);
  strictEqual(verify.code, 2, verify.stdout + verify.stderr);
  deepStrictEqual(outLines(verify), []);
  deepStrictEqual(errLines(verify), [moved]);
  strictEqual(read(`${projB}/CLAUDE.md`), "A draft\n");

  // Pointed back at A, the run is A's again: restore last puts A's original back.
  unlinkSync(current);
  symlinkSync(projA, current);
  const back = cg(["restore", "last"]);
  strictEqual(back.code, 0, back.stderr);
  deepStrictEqual(outLines(back), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`,
  ]);
  strictEqual(read(`${projA}/CLAUDE.md`), "A: NEVER push 1\n");
  strictEqual(read(`${projB}/CLAUDE.md`), "A draft\n");
});
