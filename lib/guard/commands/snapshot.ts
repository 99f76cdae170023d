/**
 * context-guard `snapshot` (`references/context-guard.md#snapshot`): the git gate, the text-guard
 * stage, the manifest and retention.
 *
 * @module
 */

import { existsNoFollow, isFileFollow, isSymlink } from "../../_fs/inspect.ts";
import { CtxkitError, UsageError } from "../../errors.ts";
import { faultPoint } from "../../faults.ts";
import { ownRepositoryEnv, runGitPaths } from "../../git.ts";
import { joinText, text, verbatim } from "../../text.ts";
import { joinRoot, logicalCwd } from "../../paths.ts";
import { sortUtf8 } from "../../sort.ts";
import { autoRunDirName, nextSeq, pruneRuns } from "../runs.ts";
import { DirtyTreeError, errorText, PathRefusedError, StageFailedError } from "../errors.ts";
import { manifestEntries, restoreCommand, writeManifest } from "../manifest.ts";
import { type Reporter, silentReporter } from "../report.ts";
import { type GuardRoots, type Layer, layerRoot, resolveLogical } from "../roots.ts";
import { gitFailure, gitPlace, localStamp } from "../stage/common.ts";
import { absoluteRunDir } from "../run_dir.ts";
import { stageSnapshot } from "../stage/snapshot.ts";

/** Inputs of {@linkcode snapshot}. */
export interface SnapshotOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** The layer (default `project`). */
  layer?: "project" | "global";
  /** File arguments, as typed. */
  files: readonly string[];
  /** `--run-dir` as given. */
  runDir?: string;
  /** Waive the clean-tree check on tracked targets. */
  allowDirty?: boolean;
  /** Absolute path of the context-guard script or bundle, for `restore_cmd`. */
  scriptPath: string;
  /** Clock (default: now, read once). */
  now?: Date;
  /** Take a snapshot-trust run (`references/context-guard.md#snapshot-trust`). */
  trust?: boolean;
}

/** What {@linkcode snapshot} wrote. */
export interface SnapshotResult {
  /** The run dir. */
  runDir: string;
  /** Path of its manifest. */
  manifest: string;
  /** Layer root `R`. */
  root: string;
  /** Rels the manifest lists. */
  files: string[];
  /** Backups deleted by retention. */
  pruned: string[];
}

/**
 * Which rels git tracks (`git ls-files --error-unmatch` semantics, exact match), asked literally
 * (`*.md` is a file name) and in as many calls as the command line needs; a rel inside a submodule
 * is tracked when the submodule tracks it, and then `gitlinks` maps it to the submodule's path
 * (its state is asked of that path). A git call that fails is an error, never "untracked".
 */
function trackedRels(root: string, rels: readonly string[]): {
  tracked: Set<string>;
  gitlinks: Map<string, string>;
} {
  const env = ownRepositoryEnv();
  const distinct = sortUtf8(new Set(rels));
  const listed = (recurse: boolean, paths: readonly string[]) => {
    const args = ["-C", root, "ls-files", "-z", ...(recurse ? ["--recurse-submodules"] : [])];
    const r = runGitPaths(args, paths, root, env);
    if (r.status !== 0) throw gitFailure(root, r.stderr);
    return new Set(r.stdout.split("\0"));
  };
  const top = listed(false, distinct);
  const tracked = new Set(distinct.filter((rel) => top.has(rel)));
  const gitlinks = new Map<string, string>();
  const rest = distinct.filter((rel) => !tracked.has(rel));
  if (rest.length === 0) return { tracked, gitlinks };
  const deep = listed(true, rest);
  for (const rel of rest) {
    if (!deep.has(rel)) continue;
    tracked.add(rel);
    gitlinks.set(rel, submoduleOf(root, rel) ?? rel);
  }
  return { tracked, gitlinks };
}

/** The path of the submodule `rel` lies in: its nearest ancestor holding a `.git`. */
function submoduleOf(root: string, rel: string): string | undefined {
  const parts = rel.split("/");
  for (let n = parts.length - 1; n > 0; n--) {
    const dir = parts.slice(0, n).join("/");
    if (existsNoFollow(joinRoot(root, `${dir}/.git`))) return dir;
  }
  return undefined;
}

/**
 * The git gate: prints its stdout line(s), or throws {@linkcode DirtyTreeError} (exit 3). Returns
 * whether `root` is in a git repository when it asked git (so the stage need not ask again), else
 * `undefined`.
 */
function gitGate(
  layer: Layer,
  root: string,
  rels: readonly string[],
  allowDirty: boolean,
  reporter: Reporter,
): boolean | undefined {
  if (layer === "global") {
    reporter.out(
      text`⚠️ global layer: no git tree - the manifest is the only recovery path for ${root}`,
    );
    return;
  }
  if (allowDirty) {
    reporter.out(text`⚠️ --allow-dirty: the git clean-tree check on tracked targets is waived`);
    return;
  }
  const place = gitPlace(root);
  if (place.refusal !== undefined) throw gitFailure(root, place.refusal);
  if (!place.workTree) {
    reporter.out(
      text`SNAPSHOT-ONLY: ${root} is not a git repo - the manifest is the only recovery path`,
    );
    return place.repo;
  }
  const { tracked: trackedSet, gitlinks } = trackedRels(root, rels);
  const tracked = rels.filter((r) => trackedSet.has(r));
  const loose = rels.filter((r) => !trackedSet.has(r));
  if (loose.length > 0) {
    reporter.out(
      text`SNAPSHOT-ONLY: ${loose.length} untracked/git-ignored target(s), no git recovery - the manifest is the only one: ${
        joinText(loose, " ")
      }`,
    );
  }
  if (tracked.length === 0) return true;
  // A submodule's file is asked of the submodule's own path (` M sub` when anything in it changed).
  const asked = sortUtf8(new Set(tracked.map((r) => gitlinks.get(r) ?? r)));
  const status = runGitPaths(
    ["-C", root, "status", "--porcelain"],
    asked,
    root,
    ownRepositoryEnv(),
  );
  // A status that fails (a full disk: index.lock cannot be written) is git failing, never "dirty"
  // with no line (references/context-guard.md#snapshot).
  if (status.status !== 0) throw gitFailure(root, status.stderr);
  if (status.stdout === "") {
    reporter.out(text`GIT-COVERED: ${tracked.length} tracked target(s), clean`);
    return true;
  }
  const porcelain = status.stdout.replace(/\n$/, "").split("\n");
  const lines = `${porcelain.join("\n")}\n`;
  throw new DirtyTreeError(
    root,
    porcelain,
    text`uncommitted changes in TRACKED targets - refusing to rewrite in place:
${
      verbatim(lines)
    }   Commit or stash exactly these paths, then re-run (--allow-dirty accepts the risk).`,
  );
}

/** The uid this process runs as: asked directly where Deno allows it, else the global root's owner. */
function ownUid(global: string): number | undefined {
  try {
    return Deno.uid() ?? undefined;
  } catch {
    try {
      return Deno.statSync(global).uid ?? undefined;
    } catch {
      return undefined;
    }
  }
}

/**
 * A global file that is a link (a dotfiles repository) is snapshotted by its content only when
 * both the link and the regular file it resolves to are the user's own.
 */
function checkDotfilesLink(f: string, global: string): void {
  const uid = ownUid(global);
  const link = Deno.lstatSync(f);
  const target = Deno.statSync(f);
  if (uid === undefined || link.uid !== uid || target.uid !== uid || !target.isFile) {
    throw new PathRefusedError(
      f,
      "symlink",
      text`symbolic-link target: ${f} - a global link is snapshotted only when it and its target are yours`,
    );
  }
}

function hasEntries(dir: string): boolean {
  try {
    for (const _ of Deno.readDirSync(dir)) return true;
  } catch { /* absent or not a directory */ }
  return false;
}

/**
 * context-guard `snapshot`: check the targets and the git state, copy the targets into a new run
 * dir with a manifest, then apply retention.
 *
 * @example
 * ```ts ignore
 * import { guardRoots, snapshot } from "../../../mod.ts";
 * const run = await snapshot({ roots: guardRoots(), files: ["CLAUDE.md"], scriptPath: "/opt/ctxkit/bin/context-guard.ts" });
 * console.log(run.runDir);
 * ```
 */
export async function snapshot(
  options: SnapshotOptions,
  reporter: Reporter = silentReporter,
): Promise<SnapshotResult> {
  const { roots, files } = options;
  const layer = options.layer ?? "project";
  if (files.length === 0) throw new UsageError(text`snapshot needs at least one file`);
  const now = options.now ?? new Date();
  const stamp = localStamp(now);
  const root = layerRoot(roots, layer);
  const rels: string[] = [];
  const cwd = logicalCwd();
  for (const f of files) {
    if (!isFileFollow(f)) throw new PathRefusedError(f, "not-a-file", text`not a file: ${f}`);
    rels.push(resolveLogical(f, root, undefined, cwd).rel);
    if (f.includes("\uFFFD")) {
      throw new PathRefusedError(f, "non-utf8", text`cannot record non-UTF-8 path: ${f}`);
    }
    if (layer === "global" && isSymlink(f)) checkDotfilesLink(f, roots.global);
  }
  const inGit = gitGate(layer, root, rels, options.allowDirty ?? false, reporter);
  if (options.runDir !== undefined && hasEntries(options.runDir)) {
    throw new PathRefusedError(
      options.runDir,
      "not-empty",
      text`--run-dir is not empty: ${options.runDir} (refusing to overwrite an existing snapshot)`,
    );
  }
  let staged;
  try {
    staged = await stageSnapshot({
      projectDir: root,
      files,
      allowDirty: true,
      runDir: options.runDir,
      autoRunDir: (n) => autoRunDirName(roots.backups, stamp, layer, n),
      linkCheckBase: roots.backups,
      allowLinks: layer === "global",
      noLinkedDirsBelow: root,
      rootName: layer,
      now,
      inGit,
      trust: options.trust,
    }, reporter);
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    reporter.err(errorText(e));
    throw new StageFailedError(e);
  }
  const runDir = staged.runDir;
  faultPoint("snapshot.before-manifest");
  const entries = manifestEntries(runDir, staged.records);
  // Recorded absolute, so restore_cmd runs from anywhere; printed as given (MANIFEST: line).
  const recordedDir = absoluteRunDir(runDir);
  const manifest = writeManifest({
    timestamp: stamp,
    layer,
    root,
    rootPhysical: staged.root,
    runDir: recordedDir,
    restoreCmd: restoreCommand(options.scriptPath, layer, recordedDir),
    created: now,
    seq: nextSeq(roots.backups),
    ...(layer === "global" ? { projectRoot: roots.project } : {}),
    files: entries,
  }, runDir);
  reporter.out(text`MANIFEST: ${manifest}`);
  const pruned = pruneRuns(roots.backups, runDir, layer, root, reporter, now.getTime());
  return { runDir, manifest, root, files: entries.map((e) => e.path), pruned };
}
