/**
 * A left-to-right argument cursor: the one parsing primitive every tool's `cli.ts` uses.
 *
 * Options and operands may mix; a value option takes the next argument verbatim even when it
 * starts with `-` (as the original scripts did); a bare `--` ends the options, so every argument
 * after it is an operand (a file literally named `--run-dir` can be passed after it).
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { text } from "../text.ts";

/**
 * Walks an argument list once, in order.
 *
 * @example
 * ```ts
 * import { ArgCursor } from "./args.ts";
 * const args = new ArgCursor(["--root", "--global", "--", "--run-dir"]);
 * args.next(); // "--root"
 * args.value(); // "--global" — taken verbatim as the value
 * args.next(); // "--run-dir", and args.operand is true: it came after `--`
 * args.done; // true
 * ```
 */
export class ArgCursor {
  readonly #args: readonly string[];
  #index = 0;
  #ended = false;
  #operand = false;

  /** Start before the first of `args`. */
  constructor(args: readonly string[]) {
    this.#args = args;
  }

  #skipEnd(): void {
    if (!this.#ended && this.#args[this.#index] === "--") {
      this.#ended = true;
      this.#index++;
    }
  }

  /** True when every argument has been taken. */
  get done(): boolean {
    this.#skipEnd();
    return this.#index >= this.#args.length;
  }

  /** True when the argument last returned by {@linkcode next} came after `--`: an operand. */
  get operand(): boolean {
    return this.#operand;
  }

  /** Take the next argument (call only when not {@linkcode done}); a first `--` is skipped. */
  next(): string {
    this.#skipEnd();
    this.#operand = this.#ended;
    return this.#args[this.#index++];
  }

  /** Take the next argument verbatim as an option's value; `undefined` when none is left. */
  value(): string | undefined {
    return this.#index >= this.#args.length ? undefined : this.#args[this.#index++];
  }

  /**
   * Take the next argument as `option`'s value; a missing or empty value is a
   * {@linkcode UsageError} `<option> needs a value`.
   */
  requireValue(option: string): string {
    const value = this.value();
    if (value === undefined || value === "") throw new UsageError(text`${option} needs a value`);
    return value;
  }

  /** The arguments not yet taken, verbatim. */
  rest(): string[] {
    return this.#args.slice(this.#index);
  }
}
