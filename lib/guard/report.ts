/**
 * Where guard operations print. Operations emit their contract lines as they go (stdout results,
 * stderr refusals), so the interleaving a caller sees is the documented one. A line is a
 * {@linkcode Text}: the console prints every name in it safely (`references/output.md#printed-names`),
 * a collecting reporter keeps the raw text.
 *
 * @module
 */

import { writeErr, writeOut } from "../_cli/output.ts";
import { plain, printed, splitLines, type Text } from "../text.ts";

/** A sink for the two output streams of a guard operation. */
export interface Reporter {
  /** Print one result line on stdout. */
  out(line: Text): void;
  /** Print one line (or several, `\n`-separated) on stderr. */
  err(line: Text): void;
}

/** Prints to the process's stdout and stderr (synchronous; a failed write throws `OutputError`). */
export const consoleReporter: Reporter = {
  out: (line) => writeOut(printed(line)),
  err: (line) => writeErr(printed(line)),
};

/** One line an operation printed. */
export interface ReportedLine {
  /** The stream it went to. */
  stream: "stdout" | "stderr";
  /** The line as raw text (names unescaped), without its `\n`. */
  text: string;
}

/** A reporter that keeps every line in order, for library callers and tests. */
export interface CollectingReporter extends Reporter {
  /** Every line so far, in print order. */
  readonly lines: ReportedLine[];
}

/**
 * Create a {@linkcode CollectingReporter}.
 *
 * @example
 * ```ts ignore
 * import { collectingReporter, snapshot } from "../../mod.ts";
 * const reporter = collectingReporter();
 * snapshot({ roots, files: ["CLAUDE.md"], scriptPath }, reporter);
 * reporter.lines.find((l) => l.text.startsWith("RUN_DIR: "));
 * ```
 */
export function collectingReporter(): CollectingReporter {
  const lines: ReportedLine[] = [];
  return {
    lines,
    out: (line) => {
      for (const part of splitLines(line)) lines.push({ stream: "stdout", text: plain(part) });
    },
    err: (line) => {
      for (const part of splitLines(line)) lines.push({ stream: "stderr", text: plain(part) });
    },
  };
}

/** A reporter that prints nothing. */
export const silentReporter: Reporter = { out: () => {}, err: () => {} };
