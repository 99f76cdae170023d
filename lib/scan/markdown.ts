/**
 * The streaming reader of what Claude Code shows of a Markdown file too large to read whole
 * (`--loaded`, files over 8 MiB; `references/context-scan.md#loaded-figures`): the text an
 * auto-load keeps (HTML comments hidden, `@path` imports found outside code) and the `MEMORY.md`
 * index limit, an estimate of `claude_text.ts`'s exact rules. It is a {@linkcode LineScanner} fed
 * chunk by chunk: memory is one chunk plus the first {@linkcode LINE_HEAD} bytes of the current
 * line, whatever the file's size.
 *
 * @module
 */

import { FenceMatch, isWhitespaceByte, LineScanner } from "./measure.ts";

/**
 * How much of one line is examined: markers (comments, code spans, fences, imports, frontmatter
 * keys) are looked for in the first 64 KiB of a line; the rest of a longer line only counts.
 */
export const LINE_HEAD = 64 * 1024;

const BACKTICK = 0x60;
const TILDE = 0x7e;
const SPACE = 0x20;
const decoder = new TextDecoder();

/**
 * A {@linkcode LineScanner} that hands each line over whole: its first {@linkcode LINE_HEAD} bytes,
 * how many bytes followed them, and whether the line is a frontmatter fence (`---` plus optional
 * whitespace, checked over the whole line).
 */
export abstract class HeadLineScanner<R> extends LineScanner<R> {
  readonly #head = new Uint8Array(LINE_HEAD);
  #headLength = 0;
  #tail = 0;
  readonly #fence = new FenceMatch();

  protected piece(chunk: Uint8Array, start: number, end: number): boolean {
    this.#fence.feed(chunk, start, end);
    const room = LINE_HEAD - this.#headLength;
    const take = Math.min(room, end - start);
    this.#head.set(chunk.subarray(start, start + take), this.#headLength);
    this.#headLength += take;
    this.#tail += end - start - take;
    return false;
  }

  protected endLine(_length: number, terminated: boolean): boolean {
    const head = this.#head.subarray(0, this.#headLength);
    const settled = this.line(head, this.#tail, this.#fence.matched, terminated);
    this.#headLength = 0;
    this.#tail = 0;
    this.#fence.reset();
    return settled;
  }

  /**
   * One whole line: `head` (valid only during the call), the count of bytes after it, whether it
   * is a fence, and whether a `\n` ended it. Return true when the result is settled.
   */
  protected abstract line(
    head: Uint8Array,
    tail: number,
    fence: boolean,
    terminated: boolean,
  ): boolean;
}

function startsWithAscii(bytes: Uint8Array, at: number, text: string): boolean {
  if (bytes.length - at < text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[at + i] !== text.charCodeAt(i)) return false;
  return true;
}

function indexOfAscii(bytes: Uint8Array, text: string, from: number): number {
  const first = text.charCodeAt(0);
  for (let i = bytes.indexOf(first, from); i !== -1; i = bytes.indexOf(first, i + 1)) {
    if (startsWithAscii(bytes, i, text)) return i;
  }
  return -1;
}

/** A fenced code block's opening: its character and length, or `undefined`. */
function openingFence(line: Uint8Array): { char: number; length: number } | undefined {
  let i = 0;
  while (i < 3 && line[i] === SPACE) i++;
  const char = line[i];
  if (char !== BACKTICK && char !== TILDE) return undefined;
  let j = i;
  while (line[j] === char) j++;
  if (j - i < 3) return undefined;
  if (char === BACKTICK && line.indexOf(BACKTICK, j) !== -1) return undefined; // inline code
  return { char, length: j - i };
}

function closesFence(line: Uint8Array, fence: { char: number; length: number }): boolean {
  let i = 0;
  while (i < 3 && line[i] === SPACE) i++;
  let j = i;
  while (line[j] === fence.char) j++;
  if (j - i < fence.length) return false;
  for (; j < line.length; j++) if (!isWhitespaceByte(line[j])) return false;
  return true;
}

/** The end of the code span opened by the backtick run at `at` (length `run`), or -1. */
function codeSpanEnd(line: Uint8Array, at: number, run: number): number {
  let i = at + run;
  while (i < line.length) {
    const j = line.indexOf(BACKTICK, i);
    if (j === -1) return -1;
    let k = j;
    while (line[k] === BACKTICK) k++;
    if (k - j === run) return k;
    i = k;
  }
  return -1;
}

/** The `@path` token at `at` (the `@`): its path text (`\ ` unescaped) and where it ends. */
function importToken(line: Uint8Array, at: number): { path: string; end: number } {
  let j = at + 1;
  while (j < line.length && !isWhitespaceByte(line[j])) {
    j += line[j] === 0x5c && line[j + 1] === SPACE ? 2 : 1; // `\ ` is an escaped space
  }
  return { path: decoder.decode(line.subarray(at + 1, j)).replaceAll("\\ ", " "), end: j };
}

/** What {@linkcode InstructionScanner} found. */
export interface InstructionFigures {
  /** Bytes the agent is shown (after HTML comments are removed, and the memory limit). */
  bytes: number;
  /** True when at least one HTML comment was removed. */
  commentsHidden: boolean;
  /** True when the memory limit cut the text. */
  truncated: boolean;
}

/** How {@linkcode InstructionScanner} reads a file. */
export interface InstructionOptions {
  /** Called with each `@path` token's path outside code and comments, in order. */
  onImport?: (path: string) => void;
  /** Remove the frontmatter (line 1 a fence, through the next fence or EOF) before counting. */
  frontmatter?: boolean;
  /** Keep only the first `lines` lines / `bytes` bytes of the remaining text. */
  limit?: { lines: number; bytes: number };
}

/**
 * The text an auto-load shows of an instruction file: the file's bytes minus every HTML comment
 * (`<!--` through the next `-->`, across lines, or to EOF when never closed) outside fenced code
 * blocks and inline code spans; `@path` imports are reported outside code and comments. With
 * `frontmatter` and `limit`, the `MEMORY.md` rule: frontmatter removed, then the first `lines`
 * lines cut at whole lines to at most `bytes` bytes.
 *
 * @example
 * ```ts
 * import { InstructionScanner } from "./markdown.ts";
 * import { scanBytes } from "./measure.ts";
 * const text = new TextEncoder().encode("Use pnpm. <!-- internal -->\n`@not/this` @docs/a.md\n");
 * const imports: string[] = [];
 * scanBytes(new InstructionScanner({ onImport: (p) => imports.push(p) }), text);
 * // { bytes: 33, commentsHidden: true, truncated: false }; imports: ["docs/a.md"]
 * ```
 */
export class InstructionScanner extends HeadLineScanner<InstructionFigures> {
  readonly #options: InstructionOptions;
  #fence: { char: number; length: number } | undefined;
  #inComment = false;
  #commentsHidden = false;
  #frontmatter: "first" | "inside" | "done";
  // The kept text, by output line: bytes of whole lines taken, lines taken, the open line.
  #bytes = 0;
  #lines = 0;
  #open = 0;
  #truncated = false;

  /** Read with `options` (default: comments hidden, nothing else). */
  constructor(options: InstructionOptions = {}) {
    super();
    this.#options = options;
    this.#frontmatter = options.frontmatter ? "first" : "done";
  }

  protected line(head: Uint8Array, tail: number, fence: boolean, terminated: boolean): boolean {
    if (this.#frontmatter !== "done") {
      if (this.#frontmatter === "first" && !fence) this.#frontmatter = "done";
      else {
        if (this.#frontmatter === "inside" && fence) this.#frontmatter = "done";
        else this.#frontmatter = "inside";
        return false; // a frontmatter line: not shown, not counted
      }
    }
    const kept = this.#keptOf(head) + (this.#inComment ? 0 : tail);
    return this.#take(kept, terminated && !this.#inComment);
  }

  /** Bytes of `head` left after comments; updates the fence and comment state; reports imports. */
  #keptOf(line: Uint8Array): number {
    let i = 0;
    let removed = 0;
    if (this.#inComment) {
      const close = indexOfAscii(line, "-->", 0);
      if (close === -1) return 0;
      this.#inComment = false;
      removed = close + 3;
      i = close + 3;
    } else if (this.#fence !== undefined) {
      if (closesFence(line, this.#fence)) this.#fence = undefined;
      return line.length;
    } else {
      this.#fence = openingFence(line);
      if (this.#fence !== undefined) return line.length;
    }
    while (i < line.length) {
      const b = line[i];
      if (b === BACKTICK) {
        let run = i;
        while (line[run] === BACKTICK) run++;
        const end = codeSpanEnd(line, i, run - i);
        i = end === -1 ? run : end; // an unmatched run is literal text
      } else if (b === 0x3c && startsWithAscii(line, i, "<!--")) {
        this.#commentsHidden = true;
        const close = indexOfAscii(line, "-->", i + 4);
        if (close === -1) {
          this.#inComment = true;
          return i - removed;
        }
        removed += close + 3 - i;
        i = close + 3;
      } else if (b === 0x40 && (i === 0 || isWhitespaceByte(line[i - 1]))) {
        const token = importToken(line, i);
        this.#options.onImport?.(token.path);
        i = token.end;
      } else {
        i++;
      }
    }
    return line.length - removed;
  }

  /** Add one source line's kept bytes to the output; true once the memory limit cut the text. */
  #take(kept: number, newline: boolean): boolean {
    const limit = this.#options.limit;
    if (limit === undefined) {
      this.#bytes += kept + (newline ? 1 : 0);
      return false;
    }
    this.#open += kept;
    if (!newline) return false;
    const next = this.#bytes + this.#open + 1;
    this.#open = 0;
    if (this.#lines >= limit.lines || next > limit.bytes) {
      this.#truncate(limit.bytes, next);
      return true;
    }
    this.#bytes = next;
    this.#lines++;
    return false;
  }

  #truncate(maxBytes: number, wanted: number): void {
    this.#truncated = true;
    // Whole lines only, unless not even the first line fits: then it is cut at the byte limit.
    if (this.#lines === 0 && wanted > maxBytes) this.#bytes = maxBytes;
  }

  protected result(): InstructionFigures {
    const limit = this.#options.limit;
    if (limit !== undefined && !this.#truncated && this.#open > 0) {
      const next = this.#bytes + this.#open;
      if (this.#lines >= limit.lines || next > limit.bytes) this.#truncate(limit.bytes, next);
      else this.#bytes = next;
      this.#open = 0;
    }
    return {
      bytes: this.#bytes,
      commentsHidden: this.#commentsHidden,
      truncated: this.#truncated,
    };
  }
}
