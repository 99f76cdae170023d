/**
 * Restoring one run dir (`references/context-guard.md#restoring-a-run-dir`), shared by `restore`,
 * `rollback` and verify's whole-run rollback.
 *
 * @module
 */

import { existsNoFollow, physicalPath } from "../../_fs/inspect.ts";
import { hashFile } from "../../_fs/read.ts";
import { CtxkitError } from "../../errors.ts";
import { dirname, joinRoot, logicalCwd, rootPrefix } from "../../paths.ts";
import { text } from "../../text.ts";
import {
  errorText,
  FileSystemError,
  ManifestError,
  PathRefusedError,
  RestoreStoppedError,
  SnapshotMissingError,
} from "../errors.ts";
import { type ManifestRead, readManifest } from "../manifest.ts";
import type { Reporter } from "../report.ts";
import { resolveLogical } from "../roots.ts";
import { isTrustedCopy, linkedDirBelow } from "../run_dir.ts";
import { restoreRunState } from "../run_state.ts";
import { stageRestore } from "../stage/restore.ts";

/** The last-line label of a restore. */
export type RestoreLabel = "RESTORE_VERIFIED" | "ROLLBACK_VERIFIED";

/** Outcome of {@linkcode restoreRunDir}. */
export interface RunDirRestore {
  /** The run dir. */
  runDir: string;
  /** True only when every file was restored and re-hashed equal (`0 mismatches, 0 missing`). */
  ok: boolean;
  /** Rels restored, in order. */
  restored: string[];
  /** Re-hash mismatches after restoring. */
  mismatches: number;
  /**
   * Why it failed, when it did: `stopped` when a fresh check or a rename failed part way (then
   * `restored` lists the files put back before it), `failed` for an OS error before any rename.
   */
  failure?: "damaged" | "refused" | "mismatch" | "stopped" | "failed";
  /** The exit code this run dir asks for: 0 when `ok`, 2 for an OS error, else 1. */
  exitCode: number;
}

function rehash(path: string): string | undefined {
  try {
    return hashFile(path).sha256;
  } catch {
    return undefined;
  }
}

/** The nearest existing ancestor directory of `path`, physically resolved. */
function nearestPhysicalAncestor(path: string): string | undefined {
  let p = dirname(path);
  for (;;) {
    if (existsNoFollow(p)) {
      const physical = physicalPath(p);
      if (physical !== undefined) return physical;
    }
    const parent = dirname(p);
    if (parent === p) return undefined;
    p = parent;
  }
}

/** A filter that keeps the first rel of each directory below `root`, in order. */
function firstOfEachDirectory(root: string): (rel: string) => boolean {
  const seen = new Set<string>();
  return (rel) => {
    const dir = dirname(joinRoot(root, rel));
    if (seen.has(dir)) return false;
    seen.add(dir);
    return true;
  };
}

/** What a restore of a run dir works from: its manifest, the rels to restore, their copies. */
export interface SelectedCopies {
  /** The validated manifest. */
  manifest: ManifestRead;
  /** Its root. */
  root: string;
  /** Every entry's recorded hash, by rel. */
  hashes: Map<string, string | undefined>;
  /** The rels to restore: the named files, or every entry in manifest order. */
  rels: string[];
  /** The hash of each trusted, intact copy (checked against the manifest). */
  copyHashes: Map<string, string>;
  /** Some copy is missing or damaged (each reported on stderr). */
  damaged: boolean;
}

/**
 * Steps 1–3 of restoring a run dir (`references/context-guard.md#restoring-a-run-dir`): read the
 * manifest, resolve the named files (or take every entry), and check each copy, printing
 * `❌ MISSING FROM SNAPSHOT:` / `❌ SNAPSHOT CHECKSUM MISMATCH:` for each bad one. Manifest
 * problems and bad file arguments are thrown (exit 2).
 */
export function selectCopies(
  runDir: string,
  files: readonly string[],
  reporter: Reporter,
): SelectedCopies {
  const manifest = readManifest(runDir);
  const root = manifest.root;
  const hashes = new Map(manifest.files.map((f) => [f.path, f.sha256]));
  let rels: string[];
  if (files.length > 0) {
    const cwd = logicalCwd();
    rels = files.map((f) => {
      const { rel } = resolveLogical(f, root, undefined, cwd, true);
      if (!hashes.has(rel)) {
        throw new SnapshotMissingError(
          "not-in-manifest",
          runDir,
          text`not in the manifest: ${rel}`,
          rel,
        );
      }
      return rel;
    });
  } else {
    rels = manifest.files.map((f) => f.path);
  }
  const orig = `${runDir}/orig`;
  const copyHashes = new Map<string, string>();
  let damaged = false;
  for (const rel of rels) {
    if (!existsNoFollow(`${orig}/${rel}`)) {
      reporter.err(text`❌ MISSING FROM SNAPSHOT: ${rel} (manifest lists it, ${orig} has no copy)`);
      damaged = true;
    } else {
      const want = hashes.get(rel);
      const ok = isTrustedCopy(orig, rel) && want !== undefined &&
        rehash(`${orig}/${rel}`) === want;
      if (ok) copyHashes.set(rel, want);
      if (!ok) {
        reporter.err(text`❌ SNAPSHOT CHECKSUM MISMATCH: ${rel}`);
        damaged = true;
      }
    }
  }
  return { manifest, root, hashes, rels, copyHashes, damaged };
}

/**
 * Restore `files` (or every manifest entry) of `runDir` back under the manifest's root. Manifest
 * problems and bad file arguments are thrown (exit 2) before any write; a damaged snapshot or a
 * refused stage prints `<label>: FAILED - …` and returns `ok: false`, nothing written.
 */
export async function restoreRunDir(
  runDir: string,
  label: RestoreLabel,
  files: readonly string[],
  reporter: Reporter,
  force = false,
): Promise<RunDirRestore> {
  const { manifest, root, hashes, rels, copyHashes, damaged } = selectCopies(
    runDir,
    files,
    reporter,
  );
  if (damaged) {
    reporter.err(
      text`${label}: FAILED - snapshot incomplete or damaged; current bytes preserved (${runDir})`,
    );
    return { runDir, ok: false, restored: [], mismatches: 0, failure: "damaged", exitCode: 1 };
  }
  // Both checks below depend on a target's directory alone, so each runs once per directory: the
  // first failing rel is the same, and a run restores many files per directory.
  const firstInDir = rels.filter(firstOfEachDirectory(root));
  const physicalRoot = physicalPath(root);
  if (physicalRoot !== undefined) {
    for (const rel of firstInDir) {
      const ancestor = nearestPhysicalAncestor(joinRoot(root, rel));
      if (
        ancestor === undefined ||
        !(ancestor === physicalRoot || ancestor.startsWith(rootPrefix(physicalRoot)))
      ) {
        throw new ManifestError(
          manifest.path,
          "unsafe-path",
          text`unsafe manifest path: ${rel} (${manifest.path})`,
          rel,
        );
      }
    }
  }
  for (const rel of firstInDir) {
    const linked = linkedDirBelow(root, joinRoot(root, rel));
    if (linked !== undefined) {
      throw new PathRefusedError(
        joinRoot(root, rel),
        "linked-component",
        text`refusing to restore through the symbolic link ${linked}: ${rel}`,
      );
    }
  }
  const modes = new Map<string, number>();
  const links = new Map<string, string>();
  for (const f of manifest.files) {
    if (f.mode !== undefined) modes.set(f.path, f.mode);
    if (f.linkTarget !== undefined) links.set(f.path, f.linkTarget);
  }
  const targets = rels.map((rel) => joinRoot(root, rel));
  try {
    await stageRestore({
      projectDir: root,
      runDir,
      files: targets,
      rootName: manifest.layer ?? "project",
      modes,
      copyHashes,
      links,
      force,
    }, reporter);
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    reporter.err(errorText(e));
    if (e instanceof RestoreStoppedError) {
      // Files before it were replaced: the summary says exactly which, never "preserved".
      reporter.err(
        text`${label}: FAILED - restoration stopped at ${e.rel}; ${e.restored.length} of ${e.total} file(s) restored (the RESTORED: lines), every other file keeps its current bytes (${runDir})`,
      );
      return {
        runDir,
        ok: false,
        restored: [...e.restored],
        mismatches: 0,
        failure: "stopped",
        exitCode: e.exitCode === 2 ? 2 : 1,
      };
    }
    if (e instanceof FileSystemError) {
      reporter.err(
        text`${label}: FAILED - restoration failed; current bytes preserved (${runDir})`,
      );
      return { runDir, ok: false, restored: [], mismatches: 0, failure: "failed", exitCode: 2 };
    }
    reporter.err(text`${label}: FAILED - restoration refused; current bytes preserved (${runDir})`);
    return { runDir, ok: false, restored: [], mismatches: 0, failure: "refused", exitCode: 1 };
  }
  let mismatches = 0;
  for (let i = 0; i < rels.length; i++) {
    if (rehash(targets[i]) !== hashes.get(rels[i])) {
      reporter.err(text`❌ CHECKSUM MISMATCH: ${rels[i]}`);
      mismatches++;
    }
  }
  // The state line comes first: callers read the label line as the last line per run dir.
  if (mismatches === 0 && files.length === 0) restoreRunState(runDir, root, reporter);
  reporter.out(text`${label}: ${mismatches} mismatches, 0 missing from snapshot (${runDir})`);
  return {
    runDir,
    ok: mismatches === 0,
    restored: rels,
    mismatches,
    failure: mismatches === 0 ? undefined : "mismatch",
    exitCode: mismatches === 0 ? 0 : 1,
  };
}
