/**
 * The exit-code contract shared by every ctxkit script.
 *
 * `lib/` never exits the process: it throws {@linkcode CtxkitError}, which carries the exit code and
 * the line(s) to print on stderr. {@linkcode runMain} turns any outcome into an exit code and prints
 * the final exit-contract line (`✅ EXIT:0` or `❌ FAILED EXIT:<rc>`) last on stderr; only
 * `bin/*.ts` passes that code to `Deno.exit`.
 *
 * @module
 */

import { writeErr } from "./io.ts";

/**
 * An error that ends a command with a defined exit code.
 *
 * `message` is printed verbatim on stderr (one line per `\n`-separated part); an empty message prints
 * nothing.
 *
 * @example
 * ```ts
 * import { CtxkitError } from "./exit.ts";
 * throw new CtxkitError(2, "❌ --root needs a value");
 * ```
 */
export class CtxkitError extends Error {
  /** Process exit code the bin must use. */
  readonly exitCode: number;
  /** Create an error that ends the command with `exitCode` after printing `message` on stderr. */
  constructor(exitCode: number, message: string) {
    super(message);
    this.name = "CtxkitError";
    this.exitCode = exitCode;
  }
}

/** Shorthand for the usage/state error every tool reports with exit 2 ("dies with M"). */
export function die(message: string): never {
  throw new CtxkitError(2, message);
}

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

/** How a bin renders errors that are not {@linkcode CtxkitError}s. */
export interface MainOptions {
  /** Line printed for a missing Deno permission (exit 2). */
  permissionLine?: (detail: string) => string;
  /** Line printed for any other unexpected error (exit 1). Never a stack trace. */
  internalLine?: (detail: string) => string;
}

/** True when `e` is Deno's missing-permission error (`NotCapable`, or `PermissionDenied` on old Deno). */
export function isPermissionError(e: unknown): boolean {
  const errors = Deno.errors as unknown as Record<string, unknown>;
  for (const name of ["NotCapable", "PermissionDenied"]) {
    const ctor = errors[name];
    if (typeof ctor === "function" && e instanceof (ctor as new () => Error)) {
      // PermissionDenied is also the OS EACCES error; Deno names missing grants "Requires … access".
      return name === "NotCapable" ||
        /Requires .* access|--allow-/.test(String((e as Error).message));
    }
  }
  return false;
}

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0].trim();
}

/**
 * Run a bin's main function and return the exit code the bin must exit with.
 *
 * The function returns its exit code (or throws a {@linkcode CtxkitError}). Whatever happens, the last
 * stderr line is the exit contract (unless `CTXKIT_EXIT_LINE=0`), so the caller must exit right
 * after, printing nothing more.
 *
 * @example
 * ```ts ignore
 * import { runMain } from "../lib/exit.ts";
 * Deno.exit(await runMain(async () => {
 *   console.log("hello");
 *   return 0;
 * }));
 * ```
 */
export async function runMain(
  main: () => number | Promise<number>,
  options: MainOptions = {},
): Promise<number> {
  let rc: number;
  try {
    rc = await main();
  } catch (e) {
    if (e instanceof CtxkitError) {
      if (e.message !== "") writeErr(e.message);
      rc = e.exitCode;
    } else if (isPermissionError(e)) {
      const detail = firstLine(e);
      writeErr(options.permissionLine?.(detail) ?? `❌ missing Deno permission: ${detail}`);
      rc = 2;
    } else {
      const detail = firstLine(e);
      writeErr(options.internalLine?.(detail) ?? `❌ internal error: ${detail}`);
      rc = 1;
    }
  }
  if (exitLineEnabled()) writeErr(exitLine(rc));
  return rc;
}
