/**
 * context-guard `restore --dry-run` (`references/context-guard.md#restore-dry-run`): what a restore
 * would do, judged exactly as the restore judges it — the run dirs it selects, each file it would
 * overwrite (keeping the current bytes in `displaced/` where an override allows it), create, leave
 * as it is or refuse, and the ratchet state it would put back or delete. Nothing is written.
 *
 * @module
 */

import { joinRoot } from "../../paths.ts";
import { text } from "../../text.ts";
import { displacedRoot } from "../displace.ts";
import { alreadyRestored, judgeRestore } from "../ownership.ts";
import type { Reporter } from "../report.ts";
import { stateUndo } from "../run_state.ts";
import { restoreOverride } from "../trust.ts";
import { requireForceTargets, type RestoreOptions, restoreRunDirs } from "./restore.ts";
import { selectCopies } from "./restore_run.ts";

/** What a dry run found for one run dir. */
export type PlanVerdict = "ok" | "refused" | "damaged";

/** Outcome of {@linkcode planRestore}. */
export interface RestorePlan {
  /** Each selected run dir and its verdict, in order. */
  runs: Array<{ runDir: string; verdict: PlanVerdict }>;
  /** What the restore itself would exit with: 0 when every run dir would be restored, else 1. */
  exitCode: number;
}

/** Plan one run dir: its lines, and its verdict. */
function planRunDir(
  runDir: string,
  files: readonly string[],
  force: boolean,
  reporter: Reporter,
): PlanVerdict {
  reporter.out(text`DRY_RUN: ${runDir}`);
  const { manifest, root, rels, copyHashes, damaged } = selectCopies(runDir, files, reporter);
  if (damaged) {
    reporter.out(text`DRY_RUN_RESULT: damaged (${runDir})`);
    return "damaged";
  }
  const modes = new Map(manifest.files.map((f) => [f.path, f.mode]));
  const override = restoreOverride(runDir, force);
  let refused = false;
  for (const rel of rels) {
    const abs = joinRoot(root, rel);
    const judged = judgeRestore(runDir, rel, abs, copyHashes.get(rel), override);
    if (!judged.allowed) {
      refused = true;
      reporter.out(text`WOULD_REFUSE: ${abs} (current bytes lack matching draft ownership)`);
    } else if (alreadyRestored(abs, judged.original, modes.get(rel))) {
      reporter.out(text`WOULD_KEEP: ${abs} (already at its snapshot bytes)`);
    } else if (judged.current.state === "MISSING") {
      reporter.out(text`WOULD_CREATE: ${abs}`);
    } else if (judged.displace) {
      reporter.out(
        text`WOULD_OVERWRITE: ${abs} (current bytes kept in ${`${displacedRoot(runDir)}/`})`,
      );
    } else {
      reporter.out(text`WOULD_OVERWRITE: ${abs}`);
    }
  }
  // A whole run restored also puts its ratchet state back (references/context-guard.md#ratchet-state).
  const undo = files.length === 0 && !refused ? stateUndo(runDir, root) : undefined;
  if (undo?.action === "keep") {
    reporter.out(
      undo.linked === undefined
        ? text`WOULD_KEEP: ${undo.path} (changed since this run wrote it)`
        : text`WOULD_KEEP: ${undo.path} (refusing to write through ${undo.linked})`,
    );
  } else if (undo?.action === "restore") {
    reporter.out(text`WOULD_OVERWRITE: ${undo.path}`);
  } else if (undo?.action === "remove") {
    reporter.out(text`WOULD_DELETE: ${undo.path} (the ratchet state this run wrote)`);
  }
  const verdict = refused ? "refused" : "ok";
  reporter.out(text`DRY_RUN_RESULT: ${verdict} (${runDir})`);
  return verdict;
}

/**
 * context-guard `restore --dry-run`: the run dirs `restore` would select, and per file what it
 * would do; exit 1 when the restore would refuse or find a damaged snapshot, as it would.
 */
export function planRestore(options: RestoreOptions, reporter: Reporter): RestorePlan {
  requireForceTargets(options);
  const runs = restoreRunDirs(options, reporter).map((runDir) => ({
    runDir,
    verdict: planRunDir(runDir, options.files, options.force ?? false, reporter),
  }));
  return { runs, exitCode: runs.every((r) => r.verdict === "ok") ? 0 : 1 };
}
