/**
 * How a snapshot copies its files (`references/context-guard.md#text-guard-snapshot`, step 10):
 * each from one descriptor checked to be the file the pre-flight looked at, proven to be the file
 * as it was (or copied again, up to {@linkcode COPY_ATTEMPTS} times in all, else refused naming
 * it), every copy synced, then each directory — never a torn copy.
 *
 * @module
 */

import { errorCode } from "../../_fs/errors.ts";
import { ReadRefusedError, sameFileState } from "../../_fs/read.ts";
import {
  createFileExclusive,
  fsyncDirectories,
  fsyncFiles,
  type Written,
} from "../../_fs/write.ts";
import { faultPoint } from "../../faults.ts";
import { dirname } from "../../paths.ts";
import { text } from "../../text.ts";
import { asFileSystemError, PathRefusedError } from "../errors.ts";
import type { ResolvedPath } from "../roots.ts";
import { makeRunDirs, replaceFile, snapshotCopyPath } from "../run_dir.ts";

/** What a snapshot recorded of one distinct target, by rel. */
export interface SnapshotRecord {
  /** The file's permission bits. */
  mode: number;
  /** For an accepted link: the physical file it resolved to. */
  linkTarget?: string;
  /** Size and hash of the copy as written (hashed while copying: no second pass). */
  written?: Written;
}

/**
 * Copy each target to `orig/<rel>` (a repeated argument replaces its earlier copy atomically),
 * then sync every copy once all are written, then each directory — all before `RUN_DIR:` is
 * printed, so a caller never rewrites a file whose copy is not on disk. A file saved in place
 * after its copy was checked but before the copies were on disk is copied again
 * (`references/context-guard.md#text-guard-snapshot`).
 */
export async function copyTargets(
  runDir: string,
  targets: readonly ResolvedPath[],
  records: Map<string, SnapshotRecord>,
  checked: ReadonlyMap<string, Deno.FileInfo>,
  alsoSync: Iterable<string>,
): Promise<void> {
  const dirs = new Set<string>([...alsoSync, dirname(runDir), runDir]);
  const copies: string[] = [];
  for (const t of targets) {
    faultPoint("stage.snapshot.between-copies");
    const copy = snapshotCopyPath(runDir, t.rel);
    const dir = dirname(copy);
    if (!dirs.has(dir)) {
      makeRunDirs(dir, runDir);
      for (let d = dir; d.length > runDir.length; d = dirname(d)) dirs.add(d);
    }
    records.get(t.rel)!.written = writeCopy(copy, t, checked.get(t.rel)!);
    copies.push(copy);
  }
  await fsyncFiles(copies);
  let changed = changedSinceCopied(targets, records);
  for (let round = 1; changed.length > 0; round++) {
    if (round >= COPY_ATTEMPTS) throw keptChanging(changed[0].arg);
    const again = changed.map((t) => {
      const copy = snapshotCopyPath(runDir, t.rel);
      records.get(t.rel)!.written = writeCopy(copy, t, checked.get(t.rel)!);
      return copy;
    });
    await fsyncFiles(again);
    changed = changedSinceCopied(changed, records);
  }
  await fsyncDirectories(dirs);
}

/**
 * The targets (one per rel) whose file was modified in place since it was copied: the same inode
 * with another size or other change times. A file gone or renamed over since is not: the copy is
 * of the whole file it was.
 */
function changedSinceCopied(
  targets: readonly ResolvedPath[],
  records: ReadonlyMap<string, SnapshotRecord>,
): ResolvedPath[] {
  const seen = new Set<string>();
  return targets.filter((t) => {
    if (seen.has(t.rel)) return false;
    seen.add(t.rel);
    const source = records.get(t.rel)?.written?.source;
    if (source === undefined) return false;
    let now: Deno.FileInfo;
    try {
      now = Deno.lstatSync(t.abs);
    } catch {
      return false;
    }
    return now.dev === source.dev && now.ino === source.ino && !sameFileState(source, now);
  });
}

/** How many times a file modified while it is copied is copied, the first time included. */
const COPY_ATTEMPTS = 4;

/**
 * Copy `t` to `copy`, again (up to {@linkcode COPY_ATTEMPTS} times in all) while the file changes
 * during the copy; a file that keeps changing is refused naming it, never copied torn.
 */
function writeCopy(copy: string, t: ResolvedPath, checked: Deno.FileInfo): Written {
  for (let attempt = 1;; attempt++) {
    try {
      return copyOnce(copy, t, checked);
    } catch (e) {
      if (!(e instanceof ReadRefusedError && e.refusal === "modified")) throw e;
      if (attempt >= COPY_ATTEMPTS) throw keptChanging(t.arg);
    }
  }
}

/**
 * Create the copy exclusively (not synced: the caller syncs the batch); a repeated argument finds
 * its earlier copy there and replaces it atomically. Creating first spares a look for a file that
 * is almost never there. A copy that is not the file as it was is removed and refused `modified`.
 */
function copyOnce(copy: string, t: ResolvedPath, checked: Deno.FileInfo): Written {
  const content = { copyFrom: t.abs, sameAs: checked, prove: true };
  try {
    try {
      return createFileExclusive(copy, content, 0o600, true, false);
    } catch (e) {
      if (errorCode(e) !== "EEXIST") throw e;
      return replaceFile(copy, content, { mode: 0o600, exactMode: true });
    }
  } catch (e) {
    if (e instanceof ReadRefusedError && e.refusal === "modified") throw e;
    // A link swapped in, or another file renamed over it, since it was checked: what is there now
    // was never checked, so nothing of it goes into the backup.
    if (e instanceof ReadRefusedError) throw replacedDuringSnapshot(t.arg);
    throw asFileSystemError(e, "snapshot", t.arg);
  }
}

/** The file at `f` changed at every copy: refused, never copied torn. */
function keptChanging(f: string): PathRefusedError {
  return new PathRefusedError(
    f,
    "kept-changing",
    text`${f} kept changing while it was being snapshotted - snapshot it again once it is saved`,
  );
}

/** The file at `f` is no longer the regular file the pre-flight checked. */
export function replacedDuringSnapshot(f: string): PathRefusedError {
  return new PathRefusedError(
    f,
    "replaced",
    text`${f} was replaced while it was being snapshotted - snapshot it again`,
  );
}
