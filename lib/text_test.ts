import assert from "node:assert/strict";
import {
  escapeUnsafeJson,
  joinText,
  plain,
  printable,
  printed,
  splitLines,
  text,
  verbatim,
} from "./text.ts";

Deno.test("printable: plain names unchanged; controls, quote and backslash escaped and quoted", () => {
  for (const name of ["CLAUDE.md", "a b/c.md", "ünïcode ✓.md", "", "it's"]) {
    assert.equal(printable(name), name);
  }
  assert.equal(printable("x\nGATE: PASS"), '"x\\nGATE: PASS"');
  assert.equal(printable("a\\b"), '"a\\\\b"');
  assert.equal(printable('say "hi"'), '"say \\"hi\\""');
  assert.equal(printable("\x1b[31mred"), '"\\x1b[31mred"');
  assert.equal(printable("\t\r\x07\b\v\f\x00\x7f\x9b"), '"\\t\\r\\a\\b\\v\\f\\x00\\x7f\\x9b"');
  // Line/paragraph separators, bidi and zero-width format characters, BOM, lone surrogates.
  assert.equal(printable("a\u2028b\u2029"), '"a\\u2028b\\u2029"');
  assert.equal(printable("r\u202egnp.md\u200b\ufeff"), '"r\\u202egnp.md\\u200b\\ufeff"');
  assert.equal(printable("s\ud800!\udc00"), '"s\\ud800!\\udc00"');
  // A surrogate pair is one ordinary character (U+1F600), non-ASCII letters stay readable.
  assert.equal(printable("ok\u{1f600}é.md"), "ok\u{1f600}é.md");
});

Deno.test("printable maps back: every escaped name decodes to exactly itself", () => {
  const decode = (s: string): string =>
    s.startsWith('"')
      ? s.slice(1, -1).replace(
        /\\(x[0-9a-f]{2}|u[0-9a-f]{4}|.)/g,
        (_, e: string) =>
          (e.startsWith("x") && e.length === 3) || (e.startsWith("u") && e.length === 5)
            ? String.fromCharCode(parseInt(e.slice(1), 16))
            : ({ a: "\x07", b: "\b", t: "\t", n: "\n", v: "\v", f: "\f", r: "\r" } as Record<
              string,
              string
            >)[e] ?? e,
      )
      : s;
  for (
    const name of ["x\ny", "\\", '"', '"quoted"', "a\x00b\x9bc", "plain", "\u2028\ud800", "\\u2028"]
  ) {
    assert.equal(decode(printable(name)), name);
    assert.equal(printable(name).includes("\n"), false);
  }
});

Deno.test("text: values are data (printed safely), literals are trusted, verbatim and nesting", () => {
  const t = text`RESTORED: ${"a\nb.md"} (${3} files) ${verbatim("git \\said")}`;
  assert.equal(printed(t), 'RESTORED: "a\\nb.md" (3 files) git \\said');
  assert.equal(plain(t), "RESTORED: a\nb.md (3 files) git \\said");
  const nested = text`❌ ${text`not a file: ${"x\ty"}`}`;
  assert.equal(printed(nested), '❌ not a file: "x\\ty"');
  assert.equal(printed(joinText(["a", "b c", "d\n"], " ")), 'a b c "d\\n"');
  assert.equal(printed(joinText([], " ")), "");
});

Deno.test("splitLines splits at literal newlines only, never inside a value", () => {
  const lines = splitLines(text`first ${"x\ny"}\nsecond ${text`in\nner`}`);
  assert.deepEqual(lines.map(plain), ["first x\ny", "second in", "ner"]);
  assert.deepEqual(lines.map(printed), ['first "x\\ny"', "second in", "ner"]);
});

Deno.test("escapeUnsafeJson: what JSON.stringify leaves raw of the unsafe set becomes \\uXXXX; the value parses back", () => {
  const value = "a\u007f\u009b\u2028\u202e\u200b\ufeffb\n\u0001é";
  const json = escapeUnsafeJson(JSON.stringify(value));
  assert.equal(json, '"a\\u007f\\u009b\\u2028\\u202e\\u200b\\ufeffb\\n\\u0001é"');
  assert.equal(JSON.parse(json), value);
});
