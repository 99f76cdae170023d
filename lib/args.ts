/**
 * A left-to-right argument cursor: the one parsing primitive the bins share.
 *
 * The originals scan arguments in order, let options and operands mix, and let a value option take
 * the next argument verbatim even when it starts with `-`. Each tool keeps its own exact error
 * messages; this cursor only walks.
 *
 * @module
 */

import { die } from "./exit.ts";

/**
 * Walks an argument list once, in order.
 *
 * @example
 * ```ts
 * import { ArgCursor } from "./args.ts";
 * const args = new ArgCursor(["--root", "--global"]);
 * args.next(); // "--root"
 * args.value(); // "--global" — taken verbatim as the value
 * args.done; // true
 * ```
 */
export class ArgCursor {
  readonly #args: readonly string[];
  #index = 0;

  /** Start before the first of `args`. */
  constructor(args: readonly string[]) {
    this.#args = args;
  }

  /** True when every argument has been taken. */
  get done(): boolean {
    return this.#index >= this.#args.length;
  }

  /** Take the next argument (call only when not {@linkcode done}). */
  next(): string {
    return this.#args[this.#index++];
  }

  /** Take the next argument verbatim as an option's value; `undefined` when none is left. */
  value(): string | undefined {
    return this.done ? undefined : this.#args[this.#index++];
  }

  /**
   * Take the next argument as `option`'s value; a missing or empty value dies with
   * `❌ <option> needs a value` (exit 2), the rule the scan and guard tools share.
   */
  requireValue(option: string): string {
    const value = this.value();
    if (value === undefined || value === "") die(`❌ ${option} needs a value`);
    return value;
  }

  /** The arguments not yet taken. */
  rest(): string[] {
    return this.#args.slice(this.#index);
  }
}
