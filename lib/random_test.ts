import assert from "node:assert/strict";
import { randomHex } from "./random.ts";

Deno.test("randomHex: two lowercase hex digits per byte, different every call", () => {
  const a = randomHex(32);
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.notEqual(randomHex(32), a);
  assert.equal(randomHex(0), "");
});
