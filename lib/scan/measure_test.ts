import assert from "node:assert/strict";
import fc from "fast-check";
import {
  descriptionBytes,
  DescriptionScanner,
  hookEstimate,
  HookScanner,
  isPathScopedRule,
  RuleScopeScanner,
  scanChunks,
  tokensOf,
} from "./measure.ts";

const enc = (s: string) => new TextEncoder().encode(s);

/**
 * The oracle the properties count lines with: `[start, end)` of each line, as the scanners count
 * them (`\n`-terminated; a trailing newline adds no line; a final unterminated run is a line).
 */
function* lineRanges(bytes: Uint8Array): Generator<[number, number]> {
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    yield [start, end];
    start = end + 1;
  }
}

Deno.test("lineRanges: trailing newline adds no line, final unterminated run counts, \\r is a byte", () => {
  const lines = (s: string) => [...lineRanges(enc(s))].map(([a, b]) => s.slice(a, b));
  assert.deepEqual(lines(""), []);
  assert.deepEqual(lines("a\n"), ["a"]);
  assert.deepEqual(lines("a\n\nb"), ["a", "", "b"]);
  assert.deepEqual(lines("a\r\n"), ["a\r"]);
});

Deno.test("tokensOf floors bytes/4", () => {
  assert.deepEqual([0, 3, 4, 18, 99].map(tokensOf), [0, 0, 1, 4, 24]);
});

Deno.test("isPathScopedRule: rule-scoping cases", () => {
  const cases: [string, boolean][] = [
    ["---\npaths: x\n---\n", true],
    ["---\npaths:\n---\n", true],
    ["---\r\npaths: x\r\n---\r\n", true],
    ["--- \t\npaths: x\n", true],
    ["---\nname: a\n---\npaths: x\n", false],
    ["---\n  paths: x\n---\n", false],
    ["---\nPaths: x\n---\n", false],
    ["---\npathsx: x\n---\n", false],
    ["\n---\npaths: x\n---\n", false],
    ["----\npaths: x\n", false],
    ["paths: x\n", false],
    ["", false],
    ["---", false],
    ["---\x0b\x0c\npaths:", true],
  ];
  for (const [text, want] of cases) {
    assert.equal(isPathScopedRule(enc(text)), want, JSON.stringify(text));
  }
});

Deno.test("descriptionBytes: inline, block and edge cases", () => {
  const cases: [string, number][] = [
    ['---\ndescription: "Small helper"\n---\n', 15],
    ["---\ndescription: |\n  Reviews diffs.\n  Flags risk.\n\nmodel: opus\n---\n", 32],
    ["---\r\ndescription: ab\r\n---\r\n", 4],
    ["---\ndescription: >-\n\tTabbed\n   spaced  \n\n\nname: x\n", 22],
    ["---\ndescription: |\n  one\n---\n  two\n", 6],
    ["---\nname: a\n---\ndescription: after\n", 0],
    ["description: x", 2],
    ["---\ndescription:\n", 1],
    ["---\ndescription: a\ndescription: bbbb\n", 2],
    ["---\ndescription: |+\n", 0],
    ["---\ndescription: | text\n x\n", 3],
    ["---\nDescription: x\n", 0],
    ["---\ndescription: Привет\n", 13],
  ];
  for (const [text, want] of cases) {
    assert.equal(descriptionBytes(enc(text)), want, JSON.stringify(text));
  }
});

Deno.test("hookEstimate: the reference example and non-matching lines", () => {
  const cases: [string, number][] = [
    ['export const REMINDER_TEXT = "Run tests";\nconst X = 1;\nconst MAX_TRIES = 3;\n', 14],
    ["const MAX = 3;\n", 2],
    ["const MAX = 3;\r\n", 4],
    ["const AB = ;\n", 1],
    ['const AB = "a"; // c\n', 10],
    ["const X = 1;\n", 0],
    ["const A_B: string = 'x';\n", 0],
    ["const AB='x';\n", 0],
    ["let AB = 'x';\n", 0],
    ["export  const AB = 'x';\n", 0],
    ["  const AB = 'x';\n", 0],
    ["const AB = \n", 0],
    ["const A1_ = x", 2],
    ["const aB = x\n", 0],
    ["const AB = x = y;\n", 6],
  ];
  for (const [text, want] of cases) {
    assert.equal(hookEstimate(enc(text)), want, JSON.stringify(text));
  }
});

Deno.test("measurements never throw and stay within the file size (property)", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
      const lineCount = [...lineRanges(bytes)].length;
      assert.ok(descriptionBytes(bytes) <= bytes.length + lineCount);
      assert.ok(hookEstimate(bytes) <= bytes.length + lineCount);
      assert.equal(typeof isPathScopedRule(bytes), "boolean");
    }),
  );
});

Deno.test("line scanners: a line split across chunks measures as in one piece", () => {
  const agent = enc(
    "---\nname: r\ndescription: |\n  Reviews diffs.\n  Flags risk.\n\nmodel: opus\n---\n",
  );
  const hook = enc(
    'export const REMINDER_TEXT = "Run tests";\nconst X = 1;\nconst MAX_TRIES = 3;\n',
  );
  for (const sizes of [[1], [2], [3, 1], [5, 7, 2], [1 << 20]]) {
    assert.equal(scanChunks(new DescriptionScanner(), agent, sizes), 32, `${sizes}`);
    assert.equal(scanChunks(new HookScanner(), hook, sizes), 14, `${sizes}`);
    assert.equal(scanChunks(new RuleScopeScanner(), enc("---\r\npa\nx\npaths: y"), sizes), true);
    assert.equal(scanChunks(new RuleScopeScanner(), enc("---\n---\npaths: y\n"), sizes), false);
  }
  // settled early: the first fence-less line ends rule scoping, an inline value the description
  const rule = new RuleScopeScanner();
  assert.equal(rule.push(enc("# title\n")), true);
  const desc = new DescriptionScanner();
  assert.equal(desc.push(enc("description: ab")), false);
  assert.equal(desc.push(enc("c\nmore")), true);
  assert.equal(desc.finish(), 4);
});

Deno.test("line scanners: any chunking gives the one-chunk result (property)", () => {
  const alphabet = fc.constantFrom(
    "-",
    "\n",
    " ",
    "\t",
    "\r",
    "|",
    ">",
    ";",
    "A",
    "_",
    "x",
    "---\n",
    "paths:",
    "description:",
    "export const AB = ",
    "const X_Y = ",
  );
  fc.assert(
    fc.property(
      fc.array(alphabet, { maxLength: 40 }),
      fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
      (parts, sizes) => {
        const bytes = enc(parts.join(""));
        assert.equal(scanChunks(new RuleScopeScanner(), bytes, sizes), isPathScopedRule(bytes));
        assert.equal(scanChunks(new DescriptionScanner(), bytes, sizes), descriptionBytes(bytes));
        assert.equal(scanChunks(new HookScanner(), bytes, sizes), hookEstimate(bytes));
      },
    ),
  );
});
