/**
 * The failures `prose` stops on: one class carrying the code the CLI prints (`code=usage`,
 * `code=config`, `code=db`, `code=port-in-use`, `code=token`) and the field at fault, with a {@linkcode Text}
 * message. Environment problems are `EnvironmentError` (`lib/errors.ts`) with the variable as data.
 * The CLI formats both as `PROSE-ERROR: code=<code>[ field=<f>] <message>`
 * (`references/prose.md#errors`).
 *
 * @module
 */

import { CtxkitError } from "../errors.ts";
import type { Text } from "../text.ts";

/** The codes a thrown prose failure carries, with the exit code each ends with. */
const EXIT_CODES = { usage: 2, config: 2, db: 1, "port-in-use": 1, token: 1 } as const;

/** The code of a {@linkcode ProseError}. */
export type ProseErrorCode = keyof typeof EXIT_CODES;

/**
 * A prose failure: usage and config errors end with exit 2; the database, busy-port and token-file
 * failures of `prose serve` with exit 1.
 */
export class ProseError extends CtxkitError {
  /** What kind of failure (`code=` on the error line). */
  readonly code: ProseErrorCode;
  /** The option, config key or request field at fault. */
  readonly field: string | undefined;
  /** A line printed after the error line (the synopsis of `prose serve`). */
  readonly synopsis: string | undefined;

  /** Create the failure; its exit code follows from `code`. */
  constructor(
    code: ProseErrorCode,
    message: Text,
    options: { field?: string; synopsis?: string } = {},
  ) {
    super(EXIT_CODES[code], message);
    this.code = code;
    this.field = options.field;
    this.synopsis = options.synopsis;
  }
}
