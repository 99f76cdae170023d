/**
 * `snapshot --quiet` (`references/context-guard.md#snapshot`): the summary lines only. A snapshot of
 * 743 files prints 743 rel lines into the agent's context; quiet drops them, and the file list of
 * the `SNAPSHOT-ONLY:` line, keeping every line a caller branches on (`ROOT:`, `SNAPSHOT: <n> files`,
 * `RUN_DIR:`, `MANIFEST:`, `GIT-COVERED:`, `PRUNED:`, the warnings) as it is.
 *
 * @module
 */

import { splitLines, text } from "../text.ts";
import type { Reporter } from "./report.ts";

/** `reporter` without a snapshot's per-file lines. */
export function quietSnapshot(reporter: Reporter): Reporter {
  return {
    err: (line) => reporter.err(line),
    out: (line) => {
      for (const part of splitLines(line)) {
        const [first, second] = part.strings;
        if (part.strings.length === 2 && first === "  " && second === "") continue; // a rel line
        if (first === "SNAPSHOT-ONLY: " && second?.startsWith(" untracked/git-ignored target(s)")) {
          reporter.out(
            text`SNAPSHOT-ONLY: ${
              part.values[0]
            } untracked/git-ignored target(s), no git recovery - the manifest is the only one`,
          );
          continue;
        }
        reporter.out(part);
      }
    },
  };
}
