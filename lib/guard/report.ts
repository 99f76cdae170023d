/**
 * Where guard operations print. Operations emit their contract lines as they go (stdout results,
 * stderr refusals) so the interleaving a caller sees is the one the specification fixes; the bins
 * pass {@linkcode consoleReporter}, library callers may collect or drop the lines.
 *
 * @module
 */

import { writeErr, writeOut } from "../io.ts";

/** A sink for the two output streams of a guard operation. */
export interface Reporter {
  /** Print one result line on stdout. */
  out(line: string): void;
  /** Print one line (or several, `\n`-separated) on stderr. */
  err(line: string): void;
}

/** Prints straight to the process's stdout and stderr (synchronous, complete writes). */
export const consoleReporter: Reporter = {
  out: (line) => writeOut(line),
  err: (line) => writeErr(line),
};

/** One line an operation printed. */
export interface ReportedLine {
  /** The stream it went to. */
  stream: "stdout" | "stderr";
  /** The line, without its `\n`. */
  text: string;
}

/** A reporter that keeps every line in order, for library callers and tests. */
export interface CollectingReporter extends Reporter {
  /** Every line so far, in print order. */
  readonly lines: ReportedLine[];
}

/** Create a {@linkcode CollectingReporter}. */
export function collectingReporter(): CollectingReporter {
  const lines: ReportedLine[] = [];
  return {
    lines,
    out: (text) => lines.push({ stream: "stdout", text }),
    err: (text) => {
      for (const part of text.split("\n")) lines.push({ stream: "stderr", text: part });
    },
  };
}

/** A reporter that prints nothing (benchmarks). */
export const silentReporter: Reporter = { out: () => {}, err: () => {} };
