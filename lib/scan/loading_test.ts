import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "../../tests/_helpers.ts";
import { importTarget, instructionWithImports, memoryIndex, skillListing } from "./loading.ts";
import { SkillListingScanner } from "./markdown.ts";
import { scanBytes } from "./measure.ts";

Deno.test("importTarget: fragments dropped, ~ below home, absolute, relative to the importer", () => {
  assert.equal(importTarget("a.md#x", "/r/sub/CLAUDE.md", "/h"), "/r/sub/a.md");
  assert.equal(importTarget("~/x.md", "/r/CLAUDE.md", "/h"), "/h/x.md");
  assert.equal(importTarget("~/x.md", "/r/CLAUDE.md", undefined), undefined);
  assert.equal(importTarget("/etc/x.md", "/r/CLAUDE.md", "/h"), "/etc/x.md");
  assert.equal(importTarget("/", "/r/CLAUDE.md", "/h"), undefined);
  for (const t of ["", "#tag", "@scoped/pkg", "(x)"]) {
    assert.equal(importTarget(t, "/r/CLAUDE.md", "/h"), undefined, t);
  }
});

Deno.test("instructionWithImports: breadth first, each file once, 5 hops, unreadable and missing imports", () => {
  const root = makeTempDir("ctxkit-imports-");
  writeTree(root, {
    "CLAUDE.md": "@a.md @missing.md @dir\n",
    "a.md": "@CLAUDE.md @b.md\n", // a cycle back to the importer
    "b.md": "b\n",
  });
  Deno.mkdirSync(`${root}/dir`);
  const fig = instructionWithImports(`${root}/CLAUDE.md`, undefined)!;
  assert.equal(fig.bytes, 23 + 17 + 2);
  assert.deepEqual([...fig.limits], ["imports-included"]);
  assert.equal(instructionWithImports(`${root}/absent.md`, undefined), undefined);
});

Deno.test("memoryIndex and skillListing: the MEMORY.md and skill listing rules", () => {
  const root = makeTempDir("ctxkit-memory-");
  writeTree(root, { "MEMORY.md": "x\n".repeat(250) });
  const memory = memoryIndex(`${root}/MEMORY.md`)!;
  assert.equal(memory.bytes, 400);
  assert.deepEqual([...memory.limits], ["memory-truncated"]);
  const read = (text: string) =>
    scanBytes(new SkillListingScanner(1536), new TextEncoder().encode(text));
  // description + "\n" + when_to_use, capped together at 1,536 characters; the name on top
  const fields = read(
    `---\ndescription: ${"d".repeat(1000)}\nwhen_to_use: ${"w".repeat(1000)}\n---\n`,
  );
  const listing = skillListing("/r/skills/my-skill/SKILL.md", fields);
  assert.equal(listing.bytes, 8 + 2001); // the directory name stands in for `name`
  assert.equal(listing.loaded.bytes, 8 + 1536);
  assert.deepEqual([...listing.loaded.limits], ["description-capped"]);
  const short = skillListing("/r/SKILL.md", read("---\nname: n\ndescription: d\n---\n"));
  assert.deepEqual([short.bytes, short.loaded.bytes, [...short.loaded.limits]], [2, 2, []]);
});
