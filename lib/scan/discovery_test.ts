import assert from "node:assert/strict";
import { Discovery, instructionFiles, memoryFiles, scanRoot } from "./discovery.ts";
import { RuleScopeScanner } from "./measure.ts";
import { makeTempDir, writeTree } from "../../tests/_helpers.ts";

/** Rows as `relative-path tier kind bytes loading`. */
function rows(out: Discovery, base: string): string[] {
  return out.rows.map((r) =>
    `${r.path.slice(base.length + 1)} ${r.tier} ${r.kind} ${r.bytes} ${r.loading}`
  );
}

/** Issues as `relative-path: detail` (paths inside the detail made relative too). */
function issues(out: Discovery, base: string): string[] {
  return out.issues.map((i) =>
    `${i.path.slice(base.length + 1)}: ${i.detail.replaceAll(`${base}/`, "")}`
  );
}

Deno.test("scanRoot: steps in output order, each step sorted, classes of the root walk", () => {
  const root = makeTempDir("ctxkit-discovery-");
  writeTree(root, {
    "CLAUDE.md": "# x\n",
    "AGENTS.md": "agents\n",
    "rules/b.md": "b\n",
    ".claude/rules/a.md": "---\npaths: x\n---\n",
    ".claude/rules/node_modules/skip.md": "pruned\n",
    ".claude/convention/z.txt": "z\n",
    ".claude/convention/.hidden": "h\n",
    ".claude/memory/MEMORY.md": "index\n",
    ".claude/memory/topic.md": "t\n",
    "hooks/h.mjs": "const TEXT = 'abc';\n",
    "hooks/tiny.mjs": "const X = 1;\n",
    "agents/a.md": "---\ndescription: hi\n---\n",
    "skills/s/agents/not-an-agent.md": "n\n",
    "skills/s/SKILL.md": "skill\n",
    "skills/s/references/r.md": "ref\n",
    "build/skills/t/SKILL.md": "pruned\n",
  });
  const out = new Discovery();
  scanRoot(out, "project", root);
  assert.deepEqual(rows(out, root), [
    "CLAUDE.md always-on file 4 startup-instruction",
    "AGENTS.md always-on file 7 client-or-import-dependent",
    ".claude/rules/a.md always-on file 17 path-scoped-rule",
    "rules/b.md always-on file 2 unscoped-rule",
    ".claude/convention/z.txt always-on file 2 import-or-read-required",
    ".claude/memory/MEMORY.md always-on file 6 memory-index-limited",
    ".claude/memory/topic.md always-on file 2 on-demand",
    "hooks/h.mjs always-on hook-payload 6 runtime-dependent",
    "agents/a.md per-spawn file 24 selected-agent",
    "agents/a.md always-on field:description 3 runtime-dependent",
    "skills/s/SKILL.md per-invocation file 6 invoked-skill",
    "skills/s/references/r.md per-invocation file 4 on-demand",
  ]);
  assert.deepEqual(out.issues, []);
  assert.deepEqual(out.warnings, []);
});

Deno.test("scanRoot: a probe that is a link loop is an issue, a dangling link is nothing", () => {
  const root = makeTempDir("ctxkit-discovery-");
  Deno.symlinkSync(`${root}/CLAUDE.md`, `${root}/CLAUDE.md`);
  Deno.symlinkSync(`${root}/missing.md`, `${root}/AGENTS.md`);
  const out = new Discovery();
  scanRoot(out, "global", root);
  assert.deepEqual(out.rows, []);
  assert.deepEqual(issues(out, root), [
    "CLAUDE.md: 'CLAUDE.md': Too many levels of symbolic links",
  ]);
  assert.ok(out.issues.every((i) => i.root === "global" && i.kind === "discovery-incomplete"));
});

Deno.test("scanRoot: a root that is not a directory gives nothing", () => {
  const root = makeTempDir("ctxkit-discovery-");
  Deno.writeTextFileSync(`${root}/file`, "x");
  const out = new Discovery();
  scanRoot(out, "project", `${root}/file`);
  scanRoot(out, "project", `${root}/missing`);
  assert.deepEqual([out.rows, out.issues, out.warnings], [[], [], []]);
});

Deno.test("instructionFiles: a link not resolving to a directory is an issue; a loop is one sorted issue", () => {
  const root = makeTempDir("ctxkit-discovery-");
  writeTree(root, { "file.md": "x\n", "loop/a.md": "a\n" });
  Deno.symlinkSync(`${root}/file.md`, `${root}/rules`);
  Deno.symlinkSync(`${root}/loop`, `${root}/loop/z-up`);
  Deno.symlinkSync(`${root}/loop`, `${root}/loop/b-up`);
  const out = new Discovery();
  assert.deepEqual(instructionFiles(out, "project", `${root}/rules`), []);
  assert.deepEqual(instructionFiles(out, "project", `${root}/absent`), []);
  assert.deepEqual(instructionFiles(out, "project", `${root}/loop`), [`${root}/loop/a.md`]);
  const loop = (name: string) =>
    `File system loop detected; 'loop/${name}' is part of the same file system loop as 'loop'.`;
  assert.deepEqual(issues(out, root), [
    "rules: Instruction directory link does not resolve to a directory",
    `loop: ${loop("b-up")}\n${loop("z-up")}`,
  ]);
});

Deno.test("memoryFiles: a physical, unpruned walk entered even through a link; sorted", () => {
  const root = makeTempDir("ctxkit-discovery-");
  writeTree(root, {
    "real/b.md": "b\n",
    "real/node_modules/a.md": "a\n",
    "real/x.txt": "x\n",
    "other/linked.md": "l\n",
  });
  Deno.symlinkSync(`${root}/real`, `${root}/memory`);
  Deno.symlinkSync(`${root}/other`, `${root}/real/other`);
  const out = new Discovery();
  assert.deepEqual(memoryFiles(out, "project", `${root}/memory`), [
    `${root}/memory/b.md`,
    `${root}/memory/node_modules/a.md`,
  ]);
  assert.deepEqual(memoryFiles(out, "project", `${root}/absent`), []);
  assert.deepEqual(out.issues, []);
});

Deno.test("Discovery.scan: size and streamed result, or an issue with the OS reason", () => {
  const root = makeTempDir("ctxkit-discovery-");
  Deno.writeTextFileSync(`${root}/a.md`, "---\npaths: x\n---\nabc");
  const out = new Discovery();
  assert.deepEqual(out.scan("project", `${root}/a.md`, new RuleScopeScanner()), {
    size: 20,
    result: true,
  });
  assert.equal(out.scan("project", `${root}/gone.md`, new RuleScopeScanner()), undefined);
  assert.deepEqual(issues(out, root), ["gone.md: 'gone.md': No such file or directory"]);
});
