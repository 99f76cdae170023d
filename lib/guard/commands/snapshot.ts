/**
 * context-guard `snapshot` (spec §7.1): the git gate, the text-guard stage, the manifest and
 * retention.
 *
 * @module
 */

import { readdirSync } from "node:fs";
import { CtxkitError, die } from "../../exit.ts";
import { faultPoint } from "../../faults.ts";
import { runGit } from "../../git.ts";
import { isDirectory } from "../../paths.ts";
import { autoRunDirName, pruneBackups } from "../backups.ts";
import { isFileFollow } from "../fsx.ts";
import { manifestEntries, restoreCommand, writeManifest } from "../manifest.ts";
import type { Reporter } from "../report.ts";
import { type GuardRoots, type Layer, layerRoot, resolveLogical } from "../roots.ts";
import { localStamp, stageSnapshot } from "../stage.ts";

/** Inputs of {@linkcode snapshot}. */
export interface SnapshotOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** The layer (default `project`). */
  layer?: Layer;
  /** File arguments, as typed. */
  files: readonly string[];
  /** `--run-dir` as given. */
  runDir?: string;
  /** Waive the clean-tree check on tracked targets. */
  allowDirty?: boolean;
  /** Absolute path of the context-guard script, for `restore_cmd`. */
  scriptPath: string;
  /** Clock (default: now, read once). */
  now?: Date;
  /** Output sink. */
  reporter: Reporter;
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

/** True when git says `dir` is inside a work tree; false when git is absent or fails. */
function inWorkTree(dir: string): boolean {
  if (!isDirectory(dir)) return false;
  const r = runGit(["-C", dir, "rev-parse", "--is-inside-work-tree"], dir);
  return r.status === 0 && r.stdout.trim() === "true";
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

/** The §7.1 step 3 gate: prints its stdout line(s) or throws exit 3 for dirty tracked targets. */
function gitGate(
  layer: Layer,
  root: string,
  rels: readonly string[],
  allowDirty: boolean,
  reporter: Reporter,
): void {
  if (layer === "global") {
    reporter.out(
      `⚠️ global layer: no git tree - the manifest is the only recovery path for ${root}`,
    );
    return;
  }
  if (allowDirty) {
    reporter.out("⚠️ --allow-dirty: the git clean-tree check on tracked targets is waived");
    return;
  }
  if (!inWorkTree(root)) {
    reporter.out(
      `SNAPSHOT-ONLY: ${root} is not a git repo - the manifest is the only recovery path`,
    );
    return;
  }
  const trackedSet = trackedRels(root, rels);
  const tracked = rels.filter((r) => trackedSet.has(r));
  const loose = rels.filter((r) => !trackedSet.has(r));
  if (loose.length > 0) {
    reporter.out(
      `SNAPSHOT-ONLY: ${loose.length} untracked/git-ignored target(s), no git recovery - the manifest is the only one: ${
        loose.join(" ")
      }`,
    );
  }
  if (tracked.length === 0) return;
  const status = runGit(["-C", root, "status", "--porcelain", "--", ...tracked], root);
  if (status.status === 0 && status.stdout === "") {
    reporter.out(`GIT-COVERED: ${tracked.length} tracked target(s), clean`);
    return;
  }
  throw new CtxkitError(
    3,
    "❌ uncommitted changes in TRACKED targets - refusing to rewrite in place:\n" +
      (status.stdout === "" ? "" : status.stdout.replace(/\n$/, "") + "\n") +
      "   Commit or stash exactly these paths, then re-run (--allow-dirty accepts the risk).",
  );
}

function hasEntries(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch {
    return false;
  }
}

/** context-guard `snapshot` (§7.1). */
export function snapshot(options: SnapshotOptions): SnapshotResult {
  const { roots, files, reporter } = options;
  const layer = options.layer ?? "project";
  if (files.length === 0) die("❌ snapshot needs at least one file");
  const now = options.now ?? new Date();
  const stamp = localStamp(now);
  const root = layerRoot(roots, layer);
  const rels: string[] = [];
  for (const f of files) {
    if (!isFileFollow(f)) die(`❌ not a file: ${f}`);
    rels.push(resolveLogical(f, root).rel);
    if (f.includes("\uFFFD")) die(`❌ cannot record non-UTF-8 path: ${f}`);
  }
  gitGate(layer, root, rels, options.allowDirty ?? false, reporter);
  if (options.runDir !== undefined && hasEntries(options.runDir)) {
    die(
      `❌ --run-dir is not empty: ${options.runDir} (refusing to overwrite an existing snapshot)`,
    );
  }
  let staged;
  try {
    staged = stageSnapshot({
      projectDir: root,
      files,
      allowDirty: true,
      runDir: options.runDir,
      autoRunDir: (n) => autoRunDirName(roots.backups, stamp, layer, n),
      linkCheckBase: roots.backups,
      now,
      reporter,
    });
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    if (e.message !== "") reporter.err(e.message);
    throw new CtxkitError(e.exitCode, `❌ snapshot failed (text-guard exit ${e.exitCode})`);
  }
  const runDir = staged.runDir;
  faultPoint("snapshot.before-manifest");
  const entries = manifestEntries(runDir);
  const manifest = writeManifest({
    timestamp: stamp,
    layer,
    root,
    runDir,
    restoreCmd: restoreCommand(options.scriptPath, layer, runDir),
    files: entries,
  });
  reporter.out(`MANIFEST: ${manifest}`);
  const pruned = pruneBackups(roots.backups, runDir, reporter);
  return { runDir, manifest, root, files: entries.map((e) => e.path), pruned };
}
