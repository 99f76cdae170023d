import assert from "node:assert/strict";
import fc from "fast-check";
import { text } from "../text.ts";
import { renderText, renderValue, sanitize } from "./sanitize.ts";

Deno.test("escapes, controls, bidi and zero-width characters are removed", () => {
  assert.equal(sanitize("\x1b[1;31mred\x1b[0m"), "red");
  assert.equal(sanitize("a\x1b]0;title\x07b\x1b]8;;x\x1b\\c"), "abc");
  assert.equal(sanitize("a\x1bcb\u009b31m"), "ab31m");
  assert.equal(sanitize("a\tb\r\nc"), "a b  c");
  assert.equal(sanitize("a\x00\x07\x7f\x85b\u202e\u2066\u200b\ufeffc"), "abc");
});

Deno.test("clamp counts code points and never splits a surrogate pair", () => {
  assert.equal(sanitize("😀".repeat(5), 3), "😀😀😀…");
  assert.equal(sanitize("x".repeat(200)), "x".repeat(200));
  assert.equal(sanitize("x".repeat(201)), "x".repeat(200) + "…");
});

Deno.test("renderValue quotes spaces, = and quotes", () => {
  assert.equal(renderValue("full"), "full");
  assert.equal(renderValue("a b"), '"a b"');
  assert.equal(renderValue('a"b'), '"a\\"b"');
  assert.equal(renderValue("a=b"), '"a=b"');
  assert.equal(renderValue(""), '""');
});

Deno.test("property: output never holds ESC, C0/C1 controls or bidi controls", () => {
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 300 }), (s) => {
      const out = sanitize(s);
      // deno-lint-ignore no-control-regex
      return !/[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]/.test(out) &&
        Array.from(out).length <= 201;
    }),
  );
});

Deno.test("renderText sanitizes each interpolated value, never the literal parts", () => {
  assert.equal(renderText(text`unknown option ${"--\x1b[2Jx"}`), "unknown option --x");
  assert.equal(renderText(text`${"a\nb"}: ${3} left`), "a b: 3 left");
});
