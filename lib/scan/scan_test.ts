import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { scanProject, scanRoots } from "./scan.ts";
import { makeTempDir, writeTree } from "../../tests/_helpers.ts";

interface Fixture {
  project: string;
  global: string;
}

/** A project `my_app` (two memory slugs) and a global root with its own CLAUDE.md. */
function fixture(): Fixture {
  const base = makeTempDir("ctxkit-scanlib-");
  const project = `${base}/my_app`;
  const global = `${base}/g`;
  const original = project.replaceAll("/", "-");
  const claude = project.replace(/[^A-Za-z0-9]/g, "-");
  writeTree(base, {
    "my_app/CLAUDE.md": "project\n",
    "my_app/.claude/rules/empty.md": "",
    "my_app/agents/a.md": "---\ndescription: x\n---\n",
    [`g/projects/${original}/memory/MEMORY.md`]: "index\n",
    [`g/projects/${claude}/memory/note.md`]: "note\n",
    "g/CLAUDE.md": "global\n",
  });
  return { project, global };
}

function brief(paths: { path: string; root: string; tier: string; kind: string }[], f: Fixture) {
  return paths.map((r) =>
    `${r.root} ${r.tier} ${r.kind} ${
      r.path.replace(f.project, "<R>").replace(f.global, "<G>").replace(/projects\/[^/]+/, "<slug>")
    }`
  );
}

Deno.test("scanRoots: project, then per-project memory under both slugs, then the global root", () => {
  const f = fixture();
  const result = scanRoots(f, { global: true });
  assert.equal(result.complete, true);
  assert.deepEqual(result.warnings, []);
  assert.deepEqual(result.document.roots, { project: f.project, global: f.global });
  // the empty rule is dropped; the global root's own projects/ is pruned from its root walk
  assert.deepEqual(brief(result.document.files, f), [
    "project always-on file <R>/CLAUDE.md",
    "project per-spawn file <R>/agents/a.md",
    "project always-on field:description <R>/agents/a.md",
    "project always-on file <G>/<slug>/memory/MEMORY.md",
    "project always-on file <G>/<slug>/memory/note.md",
    "global always-on file <G>/CLAUDE.md",
  ]);
  assert.deepEqual(result.document.totals.grand, { files: 6, bytes: 51, tokens: 10 });
});

Deno.test("scanRoots: without global the root is null and not scanned; the tier filter applies", () => {
  const f = fixture();
  const project = scanRoots(f);
  assert.equal(project.document.roots.global, null);
  assert.ok(project.document.files.every((r) => r.root === "project"));
  assert.equal(project.document.files.length, 5);
  const spawn = scanRoots(f, { tier: "per-spawn" });
  assert.equal(spawn.document.tier_filter, "per-spawn");
  assert.deepEqual(brief(spawn.document.files, f), ["project per-spawn file <R>/agents/a.md"]);
  assert.deepEqual(spawn.document.totals["always-on"], { files: 0, bytes: 0, tokens: 0 });
});

Deno.test("scanRoots: an issue makes the inventory incomplete but keeps every row", () => {
  const f = fixture();
  Deno.symlinkSync(`${f.project}/CLAUDE.md`, `${f.project}/rules`);
  const result = scanRoots(f, { tier: "per-spawn" });
  assert.equal(result.complete, false);
  // issues of every tier are reported under a tier filter
  assert.deepEqual(result.document.scan_issues.map((i) => [i.path, i.detail]), [
    [`${f.project}/rules`, "Instruction directory link does not resolve to a directory"],
  ]);
  assert.equal(result.document.files.length, 1);
});

Deno.test("scanProject: a root that is not a directory is a UsageError naming the value as given", () => {
  const f = fixture();
  for (const root of [`${f.project}/missing`, `${f.project}/CLAUDE.md`]) {
    assert.throws(
      () => scanProject({ root }),
      (e: unknown) => e instanceof UsageError && e.message === `not a directory: ${root}`,
    );
  }
});
