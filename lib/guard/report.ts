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

/**
 * A reporter that keeps every line in order, for library callers and tests: each with the stream
 * it went to and its raw text (names unescaped, no `\n`).
 */
export type CollectingReporter = Reporter & {
  /** Every line so far, in print order. */
  readonly lines: Array<{ stream: "stdout" | "stderr"; text: string }>;
};

/** One line a {@linkcode CollectingReporter} kept. */
export type ReportedLine = CollectingReporter["lines"][number];

/**
 * Create a reporter that collects every line instead of printing it.
 *
 * @example
 * ```ts ignore
 * import { collectingReporter, snapshot } from "../../mod.ts";
 * const reporter = collectingReporter();
 * await snapshot({ roots, files: ["CLAUDE.md"], scriptPath }, reporter);
 * reporter.lines.find((l) => l.text.startsWith("RUN_DIR: "));
 * ```
 */
export function collectingReporter(): Reporter & {
  readonly lines: Array<{ stream: "stdout" | "stderr"; text: string }>;
} {
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
