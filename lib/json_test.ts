import assert from "node:assert/strict";

import { compactJson, jsonString, spacedObject } from "./json.ts";

Deno.test("jsonString escapes as JSON.stringify does: short forms, other controls as \\u00xx, non-ASCII raw", () => {
  assert.equal(jsonString('a"b\\c'), '"a\\"b\\\\c"');
  assert.equal(jsonString("\b\f\n\r\t"), '"\\b\\f\\n\\r\\t"');
  assert.equal(jsonString("\u0001\u001f\u007f"), '"\\u0001\\u001f\u007f"');
  assert.equal(jsonString("é ✓ 🙂 \u2028"), '"é ✓ 🙂 \u2028"');
  assert.equal(jsonString("\ud800"), '"\\ud800"', "a lone surrogate stays valid JSON");
  assert.equal(JSON.parse(jsonString("x\u0000y")), "x\u0000y");
});

Deno.test("compactJson: one line, no spaces, keys in insertion order", () => {
  assert.equal(
    compactJson({ z: 1, a: [true, null, "t\tab"], m: { y: 2, b: [] } }),
    '{"z":1,"a":[true,null,"t\\tab"],"m":{"y":2,"b":[]}}',
  );
});

Deno.test('spacedObject: `{"k": v, …}` with nested objects spaced the same way, arrays compact', () => {
  assert.equal(
    spacedObject({
      project: "/p",
      global: null,
      measurement: { scope: "potential-inventory", actual: false },
      list: [{ a: 1 }, 2],
      n: 0,
    }),
    '{"project": "/p", "global": null, "measurement": {"scope": "potential-inventory", ' +
      '"actual": false}, "list": [{"a":1},2], "n": 0}',
  );
  assert.equal(spacedObject({}), "{}");
  assert.equal(spacedObject({ 'k"\n': "v" }), '{"k\\"\\n": "v"}');
});
