/**
 * Pure measurements on file *bytes* (never decoded text): rule scoping, an agent's `description:`
 * size and a hook file's payload estimate (`references/context-scan.md#measurement`).
 *
 * A line is the bytes before a `\n`, plus a final unterminated run; a trailing `\n` adds no empty
 * line; `\r` is an ordinary byte. Whitespace is space, TAB, VT, FF and CR.
 *
 * @module
 */

const NL = 0x0a;

/** True for the scanner's whitespace bytes: space, TAB, VT, FF, CR. */
export function isWhitespaceByte(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0b || b === 0x0c || b === 0x0d;
}

/** `[start, end)` byte ranges of each line of `bytes`, counted as the module doc says. */
export function* lineRanges(bytes: Uint8Array): Generator<[number, number]> {
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(NL, start);
    if (end === -1) end = bytes.length;
    yield [start, end];
    start = end + 1;
  }
}

/** The token proxy: `floor(bytes / 4)`. */
export function tokensOf(bytes: number): number {
  return Math.floor(bytes / 4);
}

function startsWithAscii(bytes: Uint8Array, start: number, end: number, text: string): boolean {
  if (end - start < text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[start + i] !== text.charCodeAt(i)) return false;
  return true;
}

/** True when the line is `---` followed only by whitespace (a frontmatter fence). */
function isFence(bytes: Uint8Array, start: number, end: number): boolean {
  if (!startsWithAscii(bytes, start, end, "---")) return false;
  for (let i = start + 3; i < end; i++) if (!isWhitespaceByte(bytes[i])) return false;
  return true;
}

/**
 * A rule is path-scoped iff line 1 is a fence and a line starting in column 0 with `paths:` occurs
 * before the next fence, or EOF when the fence is never closed
 * (`references/context-scan.md#rule-scoping`).
 *
 * @example
 * ```ts
 * import { isPathScopedRule } from "./measure.ts";
 * const enc = new TextEncoder();
 * isPathScopedRule(enc.encode("---\npaths: [\"src/**\"]\n---\nx\n")); // true
 * isPathScopedRule(enc.encode("---\n  paths: x\n---\n")); // false
 * ```
 */
export function isPathScopedRule(bytes: Uint8Array): boolean {
  let first = true;
  for (const [start, end] of lineRanges(bytes)) {
    if (first) {
      if (!isFence(bytes, start, end)) return false;
      first = false;
      continue;
    }
    if (isFence(bytes, start, end)) return false;
    if (startsWithAscii(bytes, start, end, "paths:")) return true;
  }
  return false;
}

const DESCRIPTION = "description:";

/**
 * Bytes of the first `description:` value (inline or block), counting `len(line)+1` per counted
 * line; 0 when none is found (`references/context-scan.md#agent-description`).
 *
 * @example
 * ```ts
 * import { descriptionBytes } from "./measure.ts";
 * descriptionBytes(new TextEncoder().encode('---\ndescription: "Small helper"\n---\n')); // 15
 * ```
 */
export function descriptionBytes(bytes: Uint8Array): number {
  let total = 0;
  let block = false;
  let lineNo = 0;
  for (const [start, end] of lineRanges(bytes)) {
    lineNo++;
    if (lineNo > 1 && isFence(bytes, start, end)) break;
    if (block) {
      if (start === end || isWhitespaceByte(bytes[start])) {
        total += end - start + 1;
        continue;
      }
      break;
    }
    if (!startsWithAscii(bytes, start, end, DESCRIPTION)) continue;
    let i = start + DESCRIPTION.length;
    while (i < end && isWhitespaceByte(bytes[i])) i++;
    if (i < end && (bytes[i] === 0x7c || bytes[i] === 0x3e)) {
      block = true; // `|` or `>`: the value is the indented lines that follow
      continue;
    }
    return end - i + 1;
  }
  return total;
}

function isUpper(b: number): boolean {
  return b >= 0x41 && b <= 0x5a;
}

/**
 * The value's start offset if the line matches `^(export )?const [A-Z][A-Z0-9_]+ = .`, else -1.
 */
function hookValueStart(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  if (startsWithAscii(bytes, i, end, "export ")) i += 7;
  if (!startsWithAscii(bytes, i, end, "const ")) return -1;
  i += 6;
  if (i >= end || !isUpper(bytes[i])) return -1;
  i++;
  const nameRest = i;
  while (
    i < end && (isUpper(bytes[i]) || (bytes[i] >= 0x30 && bytes[i] <= 0x39) || bytes[i] === 0x5f)
  ) {
    i++;
  }
  if (i === nameRest) return -1; // names are at least two characters
  if (!startsWithAscii(bytes, i, end, " = ")) return -1;
  i += 3;
  return i < end ? i : -1;
}

/**
 * The hook payload estimate (`references/context-scan.md#hook-estimate`): per matching constant
 * line, the value after the first `= ` (one trailing `;` dropped) plus 1. A row is due only when
 * the sum is > 1.
 *
 * @example
 * ```ts
 * import { hookEstimate } from "./measure.ts";
 * const text = 'export const REMINDER_TEXT = "Run tests";\nconst X = 1;\nconst MAX_TRIES = 3;\n';
 * hookEstimate(new TextEncoder().encode(text)); // 14
 * ```
 */
export function hookEstimate(bytes: Uint8Array): number {
  let total = 0;
  for (const [start, end] of lineRanges(bytes)) {
    const value = hookValueStart(bytes, start, end);
    if (value === -1) continue;
    let stop = end;
    if (bytes[stop - 1] === 0x3b) stop--;
    total += stop - value + 1;
  }
  return total;
}
