import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "../../tests/_helpers.ts";
import { applyBudget, importPath, listingBudget, ruleIsConditional } from "./claude_model.ts";
import { loadingModel } from "./claude_model.ts";
import { managedRoot } from "./model/settings.ts";
import { readText, withOneReadEach } from "./model/read.ts";
import { measureFile, scanFile } from "./files.ts";
import { RuleScopeScanner } from "./measure.ts";
import { parseFrontmatter } from "./frontmatter.ts";

Deno.test("importPath: fragments dropped, ~ below home, absolute, relative to the importer", () => {
  assert.equal(importPath("a.md#x", "/r/sub/CLAUDE.md", "/h"), "/r/sub/a.md");
  assert.equal(importPath("../a.md", "/r/sub/CLAUDE.md", "/h"), "/r/a.md");
  assert.equal(importPath("~/x.md", "/r/CLAUDE.md", "/h"), "/h/x.md");
  assert.equal(importPath("~/x.md", "/r/CLAUDE.md", undefined), undefined);
  assert.equal(importPath("/etc/x.md", "/r/CLAUDE.md", "/h"), "/etc/x.md");
  assert.equal(importPath("/", "/r/CLAUDE.md", "/h"), undefined);
  for (const t of ["", "#tag", "@scoped/pkg", "(x)"]) {
    assert.equal(importPath(t, "/r/CLAUDE.md", "/h"), undefined, t);
  }
});

Deno.test("ruleIsConditional: only exactly one ** glob is unconditional", () => {
  assert.equal(ruleIsConditional(undefined), false);
  assert.equal(ruleIsConditional("name: x"), false);
  assert.equal(ruleIsConditional('paths: "**"'), false);
  assert.equal(ruleIsConditional('paths:\n  - "**"'), false);
  assert.equal(ruleIsConditional('paths: ["**", "src/**"]'), true);
  assert.equal(ruleIsConditional('paths: "**/*"'), true);
  assert.equal(ruleIsConditional("paths: src/**"), true);
});

Deno.test("listingBudget: 30,000 units unless SLASH_COMMAND_TOOL_CHAR_BUDGET is a positive whole number", () => {
  assert.equal(listingBudget(undefined), 30_000);
  assert.equal(listingBudget("7800"), 7800);
  for (const bad of ["", "0", "-5", "1e3", "x"]) assert.equal(listingBudget(bad), 30_000, bad);
  applyBudget([], 1); // nothing to cut
});

Deno.test("loadingModel: imports as their own sources, each once, 4 hops; AGENTS.md only without CLAUDE.md", () => {
  const root = makeTempDir("ctxkit-model-");
  writeTree(root, {
    "p/CLAUDE.md": "---\nx: 1\n---\n@a.md @a.md\n",
    "p/a.md": "a\n@b.md\n",
    "p/b.md": "b\n@c.md\n",
    "p/c.md": "c\n@d.md\n",
    "p/d.md": "d\n@e.md\n",
    "p/e.md": "e\n",
    "p/AGENTS.md": "not loaded\n",
  });
  const model = loadingModel({
    project: `${root}/p`,
    global: `${root}/g`,
    includeGlobal: false,
    home: undefined,
    pluginDirs: [],
  });
  const files = model.sources.filter((s) => s.kind === "file");
  assert.deepEqual(
    files.map((s) => [s.path.slice(root.length), s.loaded, s.importedBy?.slice(root.length)]),
    [
      ["/p/CLAUDE.md", 11, undefined],
      ["/p/a.md", 7, "/p/CLAUDE.md"],
      ["/p/b.md", 7, "/p/a.md"],
      ["/p/c.md", 7, "/p/b.md"],
      ["/p/d.md", 7, "/p/c.md"],
    ],
  );
  assert.deepEqual([...files[4].limits], ["import-depth-exceeded"]);
  assert.equal(model.agentsMdLoaded, false);
});

// The managed policy folder per platform, as Claude Code 2.1.332's own code picks it
// (references/context-scan.md#managed-policy; only Linux's is observed by the differential suite).
Deno.test("managedRoot: /etc/claude-code on Linux, Application Support on macOS, Program Files on Windows", () => {
  assert.equal(managedRoot("linux"), "/etc/claude-code");
  assert.equal(managedRoot("darwin"), "/Library/Application Support/ClaudeCode");
  assert.equal(managedRoot("windows"), "C:\\Program Files\\ClaudeCode");
});

// One --loaded run models start-up and every tier from one read of each file
// (references/context-scan.md#performance): a second read inside the run is the first one.
Deno.test("withOneReadEach: a path is read once inside a run, afresh outside it", () => {
  const base = makeTempDir("ctxkit-one-read-");
  const path = `${base}/SKILL.md`;
  Deno.writeTextFileSync(path, "first\n");
  const inside = withOneReadEach(() => {
    const a = readText(path);
    Deno.writeTextFileSync(path, "second, longer\n");
    return [a, readText(path)];
  });
  assert.deepEqual(inside, [{ kind: "text", text: "first\n", size: 6 }, {
    kind: "text",
    text: "first\n",
    size: 6,
  }]);
  assert.deepEqual(readText(path), { kind: "text", text: "second, longer\n", size: 15 });
});

// The inventory's measurement shares its read with the model inside a run
// (references/context-scan.md#performance): a file the inventory opened is not opened again, and
// both see the one version it read.
Deno.test("withOneReadEach: the inventory's shared measurement is the model's read", () => {
  const base = makeTempDir("ctxkit-one-read-");
  const skill = `${base}/SKILL.md`;
  const rule = `${base}/rule.md`;
  const other = `${base}/ref.md`;
  Deno.writeTextFileSync(skill, "---\ndescription: a\n---\nbody\n");
  Deno.writeTextFileSync(rule, "---\npaths: src/**\n---\nrule\n");
  Deno.writeTextFileSync(other, "first\n");
  const seen = withOneReadEach(() => {
    const measured = measureFile(skill, true);
    const scanned = scanFile(rule, new RuleScopeScanner(), undefined, true);
    const unshared = measureFile(other);
    for (const p of [skill, rule, other]) Deno.writeTextFileSync(p, "changed\n");
    return { measured, scanned, unshared, texts: [skill, rule, other].map(readText) };
  });
  assert.deepEqual(seen.measured, { ok: true, size: 28 });
  assert.deepEqual(seen.scanned, { ok: true, size: 27, result: true });
  assert.deepEqual(seen.unshared, { ok: true, size: 6 });
  assert.deepEqual(seen.texts, [
    { kind: "text", text: "---\ndescription: a\n---\nbody\n", size: 28 },
    { kind: "text", text: "---\npaths: src/**\n---\nrule\n", size: 27 },
    // Measured without `share`: read by the model itself.
    { kind: "text", text: "changed\n", size: 8 },
  ]);
  // Outside a run, nothing is kept.
  Deno.writeTextFileSync(skill, "again\n");
  assert.deepEqual(measureFile(skill, true), { ok: true, size: 6 });
  Deno.writeTextFileSync(skill, "again, longer\n");
  assert.deepEqual(readText(skill), { kind: "text", text: "again, longer\n", size: 14 });
});

Deno.test("parseFrontmatter: inside a run, every caller reads one parse of a text", () => {
  const [a, b] = withOneReadEach(() => [
    parseFrontmatter("name: x\ntools: [A, B]\n"),
    parseFrontmatter("name: x\ntools: [A, B]\n"),
  ]);
  assert.equal(a, b);
  assert.deepEqual([...b], [["name", "x"], ["tools", ["A", "B"]]]);
  // Outside a run, each call parses.
  assert.notEqual(parseFrontmatter("name: x"), parseFrontmatter("name: x"));
  // The two splits' spellings of one frontmatter (a final newline apart) are one parse, but a kept
  // block's blank lines are not lost to it.
  const spellings = ["d: |+\n  x", "d: |+\n  x\n", "d: |\n  x", "d: |\n  x\n"];
  const kept = withOneReadEach(() => spellings.map((y) => parseFrontmatter(y).get("d")));
  assert.deepEqual(kept, ["x\n", "x\n\n", "x\n", "x\n"]);
});
