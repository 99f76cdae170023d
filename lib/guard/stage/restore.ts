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
import { manifestLinks } from "../manifest.ts";
import { alreadyRestored, restoreFile, restoreVerdict } from "../ownership.ts";
import type { Reporter } from "../report.ts";
import { type ResolvedPath, textGuardRoot } from "../roots.ts";
import { requireRunDir } from "../run_dir.ts";
import { snapshottedTarget, type StageFilesOptions } from "./common.ts";

/** Inputs of {@linkcode stageRestore}. */
export interface StageRestoreOptions extends StageFilesOptions {
  /** The mode each rel had at snapshot time (context-guard's manifest), restored with it. */
  modes?: ReadonlyMap<string, number>;
  /** Hashes of the snapshot copies the caller has just verified (saves reading them again). */
  copyHashes?: ReadonlyMap<string, string>;
}

/**
 * All or nothing: every file is checked first; unproven ownership of any is a
 * {@linkcode RestoreRefusedError} naming each refused file (exit 1), nothing written. Else each
 * file is restored in order (`RESTORED: <rel>`); a file that already has its snapshot bytes (and
 * recorded mode) is left untouched, its line printed all the same.
 */
export function stageRestore(options: StageRestoreOptions, reporter: Reporter): ResolvedPath[] {
  const { runDir } = options;
  requireRunDir(runDir);
  const root = textGuardRoot(options.projectDir, options.rootName);
  const links = manifestLinks(runDir);
  const targets = options.files.map((f) =>
    snapshottedTarget(
      f,
      root,
      runDir,
      (rel) => text`no snapshot for ${rel}`,
      options.rootName,
      links,
    )
  );
  const verdicts = targets.map((t) =>
    restoreVerdict(runDir, t.rel, t.abs, options.copyHashes?.get(t.rel))
  );
  const refused = targets.filter((_, i) => !verdicts[i].allowed);
  if (refused.length > 0) throw new RestoreRefusedError(refused.map((t) => t.rel));
  const dirs = new Set<string>();
  targets.forEach((t, i) => {
    faultPoint("stage.restore.between-files");
    const mode = options.modes?.get(t.rel);
    if (!alreadyRestored(t.abs, verdicts[i].original, mode)) {
      restoreFile(runDir, t.rel, t.abs, false, mode);
      dirs.add(dirname(t.abs));
    }
    reporter.out(text`RESTORED: ${t.rel}`);
  });
  for (const d of dirs) fsyncDirectory(d);
  return targets;
}
