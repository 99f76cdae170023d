import assert from "node:assert/strict";
import { EXT_PREFIXES, extractExtendedTokens } from "./tokens_ext.ts";

const only = (line: string, prefix: string): string[] =>
  extractExtendedTokens(line).filter((t) => t.startsWith(prefix));

Deno.test("ext: ten prefixes in catalog order", () => {
  assert.deepEqual(EXT_PREFIXES, [
    "ver:",
    "glob:",
    "file:",
    "env:",
    "tick:",
    "lneg:",
    "url:",
    "cmp:",
    "slug:",
    "cyr:",
  ]);
});

Deno.test("ext ver: whole version with build suffix", () => {
  assert.deepEqual(only("use 4.0.6+codex.7 now", "ver:"), ["ver:4.0.6+codex.7"]);
  assert.deepEqual(only("1.2-rc1 and 3", "ver:"), ["ver:1.2-rc1"]);
  assert.deepEqual(only("just 42", "ver:"), []);
  assert.deepEqual(only("2.0- done", "ver:"), ["ver:2.0"]);
});

Deno.test("ext glob: stars with path characters", () => {
  assert.deepEqual(only("brew*/skills/*/SKILL.md", "glob:"), ["glob:brew*/skills/*/SKILL.md"]);
  assert.deepEqual(only("match **/*.{ts,md}", "glob:"), ["glob:**/*.{ts"]);
  assert.deepEqual(only("a * b", "glob:"), ["glob:*"]);
  assert.deepEqual(only("no stars", "glob:"), []);
});

Deno.test("ext file: mdx is the longest match, case kept", () => {
  assert.deepEqual(only("x.mdx", "file:"), ["file:x.mdx"]);
  assert.deepEqual(only("README.MD and a.yaml, b.yml", "file:"), [
    "file:README.MD",
    "file:a.yaml",
    "file:b.yml",
  ]);
  assert.deepEqual(only("pkg.json x.mjs y.js z.ts s.sh t.toml p.py n.txt", "file:"), [
    "file:pkg.json",
    "file:x.mjs",
    "file:y.js",
    "file:z.ts",
    "file:s.sh",
    "file:t.toml",
    "file:p.py",
    "file:n.txt",
  ]);
  assert.deepEqual(only("a.md.json", "file:"), ["file:a.md.json"]);
  assert.deepEqual(only("photo.png", "file:"), []);
});

Deno.test("ext env: three or more underscore groups", () => {
  assert.deepEqual(only("CLAUDE_PROJECT_DIR and HOME and A_B", "env:"), [
    "env:CLAUDE_PROJECT_DIR",
  ]);
  assert.deepEqual(only("CTXKIT_EXIT_LINE=0", "env:"), ["env:CTXKIT_EXIT_LINE"]);
});

Deno.test("ext tick: backticks included, empty pair never", () => {
  assert.deepEqual(only("run `deno task ci` then `x`", "tick:"), [
    "tick:`deno task ci`",
    "tick:`x`",
  ]);
  assert.deepEqual(only("`` nothing", "tick:"), []);
});

Deno.test("ext lneg: ASCII word boundaries, case kept", () => {
  assert.deepEqual(only("Never do this; DON'T skip, dont, do not", "lneg:"), [
    "lneg:Never",
    "lneg:DON'T",
    "lneg:dont",
    "lneg:do not",
  ]);
  assert.deepEqual(only("nevertheless commonly onlyx", "lneg:"), []);
  assert.deepEqual(only("must not, avoid, refuse, forbidden, unless, except, only", "lneg:"), [
    "lneg:must not",
    "lneg:avoid",
    "lneg:refuse",
    "lneg:forbidden",
    "lneg:unless",
    "lneg:except",
    "lneg:only",
  ]);
  // ASCII \b: a Cyrillic letter is not a word character, so the boundary holds.
  assert.deepEqual(only("жonly", "lneg:"), ["lneg:only"]);
});

Deno.test("ext url: trailing punctuation stripped, quotes end it", () => {
  assert.deepEqual(only("see https://example.com/a?b=1.", "url:"), [
    "url:https://example.com/a?b=1",
  ]);
  assert.deepEqual(only("(http://x.io/p), 'https://y.io/q' `http://z.io`", "url:"), [
    "url:http://x.io/p",
    "url:https://y.io/q",
    "url:http://z.io",
  ]);
  assert.deepEqual(only('<a href="https://q.io/r">', "url:"), ["url:https://q.io/r"]);
});

Deno.test("ext cmp: comparison with ASCII blanks only", () => {
  assert.deepEqual(only("keep >= 40% and <3 and > 2.5", "cmp:"), [
    "cmp:>= 40%",
    "cmp:<3",
    "cmp:> 2.5",
  ]);
  assert.deepEqual(only("x >\t\r7", "cmp:"), ["cmp:>\t\r7"]);
  // U+00A0 is not in the class: no match across it.
  assert.deepEqual(only("x >\u00a07", "cmp:"), []);
});

Deno.test("ext slug: lowercase hyphenated words", () => {
  assert.deepEqual(only("context-slim and text-optimize-2 and Big-Thing", "slug:"), [
    "slug:context-slim",
    "slug:text-optimize-2",
  ]);
});

Deno.test("ext cyr: four Russian words in any locale", () => {
  assert.deepEqual(only("сожми контекст на 40%, ещё", "cyr:"), [
    "cyr:сожми",
    "cyr:контекст",
    "cyr:на",
    "cyr:ещё",
  ]);
  // і ї є ґ are outside the class and split words.
  assert.deepEqual(only("підсумок", "cyr:"), ["cyr:п", "cyr:дсумок"]);
  assert.deepEqual(only("ЁЛКА", "cyr:"), ["cyr:ЁЛКА"]);
});

Deno.test("ext: classes in order, repeats kept", () => {
  assert.deepEqual(extractExtendedTokens("v1.2 v1.2"), ["ver:1.2", "ver:1.2"]);
  assert.deepEqual(extractExtendedTokens("x.md >=2"), ["file:x.md", "cmp:>=2"]);
  assert.deepEqual(extractExtendedTokens(""), []);
});
