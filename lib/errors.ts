/**
 * The failures ctxkit reports, as a small class hierarchy: each class is one kind of failure a
 * caller may handle, carries its data as fields and the exit code the command line uses. Messages
 * are {@linkcode Text}s, so the command line prints every name in them safely; `message` is the raw
 * text for library callers. Each tool adds its own kinds (`lib/guard/errors.ts`,
 * `lib/prose/errors.ts`); its `cli.ts` is the one place that formats them.
 *
 * @example
 * ```ts
 * import { CtxkitError, UsageError } from "./errors.ts";
 * import { text } from "./text.ts";
 * try {
 *   throw new UsageError(text`unknown option: ${"--x"}`);
 * } catch (e) {
 *   if (e instanceof CtxkitError) console.log(e.exitCode, e.message); // 2 "unknown option: --x"
 * }
 * ```
 *
 * @module
 */

import { plain, type Text } from "./text.ts";

/** Base class of every failure ctxkit reports on purpose. */
export class CtxkitError extends Error {
  /** The exit code the command line ends with. */
  readonly exitCode: number;
  /** The message with its data marked, for safe printing. */
  readonly text: Text;

  /** Create a failure ending with `exitCode`; `message` names its data through `text`. */
  constructor(exitCode: number, message: Text, options?: ErrorOptions) {
    super(plain(message), options);
    this.name = new.target.name;
    this.exitCode = exitCode;
    this.text = message;
  }
}

/** Bad arguments or options: the command did nothing (exit 2). */
export class UsageError extends CtxkitError {
  /** Create the error. */
  constructor(message: Text) {
    super(2, message);
  }
}

/** The environment is unusable (`HOME` unset, a bad `CLAUDE_PROJECT_DIR`…): exit 2. */
export class EnvironmentError extends CtxkitError {
  /** The variable to fix. */
  readonly variable: string;
  /** Create the error for `variable`. */
  constructor(variable: string, message: Text) {
    super(2, message);
    this.variable = variable;
  }
}

/** Exit code of a failed write to stdout or stderr (sysexits' `EX_IOERR`). */
export const EXIT_OUTPUT_FAILED = 74;
/** Exit code of a write into a closed pipe: 128 + SIGPIPE, as the shell reports a killed writer. */
export const EXIT_BROKEN_PIPE = 141;

/**
 * Writing stdout or stderr failed (a full disk, an I/O error, a reader that went away). The
 * command stops at once: exit {@linkcode EXIT_BROKEN_PIPE} for a broken pipe, else
 * {@linkcode EXIT_OUTPUT_FAILED}. Rule: `references/output.md#write-failures`.
 *
 * Not a {@linkcode CtxkitError}: it is no failure of the command's work, so code that handles
 * the command's failures (a refusal, a rejected file) never mistakes it for one; only `runMain`
 * turns it into an exit code.
 */
export class OutputError extends Error {
  /** The exit code: 141 for a broken pipe, else 74. */
  readonly exitCode: number;
  /** The message as a line of text (names printed safely by the CLI). */
  readonly text: Text;
  /** The stream that failed. */
  readonly stream: "stdout" | "stderr";
  /** The OS error code (`EPIPE`, `ENOSPC`, `EBADF`…). */
  readonly code: string;
  /** Create the error. */
  constructor(stream: "stdout" | "stderr", code: string, message: Text) {
    super(plain(message));
    this.name = "OutputError";
    this.exitCode = code === "EPIPE" ? EXIT_BROKEN_PIPE : EXIT_OUTPUT_FAILED;
    this.text = message;
    this.stream = stream;
    this.code = code;
  }
}
