import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";

import { collectingReporter } from "../report.ts";
import { list } from "./list.ts";
import { guardRootsFixture } from "../_test_utils.ts";

const setup = () => guardRootsFixture("ctxkit-list-");

/** A run dir `B/<name>` with `copies` under `orig/` and, unless `undefined`, a manifest. */
function makeRun(
  backups: string,
  name: string,
  copies: string[],
  manifest?: Record<string, unknown>,
): string {
  const dir = `${backups}/${name}`;
  mkdirSync(dir, { recursive: true });
  for (const rel of copies) {
    mkdirSync(`${dir}/orig/${rel.split("/").slice(0, -1).join("/")}`, { recursive: true });
    writeFileSync(`${dir}/orig/${rel}`, "x");
  }
  if (manifest !== undefined) writeFileSync(`${dir}/manifest.json`, JSON.stringify(manifest));
  return dir;
}

const complete = (
  layer: string,
  root: string,
  seq: number,
  extra: Record<string, unknown> = {},
) => ({
  layer,
  root,
  seq,
  files: [{ path: "CLAUDE.md" }],
  ...extra,
});

Deno.test("list: this invocation's runs and every incomplete run, newest first, with recursive copy counts", () => {
  const r = setup();
  const b = r.backups;
  makeRun(
    b,
    "20260101-000000-project_context-slim",
    ["CLAUDE.md", ".claude/rules/a.md"],
    complete("project", r.project, 1),
  );
  makeRun(b, "20260101-000001-global_context-slim", ["CLAUDE.md"], complete("global", r.global, 2));
  makeRun(
    b,
    "20260101-000002-project_context-slim",
    ["CLAUDE.md"],
    complete("project", `${r.base}/other`, 3),
  );
  // The list shows global runs of G whichever project took them.
  makeRun(
    b,
    "20260101-000003-global_context-slim",
    [],
    complete("global", r.global, 4, { project_root: `${r.base}/other` }),
  );
  makeRun(
    b,
    "20260101-000004-global_context-slim",
    ["CLAUDE.md"],
    complete("global", `${r.base}/g2`, 5),
  );
  makeRun(b, "20260101-000005-project_context-slim", ["CLAUDE.md"]); // killed before its manifest
  makeRun(b, "20260101-000006-project_context-slim", [], { layer: "global", files: [] }); // invalid
  makeRun(b, "20260101-000007-project_context-slim", [], { layer: "Project" });
  symlinkSync(
    `${b}/20260101-000000-project_context-slim`,
    `${b}/20260101-000008-project_context-slim`,
  );
  mkdirSync(`${b}/notes`);
  const out = collectingReporter();
  const rows = list(r, out);
  assert.deepEqual(rows, [
    { name: "20260101-000003-global_context-slim", files: 0, layer: "global" },
    { name: "20260101-000001-global_context-slim", files: 1, layer: "global" },
    { name: "20260101-000000-project_context-slim", files: 2, layer: "project" },
    { name: "20260101-000007-project_context-slim", files: 0, layer: "?" },
    { name: "20260101-000006-project_context-slim", files: 0, layer: "global" },
    { name: "20260101-000005-project_context-slim", files: 1, layer: "?" },
  ]);
  assert.deepEqual(out.lines.map((l) => `${l.stream}: ${l.text}`), [
    "stdout: | Backup | Files | Layer |",
    "stdout: |--------|-------|-------|",
    "stdout: | 20260101-000003-global_context-slim | 0 | global |",
    "stdout: | 20260101-000001-global_context-slim | 1 | global |",
    "stdout: | 20260101-000000-project_context-slim | 2 | project |",
    "stdout: | 20260101-000007-project_context-slim | 0 | ? |",
    "stdout: | 20260101-000006-project_context-slim | 0 | global |",
    "stdout: | 20260101-000005-project_context-slim | 1 | ? |",
  ]);
});

Deno.test("list with no backup root prints the header alone", () => {
  const r = setup();
  Deno.removeSync(r.backups);
  const out = collectingReporter();
  assert.deepEqual(list(r, out), []);
  assert.deepEqual(out.lines.map((l) => l.text), [
    "| Backup | Files | Layer |",
    "|--------|-------|-------|",
  ]);
});

Deno.test("list asks for the project root only when there is a run to compare (it may cost a git call)", () => {
  const r = setup();
  let asked = 0;
  const roots = {
    ...r,
    get project(): string {
      asked++;
      return r.project;
    },
  };
  const out = collectingReporter();
  assert.deepEqual(list(roots, out), []);
  assert.equal(asked, 0);
  makeRun(
    r.backups,
    "20261012-140307-project_context-slim",
    ["CLAUDE.md"],
    complete("project", r.project, 1),
  );
  makeRun(
    r.backups,
    "20261012-140308-project_context-slim",
    ["CLAUDE.md"],
    complete("project", r.project, 2),
  );
  assert.equal(list(roots, collectingReporter()).length, 2);
  assert.equal(asked, 1, "asked once for the pass, not once per run");
});
