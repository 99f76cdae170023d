import assert from "node:assert/strict";
import fc from "fast-check";
import { text } from "../text.ts";
import { renderText, renderValue, safeJson, sanitize, sanitizeMessage } from "./sanitize.ts";

Deno.test("controls are escaped visibly, never dropped (the printable() rule)", () => {
  assert.equal(sanitize("/home/ana/.cellm"), "/home/ana/.cellm");
  assert.equal(sanitize("\x1b[1;31mred\x1b[0m"), '"\\x1b[1;31mred\\x1b[0m"');
  assert.equal(sanitize("a\tb\r\nc"), '"a\\tb\\r\\nc"');
  assert.equal(sanitize("a\x00\x07\x7f\x85b"), '"a\\x00\\a\\x7f\\x85b"');
  assert.equal(sanitize('say "hi" \\o/'), '"say \\"hi\\" \\\\o/"');
  // A name that only differs by a control character never prints like the real one.
  assert.notEqual(sanitize("/home/ana\x07/x"), sanitize("/home/ana/x"));
});

Deno.test("bidi, zero-width, BOM and lone surrogates are escaped as \\uXXXX (and force quoting)", () => {
  assert.equal(sanitize("ab\u202ec"), '"ab\\u202ec"');
  assert.equal(sanitize("a\u200bb\ufeff"), '"a\\u200bb\\ufeff"');
  assert.equal(sanitize("x\ud800y"), '"x\\ud800y"');
  assert.equal(sanitize("\x1b\u2066"), '"\\x1b\\u2066"');
  assert.equal(sanitize("😀"), "😀");
});

Deno.test("clamp counts code points and never splits a surrogate pair", () => {
  assert.equal(sanitize("😀".repeat(5), 3), "😀😀😀…");
  assert.equal(sanitize("x".repeat(200)), "x".repeat(200));
  assert.equal(sanitize("x".repeat(201)), "x".repeat(200) + "…");
  assert.equal(sanitize("\n".repeat(5), 2), '"\\n\\n…"');
});

Deno.test("renderValue quotes spaces, = and quotes once", () => {
  assert.equal(renderValue("full"), "full");
  assert.equal(renderValue("a b"), '"a b"');
  assert.equal(renderValue('a"b'), '"a\\"b"');
  assert.equal(renderValue("a=b"), '"a=b"');
  assert.equal(renderValue(""), '""');
  assert.equal(renderValue("a b\n"), '"a b\\n"');
});

Deno.test("sanitizeMessage leaves plain text alone and escapes text with controls", () => {
  assert.equal(
    sanitizeMessage('Invalid option: expected one of "off"|"full"'),
    'Invalid option: expected one of "off"|"full"',
  );
  assert.equal(sanitizeMessage("bad\nline"), '"bad\\nline"');
  assert.equal(sanitizeMessage("x\u009b2J"), '"x\\x9b2J"');
});

Deno.test("property: output never holds a control, bidi or zero-width character", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => {
      for (const out of [sanitize(s), sanitizeMessage(s), renderValue(s)]) {
        // deno-lint-ignore no-control-regex
        if (/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]/.test(out)) {
          return false;
        }
      }
      return true;
    }),
  );
});

Deno.test("property: safeJson is lossless and holds no character a terminal acts on", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 200 }), (s) => {
      const out = safeJson({ s });
      // deno-lint-ignore no-control-regex
      return !/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/.test(out) &&
        JSON.parse(out).s === s;
    }),
  );
});

Deno.test("renderText sanitizes each interpolated value, never the literal parts", () => {
  assert.equal(renderText(text`unknown option ${"--\x1b[2Jx"}`), 'unknown option "--\\x1b[2Jx"');
  assert.equal(renderText(text`${"a\nb"}: ${3} left`), '"a\\nb": 3 left');
});
