/**
 * "Did you mean": the one near-miss rule of every tool's command and option errors
 * (`references/cli.md#did-you-mean`).
 *
 * @module
 */

/** Leading dashes do not count: `-root` is a near miss of `--root`. */
function bare(word: string): string {
  let i = 0;
  while (i < word.length && word[i] === "-") i++;
  return word.slice(i);
}

/** The longest word compared: a longer one is no typo of a name (and the cost stays bounded). */
const MAX_LENGTH = 40;

/**
 * Optimal-string-alignment distance of `a` and `b` (insert, delete, substitute, swap two
 * neighbours), or `limit + 1` when it is over `limit`. Both are at most {@linkcode MAX_LENGTH}, so
 * the table is bounded.
 */
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, prev2[j - 2] + 1);
      }
      row.push(d);
    }
    prev2 = prev;
    prev = row;
  }
  return Math.min(prev[b.length], limit + 1);
}

/**
 * The candidate `word` most likely misspells, or `undefined`: the nearest within one edit (two for
 * a name of six characters or more), leading dashes ignored, case ignored; else the one candidate
 * `word` abbreviates (`--obs` → `--observe`). Words of fewer than three characters get none (`-x`
 * is no misspelt `-h`). Ties go to the first candidate.
 *
 * @example
 * ```ts
 * import { nearest } from "./suggest.ts";
 * nearest("snapshoot", ["snapshot", "verify"]); // "snapshot"
 * nearest("--roo", ["--root", "--global"]); // "--root"
 * ```
 */
export function nearest(word: string, candidates: Iterable<string>): string | undefined {
  const w = bare(word).toLowerCase();
  if (w.length < 3 || w.length > MAX_LENGTH) return undefined;
  const limit = w.length >= 6 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = limit + 1;
  const prefixed: string[] = [];
  for (const candidate of candidates) {
    const c = bare(candidate).toLowerCase();
    if (c.length > MAX_LENGTH || c === "") continue;
    const d = distance(w, c, limit);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
    if (c.startsWith(w)) prefixed.push(candidate);
  }
  if (best !== undefined) return best;
  return prefixed.length === 1 ? prefixed[0] : undefined;
}
