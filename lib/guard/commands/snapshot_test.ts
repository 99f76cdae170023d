import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";

import { collectingReporter } from "../report.ts";
import type { GuardRoots } from "../roots.ts";
import { readRuns, runGroups } from "../runs.ts";
import { makeRunDir } from "../_test_utils.ts";
import { resolveSpec } from "../selection.ts";
import { snapshot } from "./snapshot.ts";
import { restore } from "./restore.ts";
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

Deno.test("three snapshots in one second: -2, -3 in creation order; last and restore pick -3", async () => {
  const { roots, file } = setup();
  const now = new Date(2026, 9, 12, 14, 3, 7);
  const dirs: string[] = [];
  for (let i = 1; i <= 3; i++) {
    writeFileSync(file, `v${i} NEVER ${i}\n`);
    const r = await snapshot({ roots, files: [file], scriptPath: "/x/context-guard.ts", now });
    dirs.push(r.runDir);
  }
  const b = roots.backups;
  deepStrictEqual(dirs, [
    `${b}/20261012-140307-project_context-slim`,
    `${b}/20261012-140307-project-2_context-slim`,
    `${b}/20261012-140307-project-3_context-slim`,
  ]);
  const runs = readRuns(b);
  deepStrictEqual(runs.map((r) => [r.dir, r.head?.seq]), [[dirs[2], 3], [dirs[1], 2], [
    dirs[0],
    1,
  ]]);
  strictEqual(resolveSpec(runs, roots, "last", "project"), dirs[2]);
  // Each project snapshot is a run of its own: the newest run is -3 alone.
  deepStrictEqual(runGroups(runs, roots).map((g) => g.map((r) => r.dir)), [[dirs[2]], [dirs[1]], [
    dirs[0],
  ]]);
  // The -3 copy holds v3; a checkpointed draft is rolled back to it by `restore` with no selector.
  writeFileSync(file, "draft\n");
  await checkpoint({ projectDir: roots.project, runDir: dirs[2], files: [file] });
  const out = collectingReporter();
  const r = await restore({ roots, layer: "project", files: [] }, out);
  strictEqual(r.ok, true);
  strictEqual(readFileSync(file, "utf8"), "v3 NEVER 3\n");
  deepStrictEqual(out.lines.map((l) => l.text), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${dirs[2]})`,
  ]);
});

Deno.test("retention: five runs per root and layer, never one younger than a day, oldest first", async () => {
  const { roots, file } = setup();
  const day = 24 * 60 * 60 * 1000;
  const t0 = new Date(2026, 9, 12, 14, 3, 7).getTime();
  const snap = async (at: number) => {
    const rep = collectingReporter();
    const r = await snapshot({ roots, files: [file], scriptPath: "/x", now: new Date(at) }, rep);
    return {
      dir: r.runDir,
      pruned: rep.lines.flatMap((l) => l.text.startsWith("PRUNED: ") ? [l.text.slice(8)] : []),
    };
  };
  const first = [];
  for (const i of [0, 1, 2, 3, 4, 5]) first.push(await snap(t0 + i * 1000));
  // Six runs within seconds: all younger than a day, none pruned.
  deepStrictEqual(first.flatMap((s) => s.pruned), []);
  // Another project's run and a global run are never counted or pruned with this root's.
  const other = { ...roots, project: `${roots.project}-other` };
  Deno.mkdirSync(other.project);
  writeFileSync(`${other.project}/CLAUDE.md`, "other 1\n");
  await snapshot({
    roots: other,
    files: [`${other.project}/CLAUDE.md`],
    scriptPath: "/x",
    now: new Date(t0),
  });
  // Two days later: keep the new run and the four newest others; the two oldest go, oldest last.
  const later = await snap(t0 + 2 * day);
  deepStrictEqual(later.pruned, [first[1].dir, first[0].dir]);
  strictEqual(readRuns(roots.backups).filter((r) => r.head?.root === other.project).length, 1);
});

Deno.test("retention: a --run-dir given with a trailing slash counts once, so exactly one old run goes", async () => {
  // references/context-guard.md#retention: run dirs are compared by normalised path.
  const { roots, file } = setup();
  const day = 24 * 60 * 60 * 1000;
  const t0 = new Date(2026, 9, 12, 14, 3, 7).getTime();
  const old: string[] = [];
  for (const i of [0, 1, 2, 3, 4]) {
    const r = await snapshot({
      roots,
      files: [file],
      scriptPath: "/x",
      now: new Date(t0 + i * 1000),
    });
    old.push(r.runDir);
  }
  const rep = collectingReporter();
  const runDir = `${roots.backups}/manual_context-slim/`;
  await snapshot(
    { roots, files: [file], scriptPath: "/x", runDir, now: new Date(t0 + 2 * day) },
    rep,
  );
  deepStrictEqual(rep.lines.filter((l) => l.text.startsWith("PRUNED: ")).map((l) => l.text), [
    `PRUNED: ${old[0]}`,
  ]);
  strictEqual(readRuns(roots.backups).length, 5);
  // The manifest records the run dir normalised (absolute, no trailing slash).
  const manifest = JSON.parse(readFileSync(`${runDir}manifest.json`, "utf8"));
  strictEqual(manifest.run_dir, `${roots.backups}/manual_context-slim`);
});

Deno.test("order: one manifest with seq near 2^53 (or at the bound) cannot push later runs behind it", async () => {
  // references/context-guard.md#order: seq is bounded (1..2^31-1) and validated on its own.
  const MAX_SEQ = 2 ** 31 - 1;
  for (const poison of [2 ** 53 - 1, 1e300, MAX_SEQ]) {
    const { roots, file } = setup();
    const bad = makeRunDir(roots.backups, "20990101-000000-project_context-slim", {
      layer: "project",
      root: roots.project,
      created: "2026-01-01T00:00:00.000Z",
      seq: poison,
      files: [{ path: "CLAUDE.md" }],
    });
    const fresh = await snapshot({ roots, files: [file], scriptPath: "/x" });
    const runs = readRuns(roots.backups);
    deepStrictEqual(runs.map((r) => r.dir), [fresh.runDir, bad], String(poison));
    // Both are complete runs: the poisoned one keeps its place among runs, never hides the new one.
    deepStrictEqual(runs.map((r) => r.head !== undefined), [true, true]);
    strictEqual(runs[0].head?.seq, poison === MAX_SEQ ? MAX_SEQ : 1);
    strictEqual(resolveSpec(runs, roots, "last", "project"), fresh.runDir);
  }
});
