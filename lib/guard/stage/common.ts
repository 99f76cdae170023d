/**
 * What every text-guard operation shares: the clock stamp of run-dir names, the git test and the
 * pre-flight that resolves a file and requires its snapshot copy.
 *
 * @module
 */

import { ownRepositoryEnv, runGit } from "../../git.ts";
import { isDirectoryFollow } from "../../_fs/inspect.ts";
import { type Text, text } from "../../text.ts";
import { DirtyTreeError, SnapshotMissingError } from "../errors.ts";
import { manifestLinkLookup } from "../manifest.ts";
import {
  type LinkLookup,
  type PhysicalDirs,
  type ResolvedPath,
  resolvePhysical,
  type RootName,
} from "../roots.ts";
import { isTrustedCopy } from "../run_dir.ts";

/** `YYYYMMDD-HHMMSS` in local time. */
export function localStamp(date: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-` +
    `${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

/** Where git puts a directory ({@linkcode gitPlace}). */
export interface GitPlace {
  /** In a repository at all (`rev-parse --git-dir` answers). */
  repo: boolean;
  /** Inside that repository's work tree. */
  workTree: boolean;
  /**
   * git ran and failed for another reason than "not a git repository" (a repository of another
   * user that git refuses as of dubious ownership, a damaged one): git's first line. Such a
   * directory is not known to be outside git.
   */
  refusal?: string;
}

/**
 * Where git puts `dir`, from one `rev-parse` about the repository `dir` itself is in (git's
 * `GIT_DIR`/`GIT_WORK_TREE` ignored, `lib/git.ts` `ownRepositoryEnv`): in a repository at all
 * (`--git-dir` answers: what the stage's ignore-file handling asks) and inside its work tree (what
 * context-guard's gate asks); neither when git is absent or fails, and then why, when git said
 * something else than "not a git repository".
 */
export function gitPlace(dir: string): GitPlace {
  if (!isDirectoryFollow(dir)) return { repo: false, workTree: false };
  const r = runGit(
    ["-C", dir, "rev-parse", "--is-inside-work-tree", "--git-dir"],
    dir,
    ownRepositoryEnv(),
  );
  if (r.status === 0) return { repo: true, workTree: r.stdout.startsWith("true\n") };
  const place: GitPlace = { repo: false, workTree: false };
  if (r.status !== null && !r.stderr.includes("not a git repository")) {
    place.refusal = firstGitLine(r.stderr);
  }
  return place;
}

/** git's first non-empty stderr line, for a one-line message. */
export function firstGitLine(stderr: string): string {
  return stderr.split("\n").find((l) => l.trim() !== "")?.trim() ?? "git failed";
}

/**
 * A git question about the targets that failed (`references/context-guard.md#snapshot`): exit 3,
 * nothing written, git's own first line named — never read as "untracked" or "clean".
 */
export function gitFailure(root: string, stderr: string): DirtyTreeError {
  return new DirtyTreeError(
    root,
    [],
    text`git cannot answer for ${root}: ${
      firstGitLine(stderr)
    } - refusing to rewrite in place unchecked.
   Make git accept the repository (for another user's: git config --global --add safe.directory ${root}), or re-run with --allow-dirty.`,
  );
}

/** True when git answers `rev-parse --git-dir` in `dir` (git absent = not a repository). */
export function isGitRepo(dir: string): boolean {
  return gitPlace(dir).repo;
}

/**
 * Resolve `f` physically against `root` and require its trusted snapshot copy in `runDir`
 * ({@linkcode SnapshotMissingError} with `missing(rel)` otherwise): the pre-flight every file
 * operation on a run dir starts with. A link is accepted only where the run's manifest records
 * it as a dotfiles link to exactly the file it resolves to now. A batch passes one `dirs` to all its
 * files ({@linkcode PhysicalDirs}). With `missingDirs`, a directory part that no longer exists (a
 * deleted directory) resolves below its nearest existing ancestor.
 */
export function snapshottedTarget(
  f: string,
  root: string,
  runDir: string,
  missing: (rel: string) => Text,
  rootName: RootName = "project",
  links: LinkLookup = manifestLinkLookup(runDir),
  dirs: PhysicalDirs = new Map(),
  missingDirs = false,
): ResolvedPath {
  const t = resolvePhysical(f, root, rootName, links, dirs, missingDirs);
  if (!isTrustedCopy(`${runDir}/orig`, t.rel)) {
    throw new SnapshotMissingError("no-snapshot", runDir, missing(t.rel), t.rel);
  }
  return t;
}

/** The options every file operation on a run dir takes. */
export interface StageFilesOptions {
  /** `CLAUDE_PROJECT_DIR` for root resolution (the layer root when run as context-guard's stage). */
  projectDir?: string;
  /** The run dir. */
  runDir: string;
  /** File arguments, as typed. */
  files: readonly string[];
  /** How messages name the root (default `project`: text-guard's words). */
  rootName?: RootName;
}
