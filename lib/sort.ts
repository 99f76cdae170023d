/**
 * C-locale ordering: by the UTF-8 bytes of a string, which equals Unicode code-point order.
 *
 * JavaScript's default sort compares UTF-16 code units, which puts astral characters (`𝔸`, U+1D538,
 * stored as surrogates 0xD835…) before BMP characters above U+D7FF (`ｚ`, U+FF5A). The originals sort
 * with `LC_ALL=C`, so every ctxkit listing uses this comparator instead.
 *
 * @module
 */

// Surrogates (0xD800–0xDFFF) encode code points above 0xFFFF: lift them above every other unit.
function rank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit <= 0xdfff ? unit + 0x2000 : unit - 0x800;
}

/**
 * Compare two strings by their UTF-8 bytes (C locale).
 *
 * @example
 * ```ts
 * import { compareUtf8 } from "./sort.ts";
 * ["ｚ.md", "𝔸.md", "a/b.md", "a-b.md"].sort(compareUtf8); // ["a-b.md", "a/b.md", "ｚ.md", "𝔸.md"]
 * ```
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/** Return a new array sorted in C-locale order. */
export function sortUtf8(items: Iterable<string>): string[] {
  return [...items].sort(compareUtf8);
}
