import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";

import { PathRefusedError } from "./errors.ts";
import { collectingReporter } from "./report.ts";
import {
  autoRunDirName,
  compareRunNames,
  compareRuns,
  invocationRuns,
  layerRuns,
  nextSeq,
  pruneRuns,
  readRun,
  readRuns,
  RETAIN_YOUNGER_MS,
  type Run,
  runGroups,
  sameRootAs,
  stampInstant,
  warnIncomplete,
} from "./runs.ts";
import type { Text } from "../text.ts";
import { guardRootsFixture, makeRunDir } from "./_test_utils.ts";

const DAY = RETAIN_YOUNGER_MS;
const HASH = "0".repeat(64);

const setup = () => guardRootsFixture("ctxkit-runs-");

const makeRun = makeRunDir;

/** A complete manifest of `layer` and `root`, plus `extra` keys. */
function head(layer: string, root: string, extra: Record<string, unknown> = {}) {
  return { layer, root, files: [{ path: "CLAUDE.md", sha256: HASH }], ...extra };
}

/** A run with no creation record (name order only) or with the given head fields. */
function run(name: string, fields: { seq?: number; created?: number } = {}): Run {
  return {
    name,
    dir: `/b/${name}`,
    head: { layer: "project", root: "/p", ...fields },
    rawLayer: "project",
  };
}

const names = (runs: readonly Run[]) => runs.map((r) => r.name);
const ts = (ms: number) => new Date(ms).toISOString();

Deno.test("autoRunDirName: <B>/<stamp>-<layer>_context-slim, the collision index before the suffix", () => {
  assert.equal(
    autoRunDirName("/b", "20261012-140307", "project", 1),
    "/b/20261012-140307-project_context-slim",
  );
  assert.equal(
    autoRunDirName("/b", "20261012-140307", "global", 3),
    "/b/20261012-140307-global-3_context-slim",
  );
});

Deno.test("compareRuns orders newest first by seq, then the created instant, never by the name", () => {
  // The names say the opposite of the creation record (a clock step, another TZ): seq wins.
  const a = run("20300101-000000-project_context-slim", { seq: 1, created: 3000 });
  const b = run("20200101-000000-project_context-slim", { seq: 2, created: 1000 });
  assert.deepEqual(names([a, b].sort(compareRuns)), [b.name, a.name]);
  // Equal seq (two concurrent snapshots): the later created instant first, whatever the names.
  const c = run("20300101-000000-project_context-slim", { seq: 5, created: 1000 });
  const d = run("20200101-000000-project_context-slim", { seq: 5, created: 2000 });
  assert.deepEqual(names([c, d].sort(compareRuns)), [d.name, c.name]);
  // A run with a creation record comes before every run made before records existed.
  const legacy = run("20991231-235959-project_context-slim");
  assert.deepEqual(names([legacy, a].sort(compareRuns)), [a.name, legacy.name]);
});

Deno.test("compareRunNames: stamp descending, suffix descending as a number (none = 1), project before global", () => {
  const sorted = [
    "20261012-140307-global_context-slim",
    "20261012-140307-project-2_context-slim",
    "20261012-140307-project_context-slim",
    "20261012-140307-project-10_context-slim",
    "20261012-140308-global_context-slim",
    "20261012-140307-project-9_context-slim",
    "20261012-140307-global-02_context-slim",
    "20251231-235959-project-99_context-slim",
  ].sort(compareRunNames);
  assert.deepEqual(sorted, [
    "20261012-140308-global_context-slim",
    "20261012-140307-project-10_context-slim",
    "20261012-140307-project-9_context-slim",
    "20261012-140307-project-2_context-slim",
    "20261012-140307-global-02_context-slim",
    "20261012-140307-project_context-slim",
    "20261012-140307-global_context-slim",
    "20251231-235959-project-99_context-slim",
  ]);
  // Legacy runs (no record) through compareRuns use exactly this order.
  const legacy = sorted.map((n) => run(n)).reverse().sort(compareRuns);
  assert.deepEqual(names(legacy), sorted);
});

Deno.test({
  name:
    "compareRuns: a run that recorded its created instant comes before one that recorded neither",
  fn() {
    const recorded = run("20200101-000000-project_context-slim", { created: 1000 });
    const legacy = run("20301231-000000-project_context-slim");
    assert.deepEqual(names([legacy, recorded].sort(compareRuns)), [recorded.name, legacy.name]);
  },
});

Deno.test("readRuns: only complete *_context-slim directories have a head; links, other names and no B are no runs", () => {
  const r = setup();
  const b = r.backups;
  makeRun(
    b,
    "20260101-000001-project_context-slim",
    head("project", `${r.project}///`, {
      created: "2026-01-01T00:00:01.000Z",
      seq: 3,
      project_root: "/recorded-as-is",
    }),
  );
  makeRun(b, "20260101-000002-project_context-slim"); // no manifest
  makeRun(b, "20260101-000003-global_context-slim", head("Global", r.global)); // bad layer
  makeRun(b, "20260101-000004-project_context-slim", head("project", "rel/root"));
  makeRun(b, "20260101-000005-project_context-slim", { ...head("project", r.project), files: [] });
  makeRun(b, "20260101-000006-weird_context-slim", head("weird", r.project));
  makeRun(b, "20260101-000007-project_context-slim", head("project", r.project, { seq: -1 }));
  const linked = makeRun(b, "20260101-000008-project_context-slim");
  writeFileSync(`${r.base}/m.json`, JSON.stringify(head("project", r.project)));
  symlinkSync(`${r.base}/m.json`, `${linked}/manifest.json`); // a linked manifest is none
  makeRun(
    b,
    "20260101-000009-project_context-slim",
    head("project", r.project, {
      created: "not a date",
    }),
  );
  makeRun(b, "20260101-000010-project", head("project", r.project)); // not a run name
  symlinkSync(
    `${b}/20260101-000001-project_context-slim`,
    `${b}/20260101-000011-project_context-slim`,
  );
  writeFileSync(`${b}/20260101-000012-project_context-slim`, "a file");

  const runs = readRuns(b);
  assert.deepEqual(runs.map((x) => [x.name.slice(9, 15), x.head, x.rawLayer]), [
    ["000001", {
      layer: "project",
      root: r.project,
      projectRoot: "/recorded-as-is",
      created: Date.UTC(2026, 0, 1, 0, 0, 1),
      seq: 3,
    }, "project"],
    ["000009", { layer: "project", root: r.project }, "project"],
    ["000008", undefined, "?"],
    ["000007", { layer: "project", root: r.project }, "project"], // a bad seq is ignored, not fatal
    ["000006", undefined, "weird"],
    ["000005", undefined, "project"],
    ["000004", undefined, "project"],
    ["000003", undefined, "?"],
    ["000002", undefined, "?"],
  ]);
  assert.equal(nextSeq(b), 4);
  assert.deepEqual(readRuns(`${r.base}/absent`), []);
  assert.equal(nextSeq(`${r.base}/absent`), 1);
  // The file-system root keeps its one slash.
  const rootRun = makeRun(r.base, "x_context-slim", head("global", "/"));
  assert.equal(readRun(rootRun).head?.root, "/");
});

Deno.test("sameRootAs: the same string or the same physical directory", () => {
  const r = setup();
  symlinkSync(r.project, `${r.base}/proj-link`);
  mkdirSync(`${r.base}/other`);
  assert.equal(sameRootAs(r.project)(`${r.base}/proj-link`), true);
  assert.equal(sameRootAs(`${r.base}/nowhere`)(`${r.base}/nowhere`), true);
  assert.equal(sameRootAs(r.project)(`${r.base}/other`), false);
  assert.equal(sameRootAs(`${r.base}/nowhere`)(`${r.base}/nowhere-else`), false);
});

Deno.test({
  name:
    "sameRootAs answers for the directories as they are now, not as they were at the first call",
  fn() {
    const r = setup();
    symlinkSync(`${r.base}/later`, `${r.base}/later-link`);
    assert.equal(sameRootAs(`${r.base}/later`)(`${r.base}/later-link`), false); // neither resolves yet
    mkdirSync(`${r.base}/later`);
    assert.equal(sameRootAs(`${r.base}/later`)(`${r.base}/later-link`), true);
    mkdirSync(`${r.base}/a`);
    mkdirSync(`${r.base}/b`);
    symlinkSync(`${r.base}/a`, `${r.base}/ab`);
    assert.equal(sameRootAs(`${r.base}/a`)(`${r.base}/ab`), true);
    Deno.removeSync(`${r.base}/ab`);
    symlinkSync(`${r.base}/b`, `${r.base}/ab`);
    assert.equal(sameRootAs(`${r.base}/a`)(`${r.base}/ab`), false);
  },
});

Deno.test("layerRuns and invocationRuns: only this project's runs, and global runs taken from it or recording no project", () => {
  const r = setup();
  const b = r.backups;
  const other = `${r.base}/other`;
  mkdirSync(other);
  symlinkSync(r.project, `${r.base}/proj-link`);
  const mk = (n: number, layer: string, root: string, extra: Record<string, unknown> = {}) =>
    makeRun(b, `2026010${n}-000000-${layer}_context-slim`, head(layer, root, { seq: n, ...extra }));
  mk(1, "project", r.project);
  mk(2, "project", other);
  mk(3, "global", r.global, { project_root: r.project });
  mk(4, "global", r.global, { project_root: other });
  mk(5, "global", r.global); // legacy: no project recorded
  mk(6, "project", `${r.base}/proj-link`); // the same directory through a link
  mk(7, "global", `${r.base}/elsewhere`, { project_root: r.project });
  makeRun(b, "20260108-000000-project_context-slim"); // incomplete
  const runs = readRuns(b);
  const day = (x: Run) => x.name.slice(7, 8);
  assert.deepEqual(layerRuns(runs, "project", r.project).map(day), ["6", "1"]);
  assert.deepEqual(layerRuns(runs, "global", r.global).map(day), ["5", "4", "3"]);
  assert.deepEqual(invocationRuns(runs, r).map(day), ["6", "5", "3", "1"]);
  assert.deepEqual(invocationRuns(runs, { ...r, project: other }).map(day), ["5", "4", "2"]);
});

Deno.test("runGroups pairs each project run with the first global run of its project taken after it, by creation order", () => {
  const r = setup();
  const b = r.backups;
  const other = `${r.base}/other`;
  const mk = (name: string, seq: number, layer: string, extra: Record<string, unknown> = {}) =>
    makeRun(
      b,
      `${name}-${layer}_context-slim`,
      head(layer, layer === "global" ? r.global : r.project, { seq, ...extra }),
    );
  mk("20260101-000000", 1, "global", { project_root: r.project }); // before any project run
  mk("20260101-000010", 2, "project");
  mk("20260101-000011", 3, "global", { project_root: other }); // another project's: skipped
  mk("20260101-000012", 4, "global", { project_root: r.project }); // pairs with seq 2
  mk("20260101-000013", 5, "global", { project_root: r.project }); // second one: alone
  // The global run's name stamp is a second *earlier* (a clock step): creation order still pairs.
  mk("20260101-000021", 6, "project");
  mk("20260101-000020", 7, "global"); // legacy global (no project_root): counts as this project's
  mk("20260101-000030", 8, "project", { root: other }); // another project's project run
  mk("20260101-000040", 9, "project"); // no global after it
  makeRun(b, "20260101-000050-project_context-slim"); // incomplete: never grouped
  const groups = runGroups(readRuns(b), r).map((g) => g.map((x) => x.head?.seq));
  assert.deepEqual(groups, [[9], [6, 7], [5], [2, 4], [1]]);
});

Deno.test("warnIncomplete prints one line counting the incomplete runs, and nothing when there are none", () => {
  const r = setup();
  makeRun(r.backups, "20260101-000000-project_context-slim", head("project", r.project));
  const quiet = collectingReporter();
  warnIncomplete(readRuns(r.backups), r.backups, quiet);
  assert.deepEqual(quiet.lines, []);
  makeRun(r.backups, "20260101-000001-project_context-slim");
  makeRun(r.backups, "20260101-000002-project_context-slim", { layer: "project" });
  const out = collectingReporter();
  warnIncomplete(readRuns(r.backups), r.backups, out);
  assert.deepEqual(out.lines, [{
    stream: "stderr",
    text: `⚠️ ignoring 2 incomplete run dir(s) without a valid manifest in ${r.backups}`,
  }]);
});

Deno.test("stampInstant reads the name's stamp as local time; a name without one has none", () => {
  assert.equal(
    stampInstant("20261012-140307-project_context-slim"),
    new Date(2026, 9, 12, 14, 3, 7).getTime(),
  );
  assert.equal(stampInstant("2026-10-12-project_context-slim"), undefined);
  assert.equal(stampInstant("x20261012-140307"), undefined);
});

Deno.test("pruneRuns keeps the newest 5 of each root and layer and never one younger than a day", () => {
  const r = setup();
  const b = r.backups;
  const now = Date.UTC(2026, 9, 12, 12, 0, 0);
  const mk = (i: number, age: number, layer = "project", root = r.project) =>
    makeRun(
      b,
      `2026010${i}-000000-${layer}_context-slim`,
      head(layer, root, { seq: i, created: ts(now - age) }),
    );
  // Oldest first: seq 1..8. Runs 1-2 are old; 3 is young although beyond the five; 4-8 old.
  const dirs = [
    mk(1, 9 * DAY),
    mk(2, 8 * DAY),
    mk(3, DAY - 1),
    mk(4, 6 * DAY),
    mk(5, 5 * DAY),
    mk(6, 4 * DAY),
    mk(7, 3 * DAY),
  ];
  const justWritten = mk(8, 0);
  // Other layers and roots, however old and many, are never pruned with this root's.
  const foreign = [
    mk(0, 99 * DAY, "global", r.global),
    makeRun(b, "20200101-000000-project_context-slim", head("project", `${r.base}/other`)),
  ];
  const out = collectingReporter();
  const pruned = pruneRuns(b, justWritten, "project", r.project, out, now);
  // Kept: the new run and the four newest others (7, 6, 5, 4); 3 is young; 2 and 1 go.
  assert.deepEqual(pruned, [dirs[1], dirs[0]]);
  assert.deepEqual(out.lines, [
    { stream: "stdout", text: `PRUNED: ${dirs[1]}` },
    { stream: "stdout", text: `PRUNED: ${dirs[0]}` },
  ]);
  for (const d of [...dirs.slice(2), justWritten, ...foreign]) assert.ok(existsSync(d), d);
  for (const d of dirs.slice(0, 2)) assert.equal(existsSync(d), false, d);
  // Exactly a day old is no longer young; a run dated in the future (a clock step) is.
  const r2 = setup();
  const old = makeRun(
    r2.backups,
    "20260101-000000-project_context-slim",
    head("project", r2.project, { seq: 1, created: ts(now - DAY) }),
  );
  const future = makeRun(
    r2.backups,
    "20260102-000000-project_context-slim",
    head("project", r2.project, { seq: 2, created: ts(now + 9 * DAY) }),
  );
  assert.deepEqual(
    pruneRuns(r2.backups, "/elsewhere", "project", r2.project, collectingReporter(), now),
    [],
  );
  for (let i = 3; i <= 6; i++) {
    makeRun(
      r2.backups,
      `2026010${i}-000000-project_context-slim`,
      head("project", r2.project, { seq: i, created: ts(now - 2 * DAY) }),
    );
  }
  assert.deepEqual(
    pruneRuns(r2.backups, "/elsewhere", "project", r2.project, collectingReporter(), now),
    [old],
  );
  assert.ok(existsSync(future));
});

Deno.test("pruneRuns: a new run outside B still counts, so four stay in B; legacy runs are dated by their name", () => {
  const r = setup();
  const now = new Date(2026, 9, 12, 12, 0, 0).getTime();
  // No creation record: the name's local-time stamp dates them (all older than a day but one).
  const legacy = [
    "20261001-000000",
    "20261002-000000",
    "20261003-000000",
    "20261004-000000",
    "20261005-000000",
    "20261012-000000",
  ].map((s) => makeRun(r.backups, `${s}-project_context-slim`, head("project", r.project)));
  const pruned = pruneRuns(
    r.backups,
    `${r.base}/outside`,
    "project",
    r.project,
    collectingReporter(),
    now,
  );
  // Kept: the four newest in B (12th young anyway, 5th, 4th, 3rd); 2nd and 1st go.
  assert.deepEqual(pruned, [legacy[1], legacy[0]]);
  assert.deepEqual(
    readdirSync(r.backups).sort(),
    legacy.slice(2).map((d) => d.slice(r.backups.length + 1)),
  );
});

Deno.test("pruneRuns removes incomplete runs of any root once their directory is a day old, never following links", () => {
  const r = setup();
  const now = Date.now();
  const staleDir = makeRun(r.backups, "20260101-000000-project_context-slim");
  const outside = `${r.base}/outside`;
  mkdirSync(outside);
  writeFileSync(`${outside}/keep.md`, "keep\n");
  symlinkSync(outside, `${staleDir}/orig/linked`);
  const fresh = makeRun(r.backups, "20260102-000000-project_context-slim");
  const newRunWithoutManifestYet = makeRun(r.backups, "20260103-000000-project_context-slim");
  const past = new Date(now - DAY - 1000);
  for (const d of [staleDir, newRunWithoutManifestYet]) utimesSync(d, past, past);
  const out = collectingReporter();
  const pruned = pruneRuns(r.backups, newRunWithoutManifestYet, "global", r.global, out, now);
  assert.deepEqual(pruned, [staleDir]);
  assert.equal(existsSync(staleDir), false);
  assert.ok(existsSync(fresh));
  assert.ok(existsSync(newRunWithoutManifestYet), "the run just written is never pruned");
  assert.deepEqual(readdirSync(outside), ["keep.md"], "a link inside a pruned run is not followed");
});

Deno.test({
  name: "pruneRuns tolerates a doomed run that another snapshot's retention removed meanwhile",
  fn() {
    const r = setup();
    const now = Date.UTC(2026, 9, 12);
    const doomed = [1, 2].map((i) =>
      makeRun(
        r.backups,
        `2026010${i}-000000-project_context-slim`,
        head("project", r.project, { seq: i, created: ts(now - 10 * DAY) }),
      )
    );
    for (let i = 3; i <= 6; i++) {
      makeRun(
        r.backups,
        `2026010${i}-000000-project_context-slim`,
        head("project", r.project, { seq: i, created: ts(now - 2 * DAY) }),
      );
    }
    // Kept: the new run (outside B) and seq 6..3. The concurrent retention removes the older
    // doomed run while this one prints its first PRUNED line.
    const out = collectingReporter();
    const reporter = {
      out: (line: Text) => {
        out.out(line);
        if (existsSync(doomed[0])) Deno.removeSync(doomed[0], { recursive: true });
      },
      err: out.err,
    };
    let pruned: string[] = [];
    try {
      pruned = pruneRuns(r.backups, `${r.base}/new`, "project", r.project, reporter, now);
    } catch (e) {
      assert.fail(`pruneRuns threw ${e instanceof PathRefusedError ? e.message : String(e)}`);
    }
    assert.equal(pruned[0], doomed[1]);
    assert.equal(existsSync(doomed[1]), false);
    assert.equal(existsSync(doomed[0]), false);
  },
});
