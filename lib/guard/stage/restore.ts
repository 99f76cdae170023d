/**
 * text-guard `restore` (`references/context-guard.md#ownership-what-may-be-restored`): put the
 * snapshot back, all or nothing until the first rename, and each rename preceded by a fresh
 * ownership check of its file.
 *
 * @module
 */

import { LinkedComponentError, makeDirsBelow, parentsOf, removeMadeDirs } from "../../_fs/dirs.ts";
import { isDirectoryFollow } from "../../_fs/inspect.ts";
import {
  fsyncDirectories,
  fsyncFiles,
  type PendingWrite,
  syncPendingWrites,
} from "../../_fs/write.ts";
import { CtxkitError } from "../../errors.ts";
import { faultPoint } from "../../faults.ts";
import { dirname } from "../../paths.ts";
import { text } from "../../text.ts";
import {
  asFileSystemError,
  PathRefusedError,
  RestoreRefusedError,
  RestoreStoppedError,
} from "../errors.ts";
import { manifestLinkLookup } from "../manifest.ts";
import {
  alreadyRestored,
  currentState,
  judgeRestore,
  prepareRestore,
  recheckRestore,
} from "../ownership.ts";
import { Displacement, reportDisplaced } from "../displace.ts";
import { refusalHint } from "../refusal.ts";
import type { Reporter } from "../report.ts";
import { restoreOverride } from "../trust.ts";
import { type PhysicalDirs, type ResolvedPath, textGuardRoot } from "../roots.ts";
import { requireRunDir, snapshotCopyPath } from "../run_dir.ts";
import { snapshottedTarget, type StageFilesOptions } from "./common.ts";

/** Inputs of {@linkcode stageRestore}. */
export interface StageRestoreOptions extends StageFilesOptions {
  /** The mode each rel had at snapshot time (context-guard's manifest), restored with it. */
  modes?: ReadonlyMap<string, number>;
  /** Hashes of the snapshot copies the caller has just verified (saves reading them again). */
  copyHashes?: ReadonlyMap<string, string>;
  /** The manifest's link targets, from a caller that has just read it (else read here). */
  links?: ReadonlyMap<string, string>;
  /**
   * `--force`: restore every file whatever its ownership proof says, keeping current bytes in
   * `displaced/` (`references/context-guard.md#snapshot-trust`).
   */
  force?: boolean;
}

/**
 * Every file is checked first; unproven ownership of any is a {@linkcode RestoreRefusedError}
 * naming each refused file (exit 1), nothing written. Else missing parent directories are made
 * inside the root (never through a link), every replacement is written beside its file and synced
 * (a failure there replaces nothing and removes the directories made), then each file is put in
 * place in order (`RESTORED: <rel>`), each rename preceded by a fresh ownership check of that file.
 * A file that already has its snapshot bytes (and recorded mode) is left untouched, its line
 * printed all the same. A check or a rename failing part way is a {@linkcode RestoreStoppedError}
 * naming the files already restored; nothing after it is touched.
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
      true,
    )
  );
  const copyHash = (rel: string) =>
    options.copyHashes?.get(rel) ?? currentState(snapshotCopyPath(runDir, rel));
  const hashes = targets.map((t) => copyHash(t.rel));
  const override = restoreOverride(runDir, options.force);
  const judged = targets.map((t, i) => judgeRestore(runDir, t.rel, t.abs, hashes[i], override));
  const refused = targets.filter((_, i) => !judged[i].allowed);
  if (refused.length > 0) {
    throw new RestoreRefusedError(
      refused.map((t) => t.rel),
      refused.map((t) => refusalHint(runDir, t, root)),
    );
  }
  // Bytes no proof allows replacing are kept first (a trust run, --force): nothing is lost.
  const displacement = judged.some((j) => j.displace) ? new Displacement(runDir) : undefined;
  const pending: Array<PendingWrite | undefined> = [];
  const made: string[] = [];
  const ensured = new Set<string>();
  const dirs = new Set<string>();
  try {
    targets.forEach((t, i) => {
      const mode = options.modes?.get(t.rel);
      if (alreadyRestored(t.abs, judged[i].original, mode)) {
        pending.push(undefined);
        return;
      }
      // Once per directory, and only when it is gone: most batches name a few directories that
      // all exist.
      const parent = dirname(t.abs);
      if (!ensured.has(parent)) {
        ensured.add(parent);
        if (!isDirectoryFollow(parent)) {
          for (const dir of makeParents(root, t)) {
            made.push(dir);
            dirs.add(dirname(dir));
          }
        }
      }
      // The check-to-rename window is per file: right before its rename, the file is judged
      // again (references/context-guard.md#concurrency).
      const recheck = () => {
        const fresh = recheckRestore(runDir, t.rel, t.abs, judged[i], hashes[i], override);
        if (!fresh.allowed) throw new RestoreRefusedError([t.rel], [refusalHint(runDir, t, root)]);
      };
      if (judged[i].displace) displacement!.keep(t.rel, t.abs, judged[i].current);
      try {
        pending.push(prepareRestore(runDir, t.rel, t.abs, false, mode, recheck));
      } catch (e) {
        throw asFileSystemError(e, "write", t.abs);
      }
    });
    if (displacement !== undefined) {
      await fsyncFiles(displacement.copies.values());
      await fsyncDirectories(displacement.dirs);
    }
    await syncPendingWrites(
      pending.map((p, i) =>
        p === undefined ? undefined : {
          ...p,
          sync: () =>
            p.sync().catch((e) => Promise.reject(asFileSystemError(e, "write", targets[i].abs))),
        }
      ),
    );
    // A directory made again is in its parent for good before any RESTORED: line.
    await fsyncDirectories(parentsOf(made));
  } catch (e) {
    for (const p of pending) p?.abort();
    removeMadeDirs(made);
    displacement?.discard();
    throw e;
  }
  const restored: string[] = [];
  try {
    targets.forEach((t, i) => {
      faultPoint("stage.restore.between-files");
      const p = pending[i];
      if (p !== undefined) {
        try {
          p.commit();
        } catch (e) {
          const cause = asFileSystemError(e, "replace", t.abs);
          if (!(cause instanceof CtxkitError)) throw cause;
          throw new RestoreStoppedError(cause, t.rel, restored, targets.length);
        }
        dirs.add(dirname(t.abs));
      }
      reportDisplaced(displacement, t.rel, reporter);
      restored.push(t.rel);
      reporter.out(text`RESTORED: ${t.rel}`);
    });
  } finally {
    for (const p of pending) p?.abort(); // the ones a failure left uncommitted
    await fsyncDirectories(dirs);
  }
  return targets;
}

/**
 * Make the missing parent directories of `t` inside `root` (a deleted skill directory comes back
 * with its file), never through a link; returns those made.
 */
function makeParents(root: string, t: ResolvedPath): string[] {
  try {
    return makeDirsBelow(root, dirname(t.abs));
  } catch (e) {
    if (e instanceof LinkedComponentError) {
      throw new PathRefusedError(
        t.abs,
        "linked-component",
        text`refusing to restore through the symbolic link ${e.path}: ${t.rel}`,
      );
    }
    throw asFileSystemError(e, "create the directory for", t.abs);
  }
}
