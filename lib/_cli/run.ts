/**
 * The exit contract every ctxkit script shares: {@linkcode runMain} turns whatever a command does
 * into an exit code and prints the contract line (`✅ EXIT:0` or `❌ FAILED EXIT:<rc>`) last on
 * stderr. `lib/` never exits the process; only `bin/*.ts` passes the code to `Deno.exit`.
 *
 * @module
 */

import { CtxkitError, OutputError } from "../errors.ts";
import {
  firstLine,
  isPermissionError,
  isSandboxRefusal,
  osReason,
  sandboxRefusedPath,
} from "../_fs/errors.ts";
import { printed, type Text, text } from "../text.ts";
import { writeErr } from "./output.ts";

/** The last stderr line for exit code `rc`: `✅ EXIT:0` or `❌ FAILED EXIT:<rc>`. */
export function exitLine(rc: number): string {
  return rc === 0 ? "✅ EXIT:0" : `❌ FAILED EXIT:${rc}`;
}

/** True unless the environment opts out of the exit line with `CTXKIT_EXIT_LINE=0`. */
export function exitLineEnabled(): boolean {
  try {
    return Deno.env.get("CTXKIT_EXIT_LINE") !== "0";
  } catch {
    return true; // no env permission: keep the contract line
  }
}

/** How one tool prints its failures on stderr: the one place its error lines are formatted. */
export interface ErrorFormat {
  /** The lines of a ctxkit failure (default: `❌ <message>`). */
  error?: (e: CtxkitError) => string[];
  /** The line of a missing Deno permission (exit 2). */
  permission?: (detail: string) => string;
  /** The line of any other, unexpected error (exit 1); never a stack trace. */
  internal?: (detail: string) => string;
}

/** The default rendering of a ctxkit failure: `❌ <message>`, names printed safely. */
export function errorLine(e: { readonly text: Text }): string {
  return `❌ ${printed(e.text)}`;
}

function tryWriteErr(...lines: string[]): void {
  try {
    writeErr(...lines);
  } catch { /* stderr itself is gone: the exit code still tells */ }
}

/**
 * Print the exit line and return the code to exit with: a run that succeeded but cannot say so
 * on stderr has failed (74, or 141 for a broken pipe); a failed run keeps its own code.
 */
function finish(rc: number): number {
  if (!exitLineEnabled()) return rc;
  try {
    writeErr(exitLine(rc));
    return rc;
  } catch (e) {
    return rc === 0 && e instanceof OutputError ? e.exitCode : rc;
  }
}

/**
 * Run a command and return the exit code the bin must exit with. Whatever happens, the last stderr
 * line is the exit contract (unless `CTXKIT_EXIT_LINE=0` or stderr itself failed — then a run that
 * would have exited 0 exits 74, or 141 for a broken pipe), so the bin must exit right after.
 *
 * @example
 * ```ts ignore
 * import { runMain } from "../lib/_cli/run.ts";
 * Deno.exit(await runMain(() => 0));
 * ```
 */
export async function runMain(
  main: () => number | Promise<number>,
  format: ErrorFormat = {},
): Promise<number> {
  let rc: number;
  try {
    rc = await main();
  } catch (e) {
    if (e instanceof OutputError) {
      rc = e.exitCode;
      if (e.stream === "stderr") return rc; // stderr is gone: nothing more can be said
      if (e.code !== "EPIPE") tryWriteErr(errorLine(e)); // a closed pipe is the reader's choice
    } else if (e instanceof CtxkitError) {
      rc = e.exitCode;
      tryWriteErr(...(format.error ?? ((x: CtxkitError) => [errorLine(x)]))(e));
    } else if (isSandboxRefusal(e)) {
      // A special path (`/proc/self/environ`…) no grant covers: a property of the path, named as
      // such — never advice to run with more permissions.
      rc = 2;
      tryWriteErr(`❌ ${printed(text`${sandboxRefusedPath(e) ?? "a path"}: ${osReason(e)}`)}`);
    } else if (isPermissionError(e)) {
      rc = 2;
      const detail = firstLine(e);
      tryWriteErr(format.permission?.(detail) ?? `❌ missing Deno permission: ${detail}`);
    } else {
      rc = 1;
      const detail = firstLine(e);
      tryWriteErr(format.internal?.(detail) ?? `❌ internal error: ${detail}`);
    }
  }
  rc = finish(rc);
  await settle();
  return rc;
}

/**
 * Let the runtime's event loop turn before the bin exits: Deno stores the V8 code cache of a
 * script it has just compiled on such a turn, and a script that exits without one is compiled
 * from scratch on every run (`references/startup.md#code-cache`). A dynamic import is the one
 * wait that always goes through the module loader's turn; an empty `data:` module needs no
 * permission and costs ≈ 0.15 ms.
 */
async function settle(): Promise<void> {
  try {
    await import(EMPTY_MODULE);
  } catch { /* a runtime without data: imports: the cache is only a speed-up */ }
}

/** A variable, not a literal: a bundler would inline a literal import and so skip the turn. */
const EMPTY_MODULE: string = "data:text/javascript,";
