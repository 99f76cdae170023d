import assert from "node:assert/strict";
import { symlinkSync } from "node:fs";

import { UsageError } from "../errors.ts";
import { SnapshotMissingError } from "./errors.ts";
import { collectingReporter } from "./report.ts";
import { readRuns } from "./runs.ts";
import {
  chooseRun,
  chooseRunGroups,
  describeRun,
  impliedLayer,
  looksLikeSelector,
  namesManifestFile,
  noBackupsFor,
  resolveSpec,
} from "./selection.ts";
import { guardRootsFixture, makeRunDir } from "./_test_utils.ts";

const HASH = "0".repeat(64);

const setup = () => guardRootsFixture("ctxkit-select-");

const makeRun = makeRunDir;

/** A complete manifest of `layer`/`root` with creation number `seq`, listing `files`. */
function head(
  layer: "project" | "global",
  root: string,
  seq: number,
  extra: Record<string, unknown> = {},
  files = ["CLAUDE.md"],
) {
  return { layer, root, seq, files: files.map((path) => ({ path, sha256: HASH })), ...extra };
}

/** The error a `fn` throws, checked to be a `SnapshotMissingError` "no backups" with `message`. */
function noBackups(fn: () => unknown, backups: string, message: string): void {
  snapshotMissing(fn, "no-backups", backups, message);
}

/** `fn` fails with a {@linkcode SnapshotMissingError} of `problem` about `backups`, exit 2. */
function snapshotMissing(
  fn: () => unknown,
  problem: SnapshotMissingError["problem"],
  backups: string,
  message: string,
): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof SnapshotMissingError, String(e));
    assert.equal(e.problem, problem);
    assert.equal(e.runDir, backups);
    assert.equal(e.exitCode, 2);
    assert.equal(e.message, message);
    return true;
  });
}

/** `fn` fails as `no run matches <spec> under <backups>`. */
function noMatch(fn: () => unknown, backups: string, spec: string): void {
  snapshotMissing(fn, "no-match", backups, `no run matches ${spec} under ${backups}`);
}

Deno.test("impliedLayer: global only when every file lies under G and not under P, else project", () => {
  const r = { project: "/h/.claude/proj", global: "/h/.claude", backups: "/h/.claude/backups" };
  assert.equal(impliedLayer([], r), "project");
  assert.equal(impliedLayer(["/h/.claude/CLAUDE.md", "/h/.claude/rules/a.md"], r), "global");
  // A project nested in the global root: its files are the project's.
  assert.equal(impliedLayer(["/h/.claude/proj/CLAUDE.md"], r), "project");
  // One file outside G makes the whole set project.
  assert.equal(impliedLayer(["/h/.claude/CLAUDE.md", "/elsewhere/CLAUDE.md"], r), "project");
  // Lexically: `..` is resolved before the test, and the root itself is not below itself.
  assert.equal(impliedLayer(["/h/.claude/x/../CLAUDE.md"], r), "global");
  assert.equal(impliedLayer(["/h/.claude/../CLAUDE.md"], r), "project");
  assert.equal(impliedLayer(["/h/.claude"], r), "project");
});

Deno.test("noBackupsFor names the layer root only when B holds some complete run", () => {
  const r = setup();
  const scope = { layer: "global" as const, root: r.global };
  makeRun(r.backups, "20260101-000000-project_context-slim"); // incomplete: not a backup
  let e = noBackupsFor(r.backups, readRuns(r.backups), scope);
  assert.equal(e.message, `no backups under ${r.backups}`);
  assert.equal(e.problem, "no-backups");
  makeRun(r.backups, "20260101-000001-project_context-slim", head("project", r.project, 1));
  e = noBackupsFor(r.backups, readRuns(r.backups), scope);
  assert.equal(e.message, `no backups under ${r.backups} for the global root ${r.global}`);
  assert.equal(
    noBackupsFor(r.backups, readRuns(r.backups)).message,
    `no backups under ${r.backups}`,
  );
});

Deno.test("resolveSpec: last and a <ts> prefix pick the newest run of the layer root only", () => {
  const r = setup();
  const b = r.backups;
  const other = `${r.base}/other`;
  const p1 = makeRun(b, "20261012-140307-project_context-slim", head("project", r.project, 1));
  const p2 = makeRun(b, "20261012-150000-project_context-slim", head("project", r.project, 2));
  const g = makeRun(
    b,
    "20261012-160000-global_context-slim",
    head("global", r.global, 3, { project_root: r.project }),
  );
  // Another project's run is newer and matches the same prefixes: never picked.
  makeRun(b, "20261012-170000-project_context-slim", head("project", other, 4));
  makeRun(b, "20261012-180000-project_context-slim"); // incomplete: invisible
  const runs = readRuns(b);
  assert.equal(resolveSpec(runs, r, "last", "project"), p2);
  assert.equal(resolveSpec(runs, r, "last", "global"), g);
  assert.equal(resolveSpec(runs, r, "2026", "project"), p2);
  assert.equal(resolveSpec(runs, r, "20261012-14", "project"), p1);
  assert.equal(resolveSpec(runs, r, "2026", "global"), g);
  // A run name or an absolute path is taken verbatim, existing or not.
  assert.equal(resolveSpec(runs, r, "x_context-slim", "project"), "x_context-slim");
  assert.equal(resolveSpec(runs, r, "/any/dir", "global"), "/any/dir");
  // No match, and nothing under the conventional name: no run matches (not a made-up path).
  noMatch(() => resolveSpec(runs, r, "1999", "project"), b, "1999");
  // ... unless that name is another root's complete run: refused as having no backups.
  noBackups(
    () => resolveSpec(runs, r, "20261012-170000", "project"),
    b,
    `no backups under ${b} for the project root ${r.project}`,
  );
  // The incomplete run's conventional name is not refused (it has no manifest to act on).
  assert.equal(
    resolveSpec(runs, r, "20261012-180000", "project"),
    `${b}/20261012-180000-project_context-slim`,
  );
});

Deno.test("resolveSpec: last with no run of the layer root says which root has none", () => {
  const r = setup();
  noBackups(
    () => resolveSpec([], r, "last", "project"),
    r.backups,
    `no backups under ${r.backups}`,
  );
  makeRun(r.backups, "20260101-000000-project_context-slim", head("project", "/other", 1));
  noBackups(
    () => resolveSpec(readRuns(r.backups), r, "last", "global"),
    r.backups,
    `no backups under ${r.backups} for the global root ${r.global}`,
  );
});

Deno.test("describeRun: the manifest decides layer and root; a contradicting flag is a usage error", () => {
  const r = setup();
  const g = makeRun(r.backups, "20260101-000000-global_context-slim", head("global", "/g/", 1));
  assert.deepEqual(describeRun(g, undefined, r), {
    runDir: g,
    layer: "global",
    root: "/g",
    rootName: "global",
  });
  assert.deepEqual(describeRun(g, "global", r).layer, "global");
  assert.throws(
    () => describeRun(g, "project", r),
    (e: unknown) =>
      e instanceof UsageError && e.exitCode === 2 &&
      e.message === `--project contradicts the run dir ${g}: its manifest is of the global layer`,
  );
  // No manifest: the flag (else project) and its layer root.
  const bare = `${r.base}/bare`;
  assert.deepEqual(describeRun(bare, "global", r), {
    runDir: bare,
    layer: "global",
    root: r.global,
    rootName: "global",
  });
  assert.deepEqual(describeRun(bare, undefined, r).root, r.project);
});

Deno.test("chooseRun: --run-dir as named; else the selector (default last) in the flagged or implied layer", () => {
  const r = setup();
  const b = r.backups;
  const p = makeRun(b, "20260101-000000-project_context-slim", head("project", r.project, 1));
  const g = makeRun(b, "20260101-000001-global_context-slim", head("global", r.global, 2));
  const foreign = makeRun(b, "20260101-000002-project_context-slim", head("project", "/o", 3));
  makeRun(b, "20260101-000003-project_context-slim"); // incomplete
  const out = collectingReporter();
  // Files under G (not under P) imply the global layer.
  assert.equal(chooseRun(r, { files: [`${r.global}/CLAUDE.md`] }, out).runDir, g);
  assert.deepEqual(out.lines, [{
    stream: "stderr",
    text: `⚠️ ignoring 1 incomplete run dir(s) without a valid manifest in ${b}`,
  }]);
  assert.equal(chooseRun(r, { files: [`${r.project}/CLAUDE.md`] }, out).runDir, p);
  assert.deepEqual(chooseRun(r, { layer: "global", files: [] }, out), {
    runDir: g,
    layer: "global",
    root: r.global,
    rootName: "global",
  });
  // A named run is taken as named — any project's — and acts on its own root; no warning line.
  const named = collectingReporter();
  assert.deepEqual(chooseRun(r, { runDir: foreign, selector: "last", files: [] }, named), {
    runDir: foreign,
    layer: "project",
    root: "/o",
    rootName: "project",
  });
  assert.deepEqual(named.lines, []);
  assert.throws(
    () => chooseRun(r, { runDir: g, layer: "project", files: [] }, named),
    UsageError,
  );
});

Deno.test("chooseRunGroups: last is every layer of the newest run; a <ts> takes every run named with it", () => {
  const r = setup();
  const b = r.backups;
  const mk = (name: string, seq: number, layer: "project" | "global") =>
    makeRun(
      b,
      `${name}-${layer}_context-slim`,
      head(layer, layer === "global" ? r.global : r.project, seq, { project_root: r.project }),
    );
  const p1 = mk("20251231-235959", 1, "project");
  const g1 = mk("20260101-000000", 2, "global"); // a second later: still the same run
  const p2 = mk("20260102-000000", 3, "project");
  const g2 = mk("20260102-000001", 4, "global");
  makeRun(b, "20260103-000000-project_context-slim", head("project", "/other", 5));
  const out = collectingReporter();
  assert.deepEqual(chooseRunGroups(r, undefined, out), [p2, g2]);
  assert.deepEqual(chooseRunGroups(r, "last", out), [p2, g2]);
  // `2026` names g1, so the whole first run comes along; newest run first, project first.
  assert.deepEqual(chooseRunGroups(r, "2026", out), [p2, g2, p1, g1]);
  assert.deepEqual(chooseRunGroups(r, "2025", out), [p1, g1]);
  assert.deepEqual(out.lines, []);
  // Only another project's run is named with it: of this project's runs, none matches.
  noMatch(() => chooseRunGroups(r, "20260103", out), b, "20260103");
  const empty = setup();
  noBackups(
    () => chooseRunGroups(empty, undefined, out),
    empty.backups,
    `no backups under ${empty.backups}`,
  );
});

Deno.test("namesManifestFile: a file listed by one of this project's or the global root's runs, present or deleted", () => {
  const r = setup();
  const b = r.backups;
  makeRun(
    b,
    "20260101-000000-project_context-slim",
    head("project", r.project, 1, {}, [
      ".claude/rules/style.md",
      "2026",
    ]),
  );
  makeRun(b, "20260101-000001-global_context-slim", head("global", r.global, 2, {}, ["last"]));
  const other = `${r.base}/other`;
  makeRun(b, "20260101-000002-project_context-slim", head("project", other, 3, {}, ["CLAUDE.md"]));
  // None of these files exists on disk.
  assert.equal(namesManifestFile(`${r.project}/.claude/rules/style.md`, r), true);
  assert.equal(namesManifestFile(`${r.project}/2026`, r), true);
  assert.equal(namesManifestFile(`${r.global}/last`, r), true);
  assert.equal(namesManifestFile(`${r.project}/.claude/rules/other.md`, r), false);
  assert.equal(namesManifestFile(`${r.global}/2026`, r), false, "rel against each run's own root");
  assert.equal(namesManifestFile(`${other}/CLAUDE.md`, r), false, "another project's run");
  assert.equal(namesManifestFile(r.project, r), false);
  // The root through a link is the same root.
  symlinkSync(r.project, `${r.base}/proj-link`);
  assert.equal(
    namesManifestFile(`${r.project}/2026`, { ...r, project: `${r.base}/proj-link` }),
    true,
  );
});

Deno.test("looksLikeSelector: last, a run name, or digits and dashes starting with a digit", () => {
  for (const yes of ["last", "2026", "20261012-140307", "2026-", "x_context-slim", "0"]) {
    assert.equal(looksLikeSelector(yes), true, yes);
  }
  for (const no of ["", "Last", "-1", "2026a", "20261012-140307-project", "CLAUDE.md", "last/"]) {
    assert.equal(looksLikeSelector(no), false, no);
  }
});
