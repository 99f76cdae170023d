import assert from "node:assert/strict";
import { Sha256, sha256Hex } from "./sha256.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("SHA-256: the FIPS 180-4 example vectors", () => {
  assert.equal(
    sha256Hex(enc("")),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  assert.equal(
    sha256Hex(enc("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
  assert.equal(
    sha256Hex(enc("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  const million = new Sha256();
  const chunk = enc("a".repeat(1000));
  for (let i = 0; i < 1000; i++) million.update(chunk);
  assert.equal(million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
});

Deno.test("SHA-256: any split into updates gives the same digest (padding at 55, 56, 63, 64 bytes)", () => {
  for (const n of [0, 1, 55, 56, 57, 63, 64, 65, 127, 128, 129, 1000]) {
    const bytes = new Uint8Array(n).map((_, i) => (i * 7 + 3) & 255);
    const whole = sha256Hex(bytes);
    for (const step of [1, 3, 63, 64, 100]) {
      const h = new Sha256();
      for (let i = 0; i < n; i += step) h.update(bytes.subarray(i, i + step));
      assert.equal(h.hex(), whole, `n=${n} step=${step}`);
    }
  }
});
