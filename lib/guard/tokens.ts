/**
 * Critical-token extraction (`references/context-guard.md#critical-tokens`): the facts a rewrite
 * must keep.
 *
 * Text is decoded as UTF-8 (invalid bytes → U+FFFD), split at `\n` only, and every class regex runs on
 * each line separately, left to right, non-overlapping. The base classes are ASCII-only, so their
 * results equal the original's `grep -o` on any text; NUL-bearing files are scanned too.
 *
 * @module
 */

import { extractExtendedTokens, stripTrailingPunctuation } from "./tokens_ext.ts";
import { sortUtf8 } from "../sort.ts";
import { UsageError } from "../errors.ts";
import { text } from "../text.ts";

/** The token alphabet a command runs with: `base` (default) or `ext` (base + ten classes). */
export type TokenAlphabet = "base" | "ext";

interface BaseClass {
  readonly prefix: string;
  readonly regex: RegExp;
  readonly strip: boolean;
}

// JavaScript's greedy engine gives POSIX leftmost-longest for these four (no alternative is a
// prefix of another, and each repetition is maximal). `path:` starts only where its leading run
// starts: a later start in the same run reaches the same end, so it could only fail again, and
// trying each one made a long slash-free line quadratic.
const BASE_CLASSES: readonly BaseClass[] = [
  { prefix: "num:", regex: /[0-9]+(?:\.[0-9]+)*/g, strip: false },
  {
    prefix: "path:",
    regex: /(?<![A-Za-z0-9_@.-])[A-Za-z0-9_@.-]*\/[A-Za-z0-9_@./-]+/g,
    strip: true,
  },
  { prefix: "neg:", regex: /!=[A-Za-z0-9_./-]*/g, strip: true },
  { prefix: "kw:", regex: /NEVER|ALWAYS|MUST NOT|DO NOT|REQUIRED|MANDATORY/g, strip: false },
];

/**
 * Parse a `--tokens=` value; anything but `base` or `ext` is a {@linkcode UsageError}
 * `unknown token alphabet: <value> (want base or ext)`.
 */
export function parseAlphabet(value: string): TokenAlphabet {
  if (value === "base" || value === "ext") return value;
  throw new UsageError(text`unknown token alphabet: ${value} (want base or ext)`);
}

/** Base-alphabet tokens of one line, in class order, repeats kept. */
export function extractBaseTokens(line: string): string[] {
  const out: string[] = [];
  for (const cls of BASE_CLASSES) addClassTokens(cls, line, (t) => out.push(t));
  return out;
}

function addClassTokens(cls: BaseClass, text: string, add: (token: string) => void): void {
  cls.regex.lastIndex = 0;
  for (const m of text.matchAll(cls.regex)) {
    add(cls.prefix + (cls.strip ? stripTrailingPunctuation(m[0]) : m[0]));
  }
}

/** Decode bytes as UTF-8 the way every token reader does: invalid sequences become U+FFFD. */
export function decodeText(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: false, ignoreBOM: true }).decode(bytes);
}

/** Split text into lines at `\n` only; a final `\n` opens no extra line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const parts = text.split("\n");
  if (text.endsWith("\n")) parts.pop();
  return parts;
}

/** The token set of one line in `alphabet`. */
export function lineTokens(line: string, alphabet: TokenAlphabet = "base"): string[] {
  const base = extractBaseTokens(line);
  return alphabet === "ext" ? base.concat(extractExtendedTokens(line)) : base;
}

/**
 * The critical-token set of a text or of raw file bytes.
 *
 * @example
 * ```ts
 * import { tokenSet } from "./tokens.ts";
 * [...tokenSet("Use 4.0.6+codex.7 NEVERTHELESS")].sort(); // ["kw:NEVER", "num:4.0.6", "num:7"]
 * ```
 */
export function tokenSet(
  input: string | Uint8Array,
  alphabet: TokenAlphabet = "base",
): Set<string> {
  const text = typeof input === "string" ? input : decodeText(input);
  const set = new Set<string>();
  const add = (t: string) => set.add(t);
  // No base class can match a `\n` (nor, at a line's start, tell a `\n` before it from none), so
  // one pass over the whole text finds exactly the union of its lines' base tokens.
  for (const cls of BASE_CLASSES) addClassTokens(cls, text, add);
  if (alphabet === "ext") {
    for (const line of splitLines(text)) for (const t of extractExtendedTokens(line)) add(t);
  }
  return set;
}

/** Tokens of `before` that `after` lacks, sorted by code point (the gate's misses). */
export function missingTokens(before: Set<string>, after: Set<string>): string[] {
  const misses: string[] = [];
  for (const t of before) if (!after.has(t)) misses.push(t);
  return sortUtf8(misses);
}
