/**
 * text-guard `restore` (`references/context-guard.md#ownership-what-may-be-restored`): put the
 * snapshot back, all or nothing.
 *
 * @module
 */

import { fsyncDirectory } from "../../_fs/write.ts";
import { faultPoint } from "../../faults.ts";
import { dirname } from "../../paths.ts";
import { text } from "../../text.ts";
import { RestoreRefusedError } from "../errors.ts";
import { mayRestore, restoreFile } from "../ownership.ts";
import type { Reporter } from "../report.ts";
import { type ResolvedPath, textGuardRoot } from "../roots.ts";
import { snapshottedTarget, type StageFilesOptions } from "./common.ts";

/**
 * All or nothing: every file is checked first; unproven ownership of any is a
 * {@linkcode RestoreRefusedError} naming each refused file (exit 1), nothing written. Else each
 * file is restored in order (`RESTORED: <rel>`).
 */
export function stageRestore(options: StageFilesOptions, reporter: Reporter): ResolvedPath[] {
  const { runDir } = options;
  const root = textGuardRoot(options.projectDir);
  const targets = options.files.map((f) =>
    snapshottedTarget(f, root, runDir, (rel) => text`no snapshot for ${rel}`)
  );
  const refused = targets.filter((t) => !mayRestore(runDir, t.rel, t.abs));
  if (refused.length > 0) throw new RestoreRefusedError(refused.map((t) => t.rel));
  const dirs = new Set<string>();
  for (const t of targets) {
    faultPoint("stage.restore.between-files");
    restoreFile(runDir, t.rel, t.abs, false);
    dirs.add(dirname(t.abs));
    reporter.out(text`RESTORED: ${t.rel}`);
  }
  for (const d of dirs) fsyncDirectory(d);
  return targets;
}
