/**
 * text-guard `checkpoint` (`references/context-guard.md#ownership-what-may-be-restored`): record
 * that the optimizer owns the current bytes of each file.
 *
 * @module
 */

import { existsNoFollow, isFileFollow } from "../../_fs/inspect.ts";
import { fsyncDirectories } from "../../_fs/write.ts";
import { parentsOf } from "../../_fs/dirs.ts";
import { text } from "../../text.ts";
import { FileSystemError, PathRefusedError } from "../errors.ts";
import { inspectCurrent, writeDraftRecord } from "../ownership.ts";
import { type Reporter, silentReporter } from "../report.ts";
import { manifestLinkLookup } from "../manifest.ts";
import { type PhysicalDirs, type ResolvedPath, textGuardRoot } from "../roots.ts";
import { requireRunDir } from "../run_dir.ts";
import { snapshottedTarget } from "./common.ts";

/** Inputs of {@linkcode checkpoint}: the run dir, the root and the files the optimizer owns now. */
export interface CheckpointOptions {
  /** The run dir of the snapshot. */
  runDir: string;
  /** The root the files are relative to (default: `CLAUDE_PROJECT_DIR`, else the git top level). */
  projectDir?: string;
  /** The files, as typed. */
  files: readonly string[];
  /** How messages name the root (default `project`). */
  rootName?: "project" | "global";
}

/**
 * Record that the optimizer owns each file's current bytes (its hash, or `MISSING` for a deleted
 * file), after checking every file; prints `CHECKPOINT: <rel>` and returns the rels in order. Call
 * it after every owned write.
 *
 * @example
 * ```ts ignore
 * import { checkpoint } from "../../../mod.ts";
 * // … the optimizer rewrote CLAUDE.md in place …
 * await checkpoint({ runDir: run.runDir, projectDir: run.root, files: ["CLAUDE.md"] });
 * ```
 */
export async function checkpoint(
  options: CheckpointOptions,
  reporter: Reporter = silentReporter,
): Promise<string[]> {
  const { runDir } = options;
  requireRunDir(runDir);
  const root = textGuardRoot(options.projectDir, options.rootName);
  const links = manifestLinkLookup(runDir);
  const targets: ResolvedPath[] = [];
  const physicalDirs: PhysicalDirs = new Map();
  for (const f of options.files) {
    const t = snapshottedTarget(
      f,
      root,
      runDir,
      (rel) => text`no snapshot for ${rel}`,
      options.rootName,
      links,
      physicalDirs,
      true, // a deleted file's directory may be gone too: its deletion is still recorded
    );
    if (existsNoFollow(t.abs) && !isFileFollow(t.abs)) {
      throw new PathRefusedError(f, "not-regular-draft", text`not a regular draft: ${f}`);
    }
    targets.push(t);
  }
  // Each record is atomic; its directory is synced once for the batch. A record lost to a crash
  // before that sync only makes a later restore refuse (the safe side).
  // Something there that cannot be read is not "missing": recording MISSING would let a later
  // restore overwrite it (references/context-guard.md#text-guard-checkpoint). Every file is
  // hashed before any record is written.
  const states = targets.map((t) => {
    const current = inspectCurrent(t.abs);
    if (current.state === undefined) throw new FileSystemError("read", t.arg, current.error);
    return current.state;
  });
  const dirs = new Set<string>();
  const made: string[] = [];
  for (const [i, t] of targets.entries()) {
    dirs.add(writeDraftRecord(runDir, t.rel, states[i], false, dirs, made));
  }
  // The directories made (draft/ and below) are in their parents for good before the lines.
  await fsyncDirectories(new Set([...dirs, ...parentsOf(made)]));
  for (const t of targets) reporter.out(text`CHECKPOINT: ${t.rel}`);
  return targets.map((t) => t.rel);
}
