import assert from "node:assert/strict";
import { memoryIndexText, shownText } from "./claude_text.ts";
import { parseFrontmatter, splitFrontmatter } from "./frontmatter.ts";

Deno.test("splitFrontmatter: a closed fence pair only", () => {
  assert.deepEqual(splitFrontmatter("---\na: 1\n---\nbody\n"), { yaml: "a: 1", body: "body\n" });
  assert.deepEqual(splitFrontmatter("---\n---\nbody"), { yaml: "", body: "body" });
  assert.deepEqual(splitFrontmatter("---\nnever closed\n"), {
    yaml: undefined,
    body: "---\nnever closed\n",
  });
  assert.deepEqual(splitFrontmatter("text\n---\n"), { yaml: undefined, body: "text\n---\n" });
});

Deno.test("shownText: block comments hidden with their line's rest and following newlines; inline, code and HTML-block comments kept", () => {
  const cases: [string, string][] = [
    ["# P\n<!-- block -->\n<!-- c --> after\ntext\n", "# P\n after\ntext"],
    ["para\n<!-- interrupts -->\nnext\n", "para\nnext"],
    ["a\n\n<!-- x -->\n\n\nb\n", "a\n\nb"],
    ["<!-- c1 --> mid <!-- c2 -->\n", "mid"],
    ["keep <!-- inline --> this\n", "keep <!-- inline --> this"],
    ["```\n<!-- fenced -->\n```\n", "```\n<!-- fenced -->\n```"],
    ["<details>\n<!-- in html -->\n</details>\n", "<details>\n<!-- in html -->\n</details>"],
    ["x\n\n<!-- never closed\nrest\n", "x\n\n<!-- never closed\nrest"],
    ["\uFEFF---\nfm: 1\n---\n  body  \r\n\n", "body"],
  ];
  for (const [input, text] of cases) assert.equal(shownText(input).text, text, input);
  const flags = shownText("---\na: 1\n---\n<!-- c -->\nx\n");
  assert.deepEqual([flags.frontmatterStripped, flags.commentsHidden], [true, true]);
});

Deno.test("shownText: imports outside code spans, fences, indented code and HTML blocks", () => {
  const text =
    "see @a.md `@span.md` ``@b `` @c.md\n\n```\n@fence.md\n```\n\n    @indented.md\n\n<div>\n@html.md\n</div>\n\nme@host @d\\ e.md\n";
  assert.deepEqual(shownText(text).imports, ["a.md", "c.md", "d e.md"]);
  // An unmatched backtick run is literal text; a longer run does not close a shorter one.
  assert.deepEqual(shownText("` @x.md ``` @y.md\n").imports, ["x.md", "y.md"]);
});

Deno.test("shownText: linear on adversarial backtick runs and comment openers", () => {
  // Runs of lengths 1..1500 never closed (about 1.1 M characters): one pass, not one per run.
  const runs = Array.from({ length: 1500 }, (_, i) => "`".repeat(i + 1)).join(" @x ");
  assert.equal(shownText(runs).imports.length, 1499);
  const openers = "<!--".repeat(200_000);
  assert.equal(shownText(openers).text, openers); // never closed: kept
});

Deno.test("memoryIndexText: 200 lines, then whole lines within 25,000 units, then the warning", () => {
  const notes = Array.from({ length: 300 }, (_, i) => `- note ${i}`).join("\n");
  const cut = memoryIndexText(notes);
  assert.equal(cut.truncated, true);
  assert.ok(cut.text.startsWith("- note 0\n"));
  assert.ok(
    cut.text.endsWith(
      '- note 199\n\n> WARNING: MEMORY.md is 300 lines (limit: 200). Only part of it was loaded: 100 of 300 lines were cut off, starting at line 201 ("- note 200"). Keep index entries to one line under ~200 chars; move detail into topic files.',
    ),
  );
  const wide = Array.from({ length: 50 }, (_, i) => `${i} ${"é".repeat(700)}`).join("\n");
  assert.ok(
    memoryIndexText(wide).text.includes(
      "MEMORY.md is 34.4KB (limit: 24.4KB) — index entries are too long. Only part of it was loaded: 15 of 50 lines were cut off, starting at line 36",
    ),
  );
  const one = memoryIndexText(`${"x".repeat(30000)}\nsecond`);
  assert.ok(one.text.startsWith(`${"x".repeat(25000)}\n\n> WARNING: MEMORY.md is 29.3KB`));
  assert.ok(one.text.includes("everything after the first 25000 characters of line 1 was cut off"));
  assert.deepEqual(memoryIndexText("short"), { text: "short", truncated: false });
});

Deno.test("parseFrontmatter: scalars, quotes, blocks, lists", () => {
  const fields = parseFrontmatter(
    [
      "name: a",
      'quoted: "x: y"',
      "single: 'it''s'",
      "plain: one",
      "  two",
      "lit: |",
      "  l1",
      "  l2",
      "fold: >",
      "  f1",
      "  f2",
      "flow: [Read, 'Grep']",
      "block:",
      "  - one",
      '  - "two"',
      "empty:",
      "commented: kept # a comment",
      "hash: C# stays",
      "nothing: ~",
      "name: the last one wins",
    ].join("\n"),
  );
  // Duplicate keys: the last wins, as Claude Code's YAML reader (observed: yaml-duplicate-keys).
  assert.deepEqual(Object.fromEntries(fields), {
    name: "the last one wins",
    quoted: "x: y",
    single: "it's",
    plain: "one two",
    lit: "l1\nl2\n",
    fold: "f1 f2\n",
    flow: ["Read", "Grep"],
    block: ["one", "two"],
    empty: "",
    commented: "kept",
    hash: "C# stays",
    nothing: undefined,
  });
  // A block whose every line is indented alike is read dedented; `|+` keeps its blank lines (the
  // lines between the fences: here one blank line before the closing fence).
  assert.deepEqual(
    Object.fromEntries(parseFrontmatter("  paths: src/**\n  keep: |+\n    k\n")),
    { paths: "src/**", keep: "k\n\n" },
  );
});

Deno.test("parseFrontmatter: plain fields and blocks read alike, whichever way they are read", () => {
  // All `key: value` lines and indented `|`/`>` blocks (read line by line), and the same lines
  // where one other line sends the block through the whole reader: every shared key has one value.
  const lines = [
    "lit: |",
    "  Agent does things.",
    "    deeper: kept  ",
    "  More.",
    "fold: >",
    "   one",
    "   two  three",
    "name: a-b_c",
    "description: Does x: then y, z.",
    "tildes: ~",
    "nulls: null",
    "nully: null-ish",
    "dash: - not a list",
    "spaced:   wide  gap\tinside",
    "unicode: caf\u00e9 \u4e2d",
    "name: last wins",
  ];
  const simple = Object.fromEntries(parseFrontmatter(lines.join("\n")));
  const whole = Object.fromEntries(parseFrontmatter([...lines, "quoted: 'q'"].join("\n")));
  assert.deepEqual(simple, {
    lit: "Agent does things.\n  deeper: kept  \nMore.\n",
    fold: "one two  three\n",
    name: "last wins",
    description: "Does x: then y, z.",
    tildes: undefined,
    nulls: undefined,
    nully: "null-ish",
    dash: "- not a list",
    spaced: "wide  gap\tinside",
    unicode: "caf\u00e9 \u4e2d",
  });
  assert.deepEqual(whole, { ...simple, quoted: "q" });
  // Lines a plain reading would misread go through the whole reader: trailing blanks (including a
  // no-break space), CRs, comments, continuation lines, blank lines.
  const tricky: [string, Record<string, string | undefined>][] = [
    ["a: x  ", { a: "x" }],
    ["a: x\u00a0", { a: "x" }],
    ["a: x\r\nb: y\r", { a: "x", b: "y" }],
    ["a: x # note", { a: "x" }],
    ["a: x\n  more", { a: "x more" }],
    ["a: x\n\nb: y", { a: "x", b: "y" }],
    // A no-break space is no separator: no key at all.
    ["a:\u00a0x", {}],
    // Blocks a plain reading would misread: a blank or tab-indented line, a kept or stripped end,
    // no lines at all, a no-break space after the mark.
    ["d: |\n  x\n\n  y\nb: z", { d: "x\n\ny\n", b: "z" }],
    ["d: |\n  x\n  \u00a0\nb: z", { d: "x\n", b: "z" }],
    ["d: >\n\tx\n\ty", { d: "x y\n" }],
    ["d: |-\n  x", { d: "x" }],
    ["d: |\nb: z", { d: "", b: "z" }],
    ["d: |\u00a0\n  x", { d: "x\n" }],
  ];
  for (const [yaml, fields] of tricky) {
    assert.deepEqual(Object.fromEntries(parseFrontmatter(yaml)), fields, JSON.stringify(yaml));
  }
});

Deno.test("parseFrontmatter: a block of 300,000 lines (no argument-count limit)", () => {
  const yaml = `description: |\n${"  x\n".repeat(300_000)}`;
  assert.equal((parseFrontmatter(yaml).get("description") as string).length, 600_000);
});

Deno.test("parseFrontmatter: double-quoted escapes", () => {
  const fields = parseFrontmatter('d: "a\\r\\n\\tb \\"q\\" \\\\ \\x41\\u00e9"');
  assert.equal(fields.get("d"), 'a\r\n\tb "q" \\ Aé');
});
