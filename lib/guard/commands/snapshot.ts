/**
 * context-guard `snapshot` (`references/context-guard.md#snapshot`): the git gate, the text-guard
 * stage, the manifest and retention.
 *
 * @module
 */

import { isFileFollow, isSymlink } from "../../_fs/inspect.ts";
import { CtxkitError, UsageError } from "../../errors.ts";
import { faultPoint } from "../../faults.ts";
import { runGit } from "../../git.ts";
import { joinText, text, verbatim } from "../../text.ts";
import { logicalCwd } from "../../paths.ts";
import { autoRunDirName, nextSeq, pruneRuns } from "../runs.ts";
import { DirtyTreeError, errorText, PathRefusedError, StageFailedError } from "../errors.ts";
import { manifestEntries, restoreCommand, writeManifest } from "../manifest.ts";
import { type Reporter, silentReporter } from "../report.ts";
import { type GuardRoots, type Layer, layerRoot, resolveLogical } from "../roots.ts";
import { gitPlace, localStamp } from "../stage/common.ts";
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

/** Rels git tracks: `ls-files --error-unmatch` semantics, batched where no pathspec magic applies. */
function trackedRels(root: string, rels: readonly string[]): Set<string> {
  const tracked = new Set<string>();
  const plain = [...new Set(rels)].filter((r) => !/[*?[\]\\:!]/.test(r));
  if (plain.length > 0) {
    const r = runGit(["-C", root, "ls-files", "-z", "--", ...plain], root);
    if (r.status === 0) {
      const listed = new Set(r.stdout.split("\0"));
      for (const rel of plain) if (listed.has(rel)) tracked.add(rel);
    }
  }
  for (const rel of new Set(rels)) {
    if (plain.includes(rel)) continue;
    const r = runGit(["-C", root, "ls-files", "--error-unmatch", "--", rel], root);
    if (r.status === 0) tracked.add(rel);
  }
  return tracked;
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
  if (!place.workTree) {
    reporter.out(
      text`SNAPSHOT-ONLY: ${root} is not a git repo - the manifest is the only recovery path`,
    );
    return place.repo;
  }
  const trackedSet = trackedRels(root, rels);
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
  const status = runGit(["-C", root, "status", "--porcelain", "--", ...tracked], root);
  if (status.status === 0 && status.stdout === "") {
    reporter.out(text`GIT-COVERED: ${tracked.length} tracked target(s), clean`);
    return true;
  }
  const porcelain = status.stdout === "" ? [] : status.stdout.replace(/\n$/, "").split("\n");
  const lines = porcelain.length === 0 ? "" : `${porcelain.join("\n")}\n`;
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
    }, reporter);
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    reporter.err(errorText(e));
    throw new StageFailedError(e);
  }
  const runDir = staged.runDir;
  faultPoint("snapshot.before-manifest");
  const entries = manifestEntries(runDir, staged.records);
  const manifest = writeManifest({
    timestamp: stamp,
    layer,
    root,
    runDir,
    restoreCmd: restoreCommand(options.scriptPath, layer, runDir),
    created: now,
    seq: nextSeq(roots.backups),
    ...(layer === "global" ? { projectRoot: roots.project } : {}),
    files: entries,
  });
  reporter.out(text`MANIFEST: ${manifest}`);
  const pruned = pruneRuns(roots.backups, runDir, layer, root, reporter, now.getTime());
  return { runDir, manifest, root, files: entries.map((e) => e.path), pruned };
}
