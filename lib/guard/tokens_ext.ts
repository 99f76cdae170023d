/**
 * The extended critical-token alphabet (`--tokens=ext`,
 * `references/context-guard.md#critical-tokens`): the keep catalog's ten
 * `crit_tokens_ext()` classes. The base alphabet lives in `tokens.ts`, which adds these for `ext`.
 *
 * Each class regex runs on one line at a time, left to right, non-overlapping. JavaScript's greedy
 * engine yields POSIX longest-match here because every alternation lists its longer branch first
 * (`mdx` before `md`) and no class can match the empty string.
 *
 * @module
 */

/** One extended class: prefix, global regex, optional post-processing of the matched text. */
interface ExtClass {
  readonly prefix: string;
  readonly regex: RegExp;
  readonly post?: (text: string) => string;
}

/**
 * The token with its trailing run of `.` `,` `;` `:` removed (sentence punctuation glued to a
 * path's, a `!=` value's or a URL's end). A loop from the end, never `/[.,;:]+$/`: that regex
 * retries at every character of a run that does not end the token, quadratic in the run (a 150 KB
 * line of dots took `verify` 45 s; `references/context-guard.md#extraction`).
 */
export function stripTrailingPunctuation(text: string): string {
  let end = text.length;
  for (;;) {
    const c = text.charCodeAt(end - 1);
    // . , ; :
    if (c !== 0x2e && c !== 0x2c && c !== 0x3b && c !== 0x3a) break;
    end--;
  }
  return end === text.length ? text : text.slice(0, end);
}

// The lookbehinds only skip start positions inside a run whose earlier start already failed with
// the same tail (so results are unchanged); without them a long line was quadratic.
const EXT_CLASSES: readonly ExtClass[] = [
  // A match takes its whole leading digit run (the run must end at a `.`), so `ver:` starts only
  // where a digit run starts: a later start in the run fails the same way, and trying each one made
  // a long run of digits quadratic (400,000 digits: 172 s).
  { prefix: "ver:", regex: /(?<![0-9])[0-9]+(?:\.[0-9]+)+(?:[+-][A-Za-z0-9][A-Za-z0-9.]*)?/g },
  { prefix: "glob:", regex: /(?<![A-Za-z0-9_.{}/-])[A-Za-z0-9_.{}/-]*\*+[A-Za-z0-9_.{}*/-]*/g },
  {
    prefix: "file:",
    regex: /(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]+\.(?:mdx|md|json|mjs|js|ts|sh|ya?ml|toml|py|txt)/gi,
  },
  { prefix: "env:", regex: /[A-Z](?<=(?:^|[^A-Z0-9])[0-9]*[A-Z])[A-Z0-9]*(?:_[A-Z0-9]+){2,}/g },
  { prefix: "tick:", regex: /`[^`]+`/g },
  // No `u` flag: `\b` stays ASCII-only, as in the catalog's grep.
  {
    prefix: "lneg:",
    regex: /\b(?:never|do not|don'?t|must not|avoid|refuse|forbidden|unless|except|only)\b/gi,
  },
  { prefix: "url:", regex: /https?:\/\/[^ )>"'`]+/g, post: stripTrailingPunctuation },
  // `[ \t\v\f\r]`, never `\s`: `\s` would also take Unicode spaces the catalog's class does not.
  { prefix: "cmp:", regex: /[<>]=?[ \t\v\f\r]*[0-9]+(?:\.[0-9]+)?%?/g },
  { prefix: "slug:", regex: /[a-z](?<=(?:^|[^a-z0-9])[0-9]*[a-z])[a-z0-9]*(?:-[a-z0-9]+)+/g },
  // Matched on characters (decoded text), so the result never depends on the locale.
  { prefix: "cyr:", regex: /[\u0410-\u044F\u0401\u0451]+/gu },
];

/** The ten prefixes of the extended alphabet, in class order. */
export const EXT_PREFIXES: readonly string[] = EXT_CLASSES.map((c) => c.prefix);

/**
 * Tokens of the ten extended classes found in ONE line (no `\n`; a `\r` may stay), each
 * `<prefix>:<text>`, in class order and left to right within a class. Repeats are kept: callers
 * collect a set.
 *
 * @example
 * ```ts
 * import { extractExtendedTokens } from "./tokens_ext.ts";
 * extractExtendedTokens("see x.mdx"); // ["file:x.mdx"]
 * ```
 */
export function extractExtendedTokens(line: string): string[] {
  const out: string[] = [];
  for (const cls of EXT_CLASSES) {
    for (const match of line.matchAll(cls.regex)) {
      const text = cls.post ? cls.post(match[0]) : match[0];
      out.push(cls.prefix + text);
    }
  }
  return out;
}
