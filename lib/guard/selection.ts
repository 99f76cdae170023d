/**
 * Which run a command acts on (`references/context-guard.md#selection`). Every implicit choice
 * (no `--run-dir`, `last`, a `<ts>` prefix, a bare `restore` or `rollback`) considers only this
 * invocation's complete runs — those whose manifest root is the layer root in use — so another
 * project's run is never picked. A run named with `--run-dir` (or a path) is taken as named, and
 * its manifest decides its layer and root.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { isBelow, logicalCwd, normalizeLexical } from "../paths.ts";
import { text } from "../text.ts";
import { SnapshotMissingError } from "./errors.ts";
import { manifestPaths, movedRoot } from "./manifest.ts";
import { existsNoFollow, physicalPath } from "../_fs/inspect.ts";
import type { Reporter } from "./report.ts";
import { type GuardRoots, type Layer, layerRoot, type RootName } from "./roots.ts";
import {
  layerRuns,
  readRun,
  readRuns,
  type Run,
  runGroups,
  sameRootAs,
  scanRuns,
  warnIgnored,
  warnIncomplete,
} from "./runs.ts";
import { requireTrustedRunDir } from "./run_owner.ts";

const SUFFIX = "_context-slim";

/** The run a command acts on, with the layer and root its manifest gives. */
export interface ChosenRun {
  /** The run dir. */
  runDir: string;
  /** Its layer. */
  layer: Layer;
  /** The root its files live under (the manifest's, else the layer root). */
  root: string;
  /** How messages name that root. */
  rootName: RootName;
}

/** What to choose from. */
export interface RunRequest {
  /** `--run-dir`, when given. */
  runDir?: string;
  /** A `last` / `<ts>` selector, when given. */
  selector?: string;
  /** `--project` / `--global`, when given. */
  layer?: Layer;
  /** The file arguments (they imply the layer when no flag is given). */
  files: readonly string[];
}

/**
 * The layer a command's files imply: global when every file lies (lexically) under the global
 * root and not under the project root, else project.
 */
export function impliedLayer(files: readonly string[], roots: GuardRoots): Layer {
  if (files.length === 0) return "project";
  const cwd = logicalCwd();
  const global = files.every((f) => {
    const abs = normalizeLexical(f, cwd);
    return isBelow(abs, roots.global) && !isBelow(abs, roots.project);
  });
  return global ? "global" : "project";
}

/**
 * The "no backups" failure: `no backups under <B>` when it holds no complete run at all, else
 * naming the layer root that has none.
 */
export function noBackupsFor(
  backups: string,
  runs: readonly Run[],
  scope?: { layer: Layer; root: string },
): SnapshotMissingError {
  if (scope === undefined || !runs.some((r) => r.head !== undefined)) {
    return new SnapshotMissingError("no-backups", backups, text`no backups under ${backups}`);
  }
  return new SnapshotMissingError(
    "no-backups",
    backups,
    text`no backups under ${backups} for the ${scope.layer} root ${scope.root}`,
  );
}

/**
 * The failure of a `<ts>` selector that names no run: `no run matches <spec> under <B>` — of the
 * runs `list` shows, none is named with it (`references/context-guard.md#selection`).
 */
export function noRunMatches(backups: string, spec: string): SnapshotMissingError {
  return new SnapshotMissingError(
    "no-match",
    backups,
    text`no run matches ${spec} under ${backups}`,
  );
}

/**
 * Resolve a selector within one layer: `last` is the newest run of the layer root; a run name or
 * a path is taken verbatim; a prefix picks the newest of the layer root's runs named with it,
 * else the conventional name `B/<spec>-<layer>_context-slim` when something is there (which then
 * reports what it lacks) — unless that names another root's run, which is refused; nothing there
 * is {@linkcode noRunMatches}.
 */
export function resolveSpec(
  runs: readonly Run[],
  roots: GuardRoots,
  spec: string,
  layer: Layer,
): string {
  const root = layerRoot(roots, layer);
  const candidates = layerRuns(runs, layer, root);
  if (spec === "last") {
    if (candidates.length === 0) throw noBackupsFor(roots.backups, runs, { layer, root });
    return candidates[0].dir;
  }
  if (spec.endsWith(SUFFIX) || spec.startsWith("/")) return spec;
  const hit = candidates.find((r) => r.name.startsWith(spec));
  if (hit !== undefined) return hit.dir;
  const fallback = `${roots.backups}/${spec}-${layer}${SUFFIX}`;
  if (runs.some((r) => r.dir === fallback && r.head !== undefined)) {
    throw noBackupsFor(roots.backups, runs, { layer, root });
  }
  if (!existsNoFollow(fallback)) throw noRunMatches(roots.backups, spec);
  return fallback;
}

/** The layer and root a run dir's manifest gives, checked against a `--project`/`--global` flag. */
export function describeRun(runDir: string, flag: Layer | undefined, roots: GuardRoots): ChosenRun {
  requireTrustedRunDir(runDir);
  const head = readRun(runDir).head;
  if (flag !== undefined && head !== undefined && head.layer !== flag) {
    throw new UsageError(
      text`--${flag} contradicts the run dir ${runDir}: its manifest is of the ${head.layer} layer`,
    );
  }
  if (head?.physicalRoot !== undefined) {
    const now = physicalPath(head.root);
    if (now !== undefined && now !== head.physicalRoot) {
      throw movedRoot(`${runDir}/manifest.json`, head.root, now, head.physicalRoot);
    }
  }
  const layer = head?.layer ?? flag ?? "project";
  return { runDir, layer, root: head?.root ?? layerRoot(roots, layer), rootName: layer };
}

/**
 * The trusted runs of `B`, after one line for each run dir ignored as another user's and one for
 * the incomplete runs (`references/context-guard.md#whose-runs-are-trusted`).
 */
function scannedRuns(backups: string, reporter: Reporter): Run[] {
  const scan = scanRuns(backups);
  warnIgnored(scan, backups, reporter);
  warnIncomplete(scan.runs, backups, reporter);
  return scan.runs;
}

/**
 * The one run of `verify`, `verify-deleted` and a layer- or file-bound `restore`: `--run-dir`, else
 * the selector (default `last`) within the flagged layer, or the layer the files imply.
 */
export function chooseRun(roots: GuardRoots, request: RunRequest, reporter: Reporter): ChosenRun {
  if (request.runDir !== undefined) return describeRun(request.runDir, request.layer, roots);
  const runs = scannedRuns(roots.backups, reporter);
  const layer = request.layer ?? impliedLayer(request.files, roots);
  return describeRun(resolveSpec(runs, roots, request.selector ?? "last", layer), layer, roots);
}

/**
 * The run dirs of a bare `restore`/`rollback`, `restore last` or `restore <ts>`: every layer of
 * this invocation's newest run (a project run and the global run taken with it), or of every run
 * one of whose dirs is named with the `<ts>` prefix, newest first.
 */
export function chooseRunGroups(
  roots: GuardRoots,
  spec: string | undefined,
  reporter: Reporter,
): string[] {
  const runs = scannedRuns(roots.backups, reporter);
  const groups = runGroups(runs, roots);
  const chosen = spec === undefined || spec === "last"
    ? groups.slice(0, 1)
    : groups.filter((g) => g.some((r) => r.name.startsWith(spec)));
  if (chosen.length === 0) {
    // Runs there are, but none is named with the stamp: say so, not "no backups".
    if (groups.length > 0 && spec !== undefined) throw noRunMatches(roots.backups, spec);
    throw noBackupsFor(roots.backups, runs, { layer: "project", root: roots.project });
  }
  return chosen.flat().map((r) => r.dir);
}

/**
 * True when `arg` names a file listed in the manifest of one of this invocation's runs (resolved
 * against that run's root): such an argument is a file, never a selector, even when it is gone
 * from disk.
 */
export function namesManifestFile(arg: string, roots: GuardRoots): boolean {
  const cwd = logicalCwd();
  const abs = normalizeLexical(arg, cwd);
  const isProject = sameRootAs(() => roots.project);
  const isGlobal = sameRootAs(() => roots.global);
  for (const run of readRuns(roots.backups)) {
    const h = run.head;
    if (h === undefined) continue;
    if (!(isProject.run(h) || isGlobal.run(h))) continue;
    if (!isBelow(abs, h.root)) continue;
    const rel = abs.slice(h.root === "/" ? 1 : h.root.length + 1);
    if (manifestPaths(run.dir).has(rel)) return true;
  }
  return false;
}

/** True when `arg` has the form of a selector: `last`, a run name, or digits and dashes. */
export function looksLikeSelector(arg: string): boolean {
  return arg === "last" || arg.endsWith(SUFFIX) || /^[0-9][0-9-]*$/.test(arg);
}
