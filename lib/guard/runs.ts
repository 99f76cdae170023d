/**
 * The runs under the backup root `B` (`references/context-guard.md#backups-and-run-dirs`): which
 * directories are complete runs, whose they are (root and layer, from the manifest), their real
 * creation order, how a project run and its global run pair into one invocation, and retention.
 *
 * A run is *complete* once its manifest is: `snapshot` writes the manifest atomically after every
 * copy, so a run killed at any point is either complete or has no valid manifest — and then it is
 * invisible to every selection and to retention's count, reported by one warning line, and removed
 * by retention once it is a day old.
 *
 * @module
 */

import { isAbsent, osReason, rethrowPermission } from "../_fs/errors.ts";
import { physicalPath } from "../_fs/inspect.ts";
import type { Invoker } from "../_fs/owner.ts";
import { compareUtf8 } from "../sort.ts";
import { type Text, text } from "../text.ts";
import { PathRefusedError } from "./errors.ts";
import { ManifestHeadSchema, MAX_SEQ, readManifestJson, SeqSchema } from "./manifest.ts";
import type { Reporter } from "./report.ts";
import { absoluteRunDir } from "./run_dir.ts";
import type { GuardRoots, Layer } from "./roots.ts";
import { backupRootProblem, manifestProblem, runEntryProblem, runOwner } from "./run_owner.ts";

const SUFFIX = "_context-slim";

/** The automatic run-dir path for `layer`, stamp and collision index `n` (1 = no suffix). */
export function autoRunDirName(backups: string, stamp: string, layer: Layer, n: number): string {
  return `${backups}/${stamp}-${layer}${n === 1 ? "" : `-${n}`}${SUFFIX}`;
}

/** The manifest facts of a complete run. */
export interface RunHead {
  /** The layer the run belongs to. */
  layer: Layer;
  /** The layer root its files live under. */
  root: string;
  /** The physical path the root resolved to at snapshot time (absent in older manifests). */
  physicalRoot?: string;
  /** For a global run: the project root of the invocation that took it. */
  projectRoot?: string;
  /** The creation instant (epoch-ms, from the manifest's UTC `created`). */
  created?: number;
  /** The creation sequence number: one more than every earlier run's in `B`. */
  seq?: number;
}

/** One directory named `*_context-slim` in `B`. */
export interface Run {
  /** Its name. */
  name: string;
  /** Its path. */
  dir: string;
  /** The manifest facts; `undefined` when the run is incomplete (no valid manifest). */
  head?: RunHead;
  /** The raw `layer` of an incomplete run's manifest, for `list` (`?` when none). */
  rawLayer: string;
}

interface NameKey {
  stamp: string;
  suffix: string;
  layerRank: number;
}

function nameKey(name: string): NameKey {
  const stamp = name.slice(0, 15);
  const m = /-([0-9]+)_context-slim$/.exec(name);
  const suffix = (m?.[1] ?? "1").replace(/^0+(?=.)/, "");
  const layerRank = /-project(-[0-9]+)?_context-slim$/.test(name)
    ? 0
    : /-global(-[0-9]+)?_context-slim$/.test(name)
    ? 1
    : 2;
  return { stamp, suffix, layerRank };
}

function compareNumeric(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : compareUtf8(a, b);
}

/**
 * Newest-first order of run names, for runs that carry no creation record: timestamp descending,
 * collision suffix descending as a number (none = 1), `project` before `global`; ties by name.
 */
export function compareRunNames(a: string, b: string): number {
  const x = nameKey(a);
  const y = nameKey(b);
  return compareUtf8(y.stamp, x.stamp) || compareNumeric(y.suffix, x.suffix) ||
    x.layerRank - y.layerRank || compareUtf8(a, b);
}

/**
 * Newest-first order of runs: by creation sequence, then creation instant (both immune to the time
 * zone the name was made in), then — for runs made before either was recorded — by name.
 */
export function compareRuns(a: Run, b: Run): number {
  const sa = a.head?.seq ?? 0;
  const sb = b.head?.seq ?? 0;
  if (sa !== sb) return sb - sa;
  const ca = a.head?.created;
  const cb = b.head?.created;
  // A run that recorded when it was made comes before one that did not.
  if (ca !== undefined && cb === undefined) return -1;
  if (ca === undefined && cb !== undefined) return 1;
  if (ca !== undefined && cb !== undefined && ca !== cb) return cb - ca;
  return compareRunNames(a.name, b.name);
}

function rawLayerOf(value: unknown): string {
  const layer = (value as { layer?: unknown } | null)?.layer;
  return typeof layer === "string" && /^[a-z]+$/.test(layer) ? layer : "?";
}

/** The last component of a run dir's path, trailing `/`s ignored. */
function runName(dir: string): string {
  const trimmed = dir.replace(/\/+$/, "");
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

/**
 * Read the manifest facts of the run dir `dir`; `undefined` head when it is not complete (or, with
 * `owner`, when the manifest opened is not that user's own).
 */
export function readRun(dir: string, name = runName(dir), owner?: Invoker): Run {
  let value: unknown;
  try {
    value = readManifestJson(`${dir}/manifest.json`, 64 * 1024 * 1024, owner);
  } catch {
    return { name, dir, rawLayer: "?" };
  }
  const parsed = ManifestHeadSchema.safeParse(value);
  if (!parsed.success) return { name, dir, rawLayer: rawLayerOf(value) };
  const m = parsed.data;
  const created = m.created === undefined ? undefined : Date.parse(m.created);
  const head: RunHead = {
    layer: m.layer,
    root: m.root.length > 1 ? m.root.replace(/\/+$/, "") : m.root,
  };
  if (typeof m.root_physical === "string" && m.root_physical.startsWith("/")) {
    head.physicalRoot = m.root_physical;
  }
  if (m.project_root !== undefined) head.projectRoot = m.project_root;
  if (created !== undefined && Number.isFinite(created)) head.created = created;
  const seq = SeqSchema.safeParse(m.seq);
  if (seq.success) head.seq = seq.data;
  return { name, dir, head, rawLayer: m.layer };
}

/** A run dir in `B` that is not trusted, and why (`references/context-guard.md#whose-runs-are-trusted`). */
export interface IgnoredRun {
  /** Its path. */
  dir: string;
  /** Why: `not yours (owner uid N)`, `writable by others`, `its manifest is …`. */
  reason: Text;
}

/** The runs of `B`: the trusted ones, and those ignored as another user's. */
export interface RunScan {
  /** The trusted `*_context-slim` directories, newest first (complete or not). */
  runs: Run[];
  /** Run dirs that are not the invoking user's own: never selected, restored, counted or pruned. */
  ignored: IgnoredRun[];
  /** Why `B` itself cannot be trusted (then every run in it is ignored), when it cannot. */
  untrustedRoot?: Text;
}

/**
 * Every `*_context-slim` directory (links excluded) in `B`, newest first, split into the trusted
 * runs and those another user owns or can write (or whose manifest is another user's); when `B`
 * itself is reachable through a folder another user owns or can write, none is trusted. None when
 * `B` is absent.
 */
export function scanRuns(backups: string): RunScan {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(backups)];
  } catch {
    return { runs: [], ignored: [] };
  }
  const dirs = entries.filter((e) => e.isDirectory && e.name.endsWith(SUFFIX));
  if (dirs.length === 0) return { runs: [], ignored: [] };
  const untrustedRoot = backupRootProblem(backups);
  if (untrustedRoot !== undefined) return { runs: [], ignored: [], untrustedRoot };
  const who = runOwner()!;
  const runs: Run[] = [];
  const ignored: IgnoredRun[] = [];
  for (const e of dirs) {
    const dir = `${backups}/${e.name}`;
    const reason = ignoredBecause(dir, who);
    if (reason !== undefined) ignored.push({ dir, reason });
    else runs.push(readRun(dir, e.name, who));
  }
  ignored.sort((a, b) => compareUtf8(a.dir, b.dir));
  return { runs: runs.sort(compareRuns), ignored };
}

/** Why the run dir `dir` of `B` is not `who`'s: its own entry, or its manifest's. */
function ignoredBecause(dir: string, who: Invoker): Text | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(dir);
  } catch {
    return undefined; // gone meanwhile: read as incomplete, as before
  }
  const own = runEntryProblem(info, who);
  if (own !== undefined) return own;
  return manifestProblem(dir, who);
}

/** The trusted runs of `B`, newest first ({@linkcode scanRuns}); none when `B` is absent. */
export function readRuns(backups: string): Run[] {
  return scanRuns(backups).runs;
}

/**
 * One line on stderr per run dir of `B` that is not trusted, or one for all of them when `B`
 * itself is not: `⚠️ ignoring <dir>: <reason> - never selected, restored or pruned`,
 * `⚠️ ignoring every run in <B>: <reason>`.
 */
export function warnIgnored(scan: RunScan, backups: string, reporter: Reporter): void {
  if (scan.untrustedRoot !== undefined) {
    reporter.err(text`⚠️ ignoring every run in ${backups}: ${scan.untrustedRoot}`);
  }
  for (const r of scan.ignored) {
    reporter.err(text`⚠️ ignoring ${r.dir}: ${r.reason} - never selected, restored or pruned`);
  }
}

/**
 * The next creation sequence number for a run in `B`: one more than every valid `seq` there, never
 * beyond {@linkcode MAX_SEQ} (runs then tie on it and their `created` instants order them).
 */
export function nextSeq(backups: string): number {
  const max = readRuns(backups).reduce((max, r) => Math.max(max, r.head?.seq ?? 0), 0);
  return Math.min(max + 1, MAX_SEQ);
}

/** A test "is this the same directory as the root" ({@linkcode sameRootAs}). */
export interface RootTest {
  /** A root string: the same string, or the same physical directory now. */
  (other: string): boolean;
  /**
   * Whether a run is of the root (`references/context-guard.md#backups-and-run-dirs`): a run that
   * recorded the physical directory its root resolved to is the root's only when the root
   * resolves to that directory now (a re-pointed link sends no run into another project); an
   * older run that recorded none is tested by its root string as before (a documented limit).
   */
  run(head: Pick<RunHead, "root" | "physicalRoot">): boolean;
}

/**
 * A test "is this the same directory as `root`": the same string, or the same physical path. Each
 * path is resolved once, when first asked (one pass over the runs), never remembered beyond the
 * test: a directory made or a link re-pointed since must count. `root` may be given as a function,
 * asked only when there is a run to compare (the project root may cost a git call).
 */
export function sameRootAs(root: string | (() => string)): RootTest {
  let fixed: string | undefined;
  let physical: string | undefined | null = null;
  const seen = new Map<string, string | undefined>();
  const physicalOf = (path: string) => {
    if (!seen.has(path)) seen.set(path, physicalPath(path));
    return seen.get(path);
  };
  const fixedPhysical = () => {
    fixed ??= typeof root === "string" ? root : root();
    if (physical === null) physical = physicalPath(fixed);
    return physical;
  };
  const test = (other: string): boolean => {
    fixed ??= typeof root === "string" ? root : root();
    if (other === fixed) return true;
    const mine = fixedPhysical();
    return mine !== undefined && physicalOf(other) === mine;
  };
  test.run = (head: Pick<RunHead, "root" | "physicalRoot">): boolean => {
    if (head.physicalRoot !== undefined) {
      const mine = fixedPhysical();
      return mine === undefined ? head.root === fixed : mine === head.physicalRoot;
    }
    return test(head.root);
  };
  return test;
}

/** The complete runs of `layer` whose root is `root`, newest first. */
export function layerRuns(runs: readonly Run[], layer: Layer, root: string): Run[] {
  const isRoot = sameRootAs(root);
  return runs.filter((r) => r.head?.layer === layer && isRoot.run(r.head));
}

/**
 * The complete runs of this invocation, newest first: project runs of `P`, and global runs of `G`
 * taken from `P` (or recording no project, as runs made before that was recorded).
 */
export function invocationRuns(runs: readonly Run[], roots: GuardRoots): Run[] {
  const isProject = sameRootAs(() => roots.project);
  const isGlobal = sameRootAs(() => roots.global);
  return runs.filter((r) => {
    const h = r.head;
    if (h === undefined) return false;
    if (h.layer === "project") return isProject.run(h);
    return isGlobal.run(h) && (h.projectRoot === undefined || isProject(h.projectRoot));
  });
}

/**
 * One invocation's runs: each project run, with the first global run of the same project taken
 * after it and before that project's next project run (a global run from before `project_root`
 * was recorded counts as this project's); every other global run stands alone.
 * Returned newest first (by each group's newest run), each group project run first.
 */
export function runGroups(runs: readonly Run[], roots: GuardRoots): Run[][] {
  const oldestFirst = invocationRuns(runs, roots).reverse();
  const groups: Run[][] = [];
  let open: Run[] | undefined;
  for (const run of oldestFirst) {
    if (run.head!.layer === "project") {
      open = [run];
      groups.push(open);
    } else if (open !== undefined) {
      open.push(run);
      open = undefined;
    } else {
      groups.push([run]);
    }
  }
  const newest = (g: Run[]) => g.reduce((a, b) => (compareRuns(a, b) <= 0 ? a : b));
  return groups.sort((a, b) => compareRuns(newest(a), newest(b)));
}

/** The one warning line about incomplete runs in `B`, when there are any. */
export function warnIncomplete(runs: readonly Run[], backups: string, reporter: Reporter): void {
  const n = runs.filter((r) => r.head === undefined).length;
  if (n > 0) {
    reporter.err(
      text`⚠️ ignoring ${n} incomplete run dir(s) without a valid manifest in ${backups}`,
    );
  }
}

/** How many runs of one root and layer retention keeps. */
export const RETAIN_RUNS = 5;
/** Retention never removes a run younger than this (epoch-ms): keep more rather than lose one. */
export const RETAIN_YOUNGER_MS = 24 * 60 * 60 * 1000;

/** The local-time instant a run's name stamp reads as, or `undefined`. */
export function stampInstant(name: string): number | undefined {
  const m = /^([0-9]{4})([0-9]{2})([0-9]{2})-([0-9]{2})([0-9]{2})([0-9]{2})/.exec(name);
  if (m === null) return undefined;
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number);
  const t = new Date(y, mo - 1, d, h, mi, s).getTime();
  return Number.isFinite(t) ? t : undefined;
}

function mtimeOf(dir: string): number {
  try {
    return Deno.lstatSync(dir).mtime?.getTime() ?? Date.now();
  } catch {
    return Date.now();
  }
}

/** When a run was made: its recorded instant, else its name's stamp, else its directory's mtime. */
function runInstant(run: Run): number {
  return run.head?.created ?? stampInstant(run.name) ?? mtimeOf(run.dir);
}

/**
 * A test "is this run of `B` the run dir `dir`": compared by normalised path
 * ({@linkcode absoluteRunDir}: `D`, `D/`, `./D` are one), and by physical path (a run dir named
 * through a linked ancestor of `B`). Each side is resolved once: `B` once, `dir` once.
 */
export function sameRunDirAs(dir: string, backups: string): (run: Run) => boolean {
  const key = absoluteRunDir(dir);
  const physical = physicalPath(dir);
  let physicalBackups: string | undefined | null = null;
  return (run) => {
    if (absoluteRunDir(run.dir) === key) return true;
    if (physical === undefined) return false;
    if (physicalBackups === null) physicalBackups = physicalPath(backups);
    return physicalBackups !== undefined && `${physicalBackups}/${run.name}` === physical;
  };
}

/** Delete one run; false when it was gone already (another snapshot's retention took it). */
function prune(run: Run, backups: string, reporter: Reporter): boolean {
  let ok = false;
  try {
    const st = Deno.lstatSync(run.dir);
    ok = st.isDirectory && run.dir === `${backups}/${run.name}` && !run.name.includes("/") &&
      run.name.endsWith(SUFFIX);
  } catch (e) {
    if (isAbsent(e)) return false;
  }
  if (!ok) {
    throw new PathRefusedError(
      run.dir,
      "outside-root",
      text`refusing to prune outside ${backups}: ${run.dir}`,
    );
  }
  try {
    Deno.removeSync(run.dir, { recursive: true });
  } catch (e) {
    if (isAbsent(e)) return false; // removed meanwhile by another run's retention
    rethrowPermission(e);
    // Another user's run (left by `sudo -E`), or one the OS keeps: skipped with a warning, never
    // a failure of the snapshot that already succeeded.
    reporter.err(text`⚠️ cannot prune ${run.dir} (${osReason(e)}) - left in place`);
    return false;
  }
  reporter.out(text`PRUNED: ${run.dir}`);
  return true;
}

/**
 * Retention after a snapshot of `layer`/`root` (the run `justWritten`, in `B` or not): keep the
 * newest {@linkcode RETAIN_RUNS} complete runs of that root and layer (the new one counts), and
 * every run younger than a day; delete the rest without following links, printing
 * `PRUNED: <dir>` newest first. Incomplete runs older than a day are deleted too. Runs of other
 * roots and layers are never touched. Returns the pruned dirs.
 */
export function pruneRuns(
  backups: string,
  justWritten: string,
  layer: Layer,
  root: string,
  reporter: Reporter,
  now: number = Date.now(),
): string[] {
  const scan = scanRuns(backups);
  // Another user's run is neither counted nor removed: named, and left alone.
  warnIgnored(scan, backups, reporter);
  const runs = scan.runs;
  // The new run is one of the kept ones wherever it lives, however its path was spelled.
  const isNew = sameRunDirAs(justWritten, backups);
  const others = layerRuns(runs, layer, root).filter((r) => !isNew(r));
  const doomed = others.slice(RETAIN_RUNS - 1)
    .filter((r) => now - runInstant(r) >= RETAIN_YOUNGER_MS);
  const stale = runs.filter((r) =>
    r.head === undefined && !isNew(r) && now - mtimeOf(r.dir) >= RETAIN_YOUNGER_MS
  );
  const pruned: string[] = [];
  for (const run of [...doomed, ...stale].sort(compareRuns)) {
    if (prune(run, backups, reporter)) pruned.push(run.dir);
  }
  return pruned;
}
