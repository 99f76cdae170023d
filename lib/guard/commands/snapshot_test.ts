import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";

import { collectingReporter } from "../report.ts";
import type { GuardRoots } from "../roots.ts";
import { newestRunDirs, resolveBackup } from "../backups.ts";
import { snapshot } from "./snapshot.ts";
import { restore, rollback } from "./restore.ts";
import { checkpoint } from "../stage/checkpoint.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

function setup(): { roots: GuardRoots; file: string } {
  const base = makeTempDir("ctxkit-snap-");
  const global = `${base}/home/.claude`;
  const roots = { project: `${base}/proj`, global, backups: `${global}/backups` };
  Deno.mkdirSync(roots.project, { recursive: true });
  const file = `${roots.project}/CLAUDE.md`;
  writeFileSync(file, "v0 NEVER 1\n");
  return { roots, file };
}

Deno.test("three snapshots in one second: -2, -3; last, restore, newest run pick -3 (G15)", () => {
  const { roots, file } = setup();
  const now = new Date(2026, 9, 12, 14, 3, 7);
  const dirs: string[] = [];
  for (let i = 1; i <= 3; i++) {
    writeFileSync(file, `v${i} NEVER ${i}\n`);
    const r = snapshot({ roots, files: [file], scriptPath: "/x/context-guard.ts", now });
    dirs.push(r.runDir);
  }
  const b = roots.backups;
  deepStrictEqual(dirs, [
    `${b}/20261012-140307-project_context-slim`,
    `${b}/20261012-140307-project-2_context-slim`,
    `${b}/20261012-140307-project-3_context-slim`,
  ]);
  strictEqual(resolveBackup(b, "last", "project"), dirs[2]);
  deepStrictEqual(newestRunDirs(b), [dirs[2], dirs[1], dirs[0]]);
  // The -3 copy holds v3; a checkpointed draft is rolled back to it by `restore` with no selector.
  writeFileSync(file, "draft\n");
  checkpoint({ projectDir: roots.project, runDir: dirs[2], files: [file] });
  const out = collectingReporter();
  const r = restore({ roots, layer: "project", files: [] }, out);
  strictEqual(r.ok, true);
  strictEqual(readFileSync(file, "utf8"), "v3 NEVER 3\n");
  deepStrictEqual(out.lines.map((l) => l.text), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${dirs[2]})`,
  ]);
  // Retention: three more runs in the same second; the oldest of the second goes first.
  const pruned: string[] = [];
  for (let i = 4; i <= 6; i++) {
    const rep = collectingReporter();
    snapshot({ roots, files: [file], scriptPath: "/x", now }, rep);
    for (const l of rep.lines) if (l.text.startsWith("PRUNED: ")) pruned.push(l.text.slice(8));
  }
  deepStrictEqual(pruned, [dirs[0]]);
  ok(newestRunDirs(b)[0].endsWith("-project-6_context-slim"));
  // rollback with no run dirs takes the newest run: the five dirs of that second. The file holds
  // v3, the original of -3 … -6; -2 (v2) has no draft record for it and is refused.
  const rb = collectingReporter();
  const result = rollback({ roots, runDirs: [] }, rb);
  strictEqual(result.runs.length, 5);
  strictEqual(result.ok, false);
});
