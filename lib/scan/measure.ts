/**
 * Measurements on file *bytes* (never decoded text): rule scoping, an agent's `description:` size
 * and a hook file's payload estimate (`references/context-scan.md#measurement`).
 *
 * Each measurement is a {@linkcode LineScanner}: it is fed a file chunk by chunk, sees every line in
 * pieces (a line may span chunks, or be longer than any chunk), never holds a whole line, and says
 * when its result is settled so the reader can stop. The byte-array functions
 * ({@linkcode isPathScopedRule}, {@linkcode descriptionBytes}, {@linkcode hookEstimate}) are thin
 * wrappers that feed one chunk.
 *
 * A line is the bytes before a `\n`, plus a final unterminated run; a trailing `\n` adds no empty
 * line; `\r` is an ordinary byte. Whitespace is space, TAB, VT, FF and CR.
 *
 * @module
 */

const NL = 0x0a;
const DASH = 0x2d;

/** True for the scanner's whitespace bytes: space, TAB, VT, FF, CR. */
export function isWhitespaceByte(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0b || b === 0x0c || b === 0x0d;
}

/** The token proxy: `floor(bytes / 4)`. */
export function tokensOf(bytes: number): number {
  return Math.floor(bytes / 4);
}

/**
 * A line-oriented measurement fed chunk by chunk. Subclasses see each line as pieces
 * (`piece`, in order, none for an empty line) followed by `endLine` with the line's length; either
 * may return true once the result is settled, after which nothing more is fed.
 *
 * @example
 * ```ts
 * import { isPathScopedRule, RuleScopeScanner } from "./measure.ts";
 * const s = new RuleScopeScanner();
 * s.push(new TextEncoder().encode("---\npa")); // false: not settled yet
 * s.push(new TextEncoder().encode("ths: x\n")); // true: settled, stop reading
 * s.finish(); // true
 * ```
 */
export abstract class LineScanner<R> {
  #settled = false;
  #length = 0;

  /** True once the result is known: the rest of the input cannot change it. */
  get settled(): boolean {
    return this.#settled;
  }

  /** Feed the next chunk; returns {@linkcode settled}. */
  push(chunk: Uint8Array): boolean {
    let i = 0;
    while (!this.#settled && i < chunk.length) {
      const nl = chunk.indexOf(NL, i);
      const end = nl === -1 ? chunk.length : nl;
      if (end > i) {
        if (this.piece(chunk, i, end, this.#length)) {
          this.#settled = true;
          break;
        }
        this.#length += end - i;
      }
      if (nl === -1) break;
      if (this.endLine(this.#length, true)) this.#settled = true;
      this.#length = 0;
      i = nl + 1;
    }
    return this.#settled;
  }

  /** End of input (a final unterminated run is a line): the result. */
  finish(): R {
    if (!this.#settled && this.#length > 0) {
      this.#settled = this.endLine(this.#length, false);
      this.#length = 0;
    }
    return this.result();
  }

  /**
   * `chunk[start, end)` is the next piece of the current line (never empty, no `\n`); `offset` is
   * how many bytes of the line came before it. Return true when the result is settled.
   */
  protected abstract piece(chunk: Uint8Array, start: number, end: number, offset: number): boolean;
  /**
   * The current line ended after `length` bytes, with a `\n` (`terminated`) or at EOF. Return true
   * when the result is settled.
   */
  protected abstract endLine(length: number, terminated: boolean): boolean;
  /** The measurement's result so far. */
  protected abstract result(): R;
}

/** Feed `bytes` to `scanner` as one chunk and return its result. */
export function scanBytes<R>(scanner: LineScanner<R>, bytes: Uint8Array): R {
  scanner.push(bytes);
  return scanner.finish();
}

/**
 * Feed `bytes` to `scanner` in pieces of the given sizes (cycled), as a file reader would, and
 * return its result: how tests show a result does not depend on where the chunks split.
 *
 * @example
 * ```ts
 * import { HookScanner, scanChunks } from "./measure.ts";
 * scanChunks(new HookScanner(), new TextEncoder().encode("const AB = 12;\n"), [1, 3]); // 3
 * ```
 */
export function scanChunks<R>(scanner: LineScanner<R>, bytes: Uint8Array, sizes: number[]): R {
  for (let i = 0, k = 0; i < bytes.length; k++) {
    const n = Math.max(1, sizes[k % sizes.length]);
    if (scanner.push(bytes.subarray(i, i + n))) break;
    i += n;
  }
  return scanner.finish();
}

/** Streams one line against "`---` followed only by whitespace" (a frontmatter fence). */
export class FenceMatch {
  #state = 0; // dashes matched (0..3), 3 = fence so far; -1 = not a fence

  /** Start a new line. */
  reset(): void {
    this.#state = 0;
  }

  /** Feed the next piece of the line. */
  feed(chunk: Uint8Array, start: number, end: number): void {
    for (let i = start; i < end && this.#state !== -1; i++) {
      const b = chunk[i];
      if (this.#state < 3) this.#state = b === DASH ? this.#state + 1 : -1;
      else if (!isWhitespaceByte(b)) this.#state = -1;
    }
  }

  /** True when the line so far is a fence (final once the line has ended). */
  get matched(): boolean {
    return this.#state === 3;
  }

  /** True when the line can no longer be a fence. */
  get failed(): boolean {
    return this.#state === -1;
  }
}

/** Streams one line against an ASCII literal at its start. */
export class PrefixMatch {
  readonly #literal: string;
  #matched = 0; // bytes matched; -1 = mismatch

  /** Match lines against `literal` (ASCII). */
  constructor(literal: string) {
    this.#literal = literal;
  }

  /** Start a new line. */
  reset(): void {
    this.#matched = 0;
  }

  /** True once the whole literal has been seen at the line's start. */
  get complete(): boolean {
    return this.#matched === this.#literal.length;
  }

  /** True when the line does not start with the literal. */
  get failed(): boolean {
    return this.#matched === -1;
  }

  /**
   * Feed the next piece; returns the index in `chunk` right after the literal when it completes in
   * this piece, else -1.
   */
  feed(chunk: Uint8Array, start: number, end: number): number {
    const lit = this.#literal;
    if (this.#matched < 0 || this.#matched === lit.length) return -1;
    let i = start;
    while (this.#matched < lit.length && i < end) {
      if (chunk[i] !== lit.charCodeAt(this.#matched)) {
        this.#matched = -1;
        return -1;
      }
      this.#matched++;
      i++;
    }
    return this.#matched === lit.length ? i : -1;
  }
}

/**
 * Rule scoping (`references/context-scan.md#rule-scoping`): settled as soon as line 1 is not a
 * fence, a `paths:` line is found, or the closing fence is met — so only the frontmatter is read.
 */
export class RuleScopeScanner extends LineScanner<boolean> {
  #lines = 0;
  #scoped = false;
  readonly #fence = new FenceMatch();
  readonly #paths = new PrefixMatch("paths:");

  protected piece(chunk: Uint8Array, start: number, end: number): boolean {
    this.#fence.feed(chunk, start, end);
    if (this.#lines === 0) return this.#fence.failed; // line 1 is not a fence: unscoped
    if (this.#paths.feed(chunk, start, end) !== -1) {
      this.#scoped = true; // a fence never starts with `paths:`
      return true;
    }
    return false;
  }

  protected endLine(): boolean {
    this.#lines++;
    const fence = this.#fence.matched;
    this.#fence.reset();
    this.#paths.reset();
    return this.#lines === 1 ? !fence : fence;
  }

  protected result(): boolean {
    return this.#scoped;
  }
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
  return scanBytes(new RuleScopeScanner(), bytes);
}

const enum Desc {
  Prefix,
  Spaces,
  Inline,
  BlockStart,
}

/**
 * The agent description size (`references/context-scan.md#agent-description`): settled at the
 * end of an inline value, the end of a block, or a fence after line 1.
 */
export class DescriptionScanner extends LineScanner<number> {
  #lines = 0;
  #total = 0;
  #block = false;
  #mode = Desc.Prefix;
  #valueStart = 0;
  readonly #fence = new FenceMatch();
  readonly #prefix = new PrefixMatch("description:");

  protected piece(chunk: Uint8Array, start: number, end: number, offset: number): boolean {
    this.#fence.feed(chunk, start, end);
    if (this.#block) {
      // A block line is empty or whitespace-led; anything else (a fence too) ends the block.
      return offset === 0 && !isWhitespaceByte(chunk[start]);
    }
    let i = start;
    if (this.#mode === Desc.Prefix) {
      i = this.#prefix.feed(chunk, start, end);
      if (i === -1) return false;
      this.#mode = Desc.Spaces;
    }
    if (this.#mode === Desc.Spaces) {
      while (i < end && isWhitespaceByte(chunk[i])) i++;
      if (i < end) {
        const b = chunk[i];
        this.#mode = b === 0x7c || b === 0x3e ? Desc.BlockStart : Desc.Inline; // `|` or `>`
        this.#valueStart = offset + (i - start);
      }
    }
    return false;
  }

  protected endLine(length: number): boolean {
    this.#lines++;
    const fence = this.#fence.matched;
    const mode = this.#mode;
    this.#fence.reset();
    this.#prefix.reset();
    this.#mode = Desc.Prefix;
    if (this.#lines > 1 && fence) return true;
    if (this.#block) {
      this.#total += length + 1;
      return false;
    }
    if (mode === Desc.Inline || mode === Desc.Spaces) {
      // Inline: the bytes after the whitespace, +1 (an empty value counts 1).
      this.#total = (mode === Desc.Inline ? length - this.#valueStart : 0) + 1;
      return true;
    }
    if (mode === Desc.BlockStart) this.#block = true;
    return false;
  }

  protected result(): number {
    return this.#total;
  }
}

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
  return scanBytes(new DescriptionScanner(), bytes);
}

function isUpper(b: number): boolean {
  return b >= 0x41 && b <= 0x5a;
}

function isNameByte(b: number): boolean {
  return isUpper(b) || (b >= 0x30 && b <= 0x39) || b === 0x5f;
}

const enum Hook {
  Export,
  Const,
  Upper,
  Name,
  Equals,
  Value,
  Counting,
  Failed,
}

const EXPORT = "export ";
const CONST = "const ";
const EQUALS = " = ";

/**
 * The hook payload estimate (`references/context-scan.md#hook-estimate`), a per-line matcher of
 * `^(export )?const [A-Z][A-Z0-9_]+ = .`; reads the whole file.
 */
export class HookScanner extends LineScanner<number> {
  #total = 0;
  #state = Hook.Export;
  #k = 0; // bytes matched of the current literal, or name bytes after the first letter
  #valueStart = 0;
  #last = 0;

  protected piece(chunk: Uint8Array, start: number, end: number, offset: number): boolean {
    this.#last = chunk[end - 1];
    for (let i = start; i < end && this.#state < Hook.Counting; i++) {
      const b = chunk[i];
      switch (this.#state) {
        case Hook.Export:
          if (b === EXPORT.charCodeAt(this.#k)) {
            if (++this.#k === EXPORT.length) [this.#state, this.#k] = [Hook.Const, 0];
            break;
          }
          if (this.#k > 0) {
            this.#state = Hook.Failed; // started with `e`, so it cannot start with `const `
            break;
          }
          this.#state = Hook.Const;
          i--; // the same byte starts `const `
          break;
        case Hook.Const:
          if (b !== CONST.charCodeAt(this.#k)) this.#state = Hook.Failed;
          else if (++this.#k === CONST.length) this.#state = Hook.Upper;
          break;
        case Hook.Upper:
          [this.#state, this.#k] = isUpper(b) ? [Hook.Name, 0] : [Hook.Failed, 0];
          break;
        case Hook.Name:
          if (isNameByte(b)) this.#k++;
          else if (this.#k === 0) this.#state = Hook.Failed; // names are at least two characters
          else {
            [this.#state, this.#k] = [Hook.Equals, 0];
            i--; // the same byte starts ` = `
          }
          break;
        case Hook.Equals:
          if (b !== EQUALS.charCodeAt(this.#k)) this.#state = Hook.Failed;
          else if (++this.#k === EQUALS.length) this.#state = Hook.Value;
          break;
        case Hook.Value:
          this.#state = Hook.Counting;
          this.#valueStart = offset + (i - start);
          break;
      }
    }
    return false;
  }

  protected endLine(length: number): boolean {
    if (this.#state === Hook.Counting) {
      // The value after `= `, one trailing `;` dropped, +1.
      this.#total += length - this.#valueStart - (this.#last === 0x3b ? 1 : 0) + 1;
    }
    this.#state = Hook.Export;
    this.#k = 0;
    return false;
  }

  protected result(): number {
    return this.#total;
  }
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
  return scanBytes(new HookScanner(), bytes);
}
