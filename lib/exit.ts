/**
 * TRANSITION(issue 11): the old exit API over the new one (`lib/errors.ts`, `lib/_cli/run.ts`),
 * kept only until every tool is migrated; then removed.
 *
 * @module
 */

import { CtxkitError as Base } from "./errors.ts";
import { errorLine, runMain as run } from "./_cli/run.ts";
export { exitLine, exitLineEnabled } from "./_cli/run.ts";
export { isPermissionError } from "./_fs/errors.ts";

/** An error whose message is already formatted for the CLI (legacy). */
export class CtxkitError extends Base {
  /** Create the error; `message` is printed verbatim. */
  constructor(exitCode: number, message: string) {
    super(exitCode, { strings: [message], values: [] });
  }
}

/** Legacy `die`: exit 2 with a pre-formatted line. */
export function die(message: string): never {
  throw new CtxkitError(2, message);
}

/** Legacy options. */
export interface MainOptions {
  /** Line printed for a missing Deno permission (exit 2). */
  permissionLine?: (detail: string) => string;
  /** Line printed for any other unexpected error (exit 1). */
  internalLine?: (detail: string) => string;
}

/** Legacy runMain. */
export function runMain(
  main: () => number | Promise<number>,
  options: MainOptions = {},
): Promise<number> {
  return run(main, {
    error: (e) =>
      e instanceof CtxkitError ? (e.message === "" ? [] : e.message.split("\n")) : [errorLine(e)],
    permission: options.permissionLine,
    internal: options.internalLine,
  });
}
