import assert from "node:assert/strict";
import fc from "fast-check";
import { type InstructionOptions, InstructionScanner, LINE_HEAD } from "./markdown.ts";
import { scanBytes, scanChunks } from "./measure.ts";

const enc = (s: string) => new TextEncoder().encode(s);

function shown(text: string, options: InstructionOptions = {}) {
  return scanBytes(new InstructionScanner(options), enc(text));
}

function importsOf(text: string): string[] {
  const found: string[] = [];
  shown(text, { onImport: (p) => found.push(p) });
  return found;
}

Deno.test("InstructionScanner: HTML comments hidden (inline, multi-line, unclosed to EOF), never in code", () => {
  assert.deepEqual(shown("a <!-- x --> b\n"), { bytes: 5, commentsHidden: true, truncated: false });
  assert.deepEqual(shown("a\n<!--\nsecret\n-->\nb\n").bytes, 5); // "a\n" + "\n" + "b\n"
  assert.equal(shown("keep\n<!-- never closed\nlost\n").bytes, 5);
  assert.deepEqual(shown("`<!-- code -->`\n"), {
    bytes: 16,
    commentsHidden: false,
    truncated: false,
  });
  assert.equal(shown("```\n<!-- in a fence -->\n```\n<!-- x -->\n").bytes, 29);
  assert.equal(shown("~~~~\n<!-- x -->\n~~~\nstill code <!-- y -->\n~~~~\n").bytes, 47);
  assert.equal(shown("``a`` <!--x-->").bytes, 6); // a closed span, then a comment
  assert.equal(shown("` <!--x-->").bytes, 2); // an unmatched backtick is literal
});

Deno.test("InstructionScanner: @path imports outside code spans, fences and comments", () => {
  assert.deepEqual(importsOf("@a.md and @b/c.md\nsee @~/x.md, mail me@host.org\n"), [
    "a.md",
    "b/c.md",
    "~/x.md,",
  ]);
  assert.deepEqual(importsOf("`@no.md` ``@no2.md`` @yes.md\n"), ["yes.md"]);
  assert.deepEqual(importsOf("```md\n@fenced.md\n```\n@after.md\n"), ["after.md"]);
  assert.deepEqual(importsOf("<!-- @hidden.md -->\n<!--\n@hidden2.md\n-->@glued.md @x.md"), [
    "x.md",
  ]);
  assert.deepEqual(importsOf("@my\\ file.md\n"), ["my file.md"]);
});

Deno.test("InstructionScanner: MEMORY.md limit — frontmatter and comments removed first, 200 lines, 25,000 bytes at whole lines", () => {
  const limit = { lines: 200, bytes: 25_000 };
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i}\n`).join("");
  const first200 = enc(lines(200)).length;
  assert.deepEqual(shown(lines(300), { frontmatter: true, limit }), {
    bytes: first200,
    commentsHidden: false,
    truncated: true,
  });
  assert.deepEqual(shown(lines(200), { frontmatter: true, limit }).truncated, false);
  // frontmatter and comments do not count toward the limit (the line end after a comment stays:
  // one empty line, then 199 of the 200 lines)
  const text = "---\nname: index\n---\n<!-- a\nlong\ncomment -->\n" + lines(200);
  assert.deepEqual(shown(text, { frontmatter: true, limit }), {
    bytes: 1 + enc(lines(199)).length,
    commentsHidden: true,
    truncated: true,
  });
  // 100-byte lines: 250 lines fit in 25,000 bytes, so 200 lines (20,000 bytes) load
  const wide = "x".repeat(99) + "\n";
  assert.equal(shown(wide.repeat(300), { frontmatter: true, limit }).bytes, 20_000);
  // 300-byte lines: the byte limit comes first, at a whole line (83 × 300 = 24,900)
  const wider = "y".repeat(299) + "\n";
  assert.deepEqual(shown(wider.repeat(100), { frontmatter: true, limit }), {
    bytes: 24_900,
    commentsHidden: false,
    truncated: true,
  });
  // one line longer than the limit is cut at the limit
  assert.equal(shown("z".repeat(30_000), { frontmatter: true, limit }).bytes, 25_000);
  // an unclosed frontmatter runs to EOF
  assert.equal(shown("---\nall\nfrontmatter\n", { frontmatter: true, limit }).bytes, 0);
});

Deno.test("InstructionScanner: a line longer than LINE_HEAD — markers in its head only, the rest counts by state", () => {
  const long = "a".repeat(LINE_HEAD + 10);
  assert.equal(shown(`${long}\n`).bytes, LINE_HEAD + 11);
  assert.equal(shown(`<!-- ${long} -->\nb\n`).bytes, 0); // the close lies past the head
});

Deno.test("InstructionScanner: any chunking gives the one-chunk result (property)", () => {
  const alphabet = fc.constantFrom(
    "a",
    " ",
    "\n",
    "`",
    "```\n",
    "~~~\n",
    "<!--",
    "-->",
    "@x.md",
    "---\n",
  );
  fc.assert(
    fc.property(
      fc.array(alphabet, { maxLength: 40 }),
      fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      (parts, sizes, memory) => {
        const bytes = enc(parts.join(""));
        const options = (found: string[]): InstructionOptions => ({
          onImport: (p) => found.push(p),
          ...(memory ? { frontmatter: true, limit: { lines: 3, bytes: 20 } } : {}),
        });
        const a: string[] = [];
        const b: string[] = [];
        const whole = scanBytes(new InstructionScanner(options(a)), bytes);
        const split = scanChunks(new InstructionScanner(options(b)), bytes, sizes);
        assert.deepEqual(split, whole);
        if (!memory) assert.deepEqual(b, a);
      },
    ),
  );
});
