import { deepStrictEqual } from "node:assert/strict";
import { compareUtf8, sortUtf8 } from "./sort.ts";

Deno.test("sortUtf8 orders by UTF-8 bytes, not UTF-16 units", () => {
  const expected = [".hidden.md", "MEMORY.md", "Z.md", "a-b.md", "a/b.md", "é.md", "ｚ.md", "𝔸.md"];
  deepStrictEqual(sortUtf8([...expected].reverse()), expected);
  deepStrictEqual(sortUtf8(["𝔸.md", "ｚ.md", "\uE000", "\uD7FF"]), [
    "\uD7FF",
    "\uE000",
    "ｚ.md",
    "𝔸.md",
  ]);
});

Deno.test("compareUtf8 agrees with a byte comparison on random strings", () => {
  const enc = new TextEncoder();
  const byteCompare = (a: string, b: string) => {
    const x = enc.encode(a), y = enc.encode(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  };
  const pool = ["a", "/", "-", "é", "ｚ", "𝔸", "\uE000", "\uD7FF", "😀", "Z"];
  let seed = 7;
  const pick = () => pool[(seed = (seed * 1103515245 + 12345) % 2147483648) % pool.length];
  for (let n = 0; n < 2000; n++) {
    const a = pick() + pick() + pick(), b = pick() + pick();
    deepStrictEqual(Math.sign(compareUtf8(a, b)), Math.sign(byteCompare(a, b)), `${a} vs ${b}`);
  }
});
