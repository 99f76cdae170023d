/**
 * text-guard `restore` (`references/context-guard.md#ownership-what-may-be-restored`): put the
 * snapshot back, all or nothing.
 *
 * @module
 */

import { fsyncDirectories, type PendingWrite, syncPendingWrites } from "../../_fs/write.ts";
import { faultPoint } from "../../faults.ts";
import { dirname } from "../../paths.ts";
import { text } from "../../text.ts";
import { RestoreRefusedError } from "../errors.ts";
import { manifestLinkLookup } from "../manifest.ts";
import { alreadyRestored, prepareRestore, restoreVerdict } from "../ownership.ts";
import type { Reporter } from "../report.ts";
import { type PhysicalDirs, type ResolvedPath, textGuardRoot } from "../roots.ts";
import { requireRunDir } from "../run_dir.ts";
import { snapshottedTarget, type StageFilesOptions } from "./common.ts";

/** Inputs of {@linkcode stageRestore}. */
export interface StageRestoreOptions extends StageFilesOptions {
  /** The mode each rel had at snapshot time (context-guard's manifest), restored with it. */
  modes?: ReadonlyMap<string, number>;
  /** Hashes of the snapshot copies the caller has just verified (saves reading them again). */
  copyHashes?: ReadonlyMap<string, string>;
  /** The manifest's link targets, from a caller that has just read it (else read here). */
  links?: ReadonlyMap<string, string>;
}

/**
 * All or nothing: every file is checked first; unproven ownership of any is a
 * {@linkcode RestoreRefusedError} naming each refused file (exit 1), nothing written. Else every
 * replacement is written beside its file and synced (a failure there replaces nothing), then each
 * file is put in place in order (`RESTORED: <rel>`); a file that already has its snapshot bytes
 * (and recorded mode) is left untouched, its line printed all the same.
 */
export async function stageRestore(
  options: StageRestoreOptions,
  reporter: Reporter,
): Promise<ResolvedPath[]> {
  const { runDir } = options;
  requireRunDir(runDir);
  const root = textGuardRoot(options.projectDir, options.rootName);
  const links = options.links === undefined ? manifestLinkLookup(runDir) : () => options.links;
  const physicalDirs: PhysicalDirs = new Map();
  const targets = options.files.map((f) =>
    snapshottedTarget(
      f,
      root,
      runDir,
      (rel) => text`no snapshot for ${rel}`,
      options.rootName,
      links,
      physicalDirs,
    )
  );
  const verdicts = targets.map((t) =>
    restoreVerdict(runDir, t.rel, t.abs, options.copyHashes?.get(t.rel))
  );
  const refused = targets.filter((_, i) => !verdicts[i].allowed);
  if (refused.length > 0) throw new RestoreRefusedError(refused.map((t) => t.rel));
  const pending: Array<PendingWrite | undefined> = [];
  try {
    targets.forEach((t, i) => {
      const mode = options.modes?.get(t.rel);
      pending.push(
        alreadyRestored(t.abs, verdicts[i].original, mode)
          ? undefined
          : prepareRestore(runDir, t.rel, t.abs, false, mode),
      );
    });
    await syncPendingWrites(pending);
  } catch (e) {
    for (const p of pending) p?.abort();
    throw e;
  }
  const dirs = new Set<string>();
  try {
    targets.forEach((t, i) => {
      faultPoint("stage.restore.between-files");
      const p = pending[i];
      if (p !== undefined) {
        p.commit();
        dirs.add(dirname(t.abs));
      }
      reporter.out(text`RESTORED: ${t.rel}`);
    });
  } finally {
    for (const p of pending) p?.abort(); // the ones a failure left uncommitted
  }
  await fsyncDirectories(dirs);
  return targets;
}
