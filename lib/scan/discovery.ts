/**
 * Discovery (§3): the steps run for each scanned root, in order, producing candidate rows (before
 * tier filter and dedup), discovery issues and root-walk warnings.
 *
 * @module
 */

import { compareUtf8 } from "../sort.ts";
import {
  isAbsent,
  lstatOrUndefined,
  osReason,
  readFileMeasure,
  statOrError,
  type Stats,
} from "./fsutil.ts";
import { descriptionBytes, hookEstimate, isPathScopedRule } from "./measure.ts";
import type { Loading, RootLabel, RowKind, ScanIssue, Tier } from "./schema.ts";
import { listDirectory, problemLine, walk, type WalkProblem, type WalkVisitor } from "./walk.ts";

/** A row before tier filtering and dedup (`tokens` is derived from `bytes` when rendering). */
export interface CandidateRow {
  /** Logical path of the measured file. */
  path: string;
  /** Label of the root being scanned. */
  root: RootLabel;
  /** Inventory tier. */
  tier: Tier;
  /** What is measured. */
  kind: RowKind;
  /** Measured (or estimated) bytes. */
  bytes: number;
  /** True for hook-payload estimates. */
  estimated: boolean;
  /** Loading condition. */
  loading: Loading;
}

/** Accumulates everything discovery finds, in occurrence order. */
export class Discovery {
  /** Candidate rows in step order. */
  readonly rows: CandidateRow[] = [];
  /** Issues in occurrence order. */
  readonly issues: ScanIssue[] = [];
  /** stderr warnings (unreadable directories met by a root walk). */
  readonly warnings: string[] = [];
  /** Directory listings read so far this run (see `WalkOptions.listings`). */
  readonly listings: Map<string, Deno.DirEntry[]> = new Map();

  /** Record a `discovery-incomplete` issue. */
  issue(root: RootLabel, path: string, detail: string): void {
    this.issues.push({ root, path, kind: "discovery-incomplete", exit_status: 1, detail });
  }

  /** Record one issue for a walk's problems (none when there are none). */
  walkIssue(root: RootLabel, start: string, problems: WalkProblem[]): void {
    // Directory listings come in OS order; sorting keeps the detail reproducible.
    const lines = problems.map(problemLine).sort(compareUtf8);
    if (lines.length > 0) this.issue(root, start, lines.join("\n"));
  }
}

const INSTRUCTION_LINK_DETAIL = "Instruction directory link does not resolve to a directory";

const anyMarkdown: WalkVisitor<null> = {
  child: () => null,
  file: (_path, name) => name.endsWith(".md"),
};

/** A directory to walk: its stat, or `undefined` when there is nothing to walk. */
function directoryStat(out: Discovery, label: RootLabel, path: string): Stats | undefined {
  const st = statOrError(path);
  if (!("error" in st)) return st.isDirectory ? st : undefined;
  if (!isAbsent(st.error)) out.issue(label, path, `'${path}': ${osReason(st.error)}`);
  return undefined;
}

/**
 * §3.2: the `*.md` files of an instruction root (`rules`, `.claude/rules`, `references`) — followed,
 * pruned walk — or an issue when it is a link that does not resolve to a directory.
 */
export function instructionFiles(out: Discovery, label: RootLabel, root: string): string[] {
  const st = statOrError(root);
  if ("error" in st || !st.isDirectory) {
    if (lstatOrUndefined(root)?.isSymlink) {
      out.issue(label, root, INSTRUCTION_LINK_DETAIL);
    } else if ("error" in st && !isAbsent(st.error)) {
      out.issue(label, root, `'${root}': ${osReason(st.error)}`);
    }
    return [];
  }
  const result = walk(
    root,
    st,
    { follow: true, prune: true, listings: out.listings },
    anyMarkdown,
    null,
  );
  out.walkIssue(label, root, result.problems);
  return result.files;
}

/** Physical, unpruned walk for `*.md` (memory directories); the start is entered even if a link. */
export function memoryFiles(out: Discovery, label: RootLabel, start: string): string[] {
  const st = directoryStat(out, label, start);
  if (st === undefined) return [];
  const result = walk(
    start,
    st,
    { follow: false, prune: false, listings: out.listings },
    anyMarkdown,
    null,
  );
  out.walkIssue(label, start, result.problems);
  return result.files.sort(compareUtf8);
}

function loadingOfMemory(path: string): Loading {
  return path.endsWith("/MEMORY.md") ? "memory-index-limited" : "on-demand";
}

/** Emit memory rows for the files of a memory walk. */
export function addMemoryRows(out: Discovery, label: RootLabel, files: string[]): void {
  for (const path of files) addFileRow(out, label, path, "always-on", loadingOfMemory(path));
}

/** Measure `path` (a regular file) and emit a `file` row, or an issue when it cannot be read. */
function addFileRow(
  out: Discovery,
  label: RootLabel,
  path: string,
  tier: Tier,
  loading: Loading,
): void {
  const read = readFileMeasure(path, false);
  if (!read.ok) return out.issue(label, path, `'${path}': ${read.reason}`);
  out.rows.push({
    path,
    root: label,
    tier,
    kind: "file",
    bytes: read.size,
    estimated: false,
    loading,
  });
}

/** probe(p): a row when `p` is a regular file after following links. */
function probe(out: Discovery, label: RootLabel, path: string, loading: Loading): void {
  const st = statOrError(path);
  if ("error" in st) {
    if (!isAbsent(st.error)) out.issue(label, path, `'${path}': ${osReason(st.error)}`);
    return;
  }
  if (st.isFile) addFileRow(out, label, path, "always-on", loading);
}

/** Which interesting components lie between the root and a directory (relative to the root, D6). */
interface RootContext {
  hooks: boolean;
  agents: boolean;
  skills: boolean;
}

/** The files of the broad root walk, by class, each class unsorted. */
interface RootWalkClasses {
  hooks: string[];
  agents: string[];
  skills: string[];
}

function rootWalk(out: Discovery, label: RootLabel, root: string, st: Stats): RootWalkClasses {
  const classes: RootWalkClasses = { hooks: [], agents: [], skills: [] };
  const visitor: WalkVisitor<RootContext> = {
    child: (parent, name) => ({
      hooks: parent.hooks || name === "hooks",
      agents: parent.agents || name === "agents",
      skills: parent.skills || name === "skills",
    }),
    file: (path, name, ctx) => {
      let wanted = false;
      if (name === "SKILL.md") {
        classes.skills.push(path);
        wanted = true;
      }
      if (ctx.hooks && name.endsWith(".mjs")) {
        classes.hooks.push(path);
        wanted = true;
      }
      if (ctx.agents && !ctx.skills && name.endsWith(".md")) {
        classes.agents.push(path);
        wanted = true;
      }
      return wanted;
    },
  };
  // Keep only the listings a later `references` walk can reuse: the whole tree would cost memory.
  const store = (dir: string) => dir.includes("/references");
  const result = walk(
    root,
    st,
    { follow: false, prune: true, listings: out.listings, store },
    visitor,
    {
      hooks: false,
      agents: false,
      skills: false,
    },
  );
  const issues: WalkProblem[] = [];
  const unreadable: string[] = [];
  for (const problem of result.problems) {
    if (problem.kind === "unreadable") unreadable.push(problem.path);
    else issues.push(problem);
  }
  for (const path of unreadable.sort(compareUtf8)) {
    out.warnings.push(`⚠️ skipped unreadable directory: ${path}`);
  }
  // Lossy would-be rows were pushed to a class before the walk rejected them: keep only accepted.
  const accepted = new Set(result.files);
  for (const key of ["hooks", "agents", "skills"] as const) {
    classes[key] = classes[key].filter((p) => accepted.has(p)).sort(compareUtf8);
  }
  out.walkIssue(label, root, issues);
  return classes;
}

/** Run every discovery step (§3.3) for the root `root` labelled `label`. */
export function scanRoot(out: Discovery, label: RootLabel, root: string): void {
  const rootStat = statOrError(root);
  if ("error" in rootStat || !rootStat.isDirectory) return;

  // 1–2: probes.
  probe(out, label, `${root}/CLAUDE.md`, "startup-instruction");
  probe(out, label, `${root}/CLAUDE.local.md`, "startup-instruction");
  probe(out, label, `${root}/AGENTS.md`, "client-or-import-dependent");
  probe(out, label, `${root}/.claude/AGENTS.md`, "client-or-import-dependent");

  // 3: rules, one merged sorted list.
  const rules = [
    ...instructionFiles(out, label, `${root}/rules`),
    ...instructionFiles(out, label, `${root}/.claude/rules`),
  ].sort(compareUtf8);
  for (const path of rules) {
    const read = readFileMeasure(path, true);
    if (!read.ok) {
      out.issue(label, path, `'${path}': ${read.reason}`);
      continue;
    }
    const loading = isPathScopedRule(read.content!) ? "path-scoped-rule" : "unscoped-rule";
    out.rows.push({
      path,
      root: label,
      tier: "always-on",
      kind: "file",
      bytes: read.size,
      estimated: false,
      loading,
    });
  }

  // 4: conventions, one level.
  const conventionDir = `${root}/.claude/convention`;
  if (directoryStat(out, label, conventionDir) !== undefined) {
    const listed = listDirectory(conventionDir);
    out.walkIssue(label, conventionDir, listed.problems);
    for (const path of listed.files.sort(compareUtf8)) {
      addFileRow(out, label, path, "always-on", "import-or-read-required");
    }
  }

  // 5: project memory.
  addMemoryRows(out, label, memoryFiles(out, label, `${root}/.claude/memory`));

  // 6–8: one physical, pruned root walk, classified.
  const classes = rootWalk(out, label, root, rootStat);

  for (const path of classes.hooks) {
    const read = readFileMeasure(path, true);
    if (!read.ok) {
      out.issue(label, path, `'${path}': ${read.reason}`);
      continue;
    }
    const estimate = hookEstimate(read.content!);
    if (estimate <= 1) continue;
    out.rows.push({
      path,
      root: label,
      tier: "always-on",
      kind: "hook-payload",
      bytes: estimate,
      estimated: true,
      loading: "runtime-dependent",
    });
  }

  for (const path of classes.agents) {
    const read = readFileMeasure(path, true);
    if (!read.ok) {
      out.issue(label, path, `'${path}': ${read.reason}`);
      continue;
    }
    out.rows.push({
      path,
      root: label,
      tier: "per-spawn",
      kind: "file",
      bytes: read.size,
      estimated: false,
      loading: "selected-agent",
    });
    out.rows.push({
      path,
      root: label,
      tier: "always-on",
      kind: "field:description",
      bytes: descriptionBytes(read.content!),
      estimated: false,
      loading: "runtime-dependent",
    });
  }

  for (const path of classes.skills) {
    addFileRow(out, label, path, "per-invocation", "invoked-skill");
    const references = instructionFiles(
      out,
      label,
      `${path.slice(0, path.lastIndexOf("/"))}/references`,
    );
    for (const ref of references.sort(compareUtf8)) {
      addFileRow(out, label, ref, "per-invocation", "on-demand");
    }
  }
}
