/**
 * Discovery (`references/context-scan.md#discovery`): the steps run for each scanned root, in
 * order, producing candidate rows (before tier filter and dedup), discovery issues and root-walk
 * warnings.
 *
 * @module
 */

import { isAbsent, osReason } from "../_fs/errors.ts";
import { isSymlink } from "../_fs/inspect.ts";
import { compareUtf8 } from "../sort.ts";
import { measureFile, scanFile, statFollow } from "./files.ts";
import { DescriptionScanner, HookScanner, type LineScanner, RuleScopeScanner } from "./measure.ts";
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

/**
 * A directory the broad root walk could not list or examine: skipped with a warning, never an issue
 * (`references/context-scan.md#exit-codes-and-stderr`).
 */
export interface ScanWarning {
  /** Always `unreadable-directory`. */
  kind: "unreadable-directory";
  /** Label of the root whose walk met the directory. */
  root: "project" | "global";
  /** Logical path of the directory. */
  path: string;
  /** The OS reason (`Permission denied`). */
  reason: string;
}

/** Accumulates everything discovery finds, in occurrence order. */
export class Discovery {
  /** Candidate rows in step order. */
  readonly rows: CandidateRow[] = [];
  /** Issues in occurrence order. */
  readonly issues: ScanIssue[] = [];
  /** Unreadable directories met by a root walk, sorted by path within each root. */
  readonly warnings: ScanWarning[] = [];
  /** Directory listings read so far this run (see `WalkOptions.listings`). */
  readonly listings: Map<string, Deno.DirEntry[]> = new Map();
  /**
   * Instruction files the project's root walk met below the root (`CLAUDE.md`, `CLAUDE.local.md`,
   * `.claude/…`): never rows of the plain scan; `--loaded` reads the on-access ones from here.
   */
  readonly nestedInstructions: string[] = [];

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

  /**
   * Stream `path` through `scanner` (only as far as its result needs): the file's size and the
   * result, or `undefined` after recording an issue when it cannot be read; `share` keeps a small
   * file's text for the loading model (`files.ts`).
   */
  scan<R>(
    root: RootLabel,
    path: string,
    scanner: LineScanner<R>,
    share = false,
  ): { size: number; result: R } | undefined {
    const read = scanFile(path, scanner, undefined, share);
    if (read.ok) return { size: read.size, result: read.result };
    this.issue(root, path, `'${path}': ${read.reason}`);
    return undefined;
  }

  /** Record an issue for a stat failure other than "nothing is there". */
  statIssue(root: RootLabel, path: string, error: unknown): void {
    if (!isAbsent(error)) this.issue(root, path, `'${path}': ${osReason(error)}`);
  }
}

const INSTRUCTION_LINK_DETAIL = "Instruction directory link does not resolve to a directory";

const anyMarkdown: WalkVisitor<null> = {
  child: () => null,
  file: (_path, name) => name.endsWith(".md"),
};

/** A directory to walk: its stat, or `undefined` when there is nothing to walk. */
function directoryStat(out: Discovery, label: RootLabel, path: string): Deno.FileInfo | undefined {
  const st = statFollow(path);
  if (!("error" in st)) return st.isDirectory ? st : undefined;
  out.statIssue(label, path, st.error);
  return undefined;
}

/**
 * The `*.md` files of an instruction root (`rules`, `.claude/rules`, `references`) — a followed,
 * pruned walk — or an issue when it is a link that does not resolve to a directory
 * (`references/context-scan.md#walks`). `alwaysOn`: its files become always-on rows (rules, not a
 * skill's references).
 */
export function instructionFiles(
  out: Discovery,
  label: RootLabel,
  root: string,
  alwaysOn = true,
): string[] {
  const st = statFollow(root);
  if ("error" in st || !st.isDirectory) {
    if (isSymlink(root)) out.issue(label, root, INSTRUCTION_LINK_DETAIL);
    else if ("error" in st) out.statIssue(label, root, st.error);
    return [];
  }
  const result = walk(
    root,
    st,
    { follow: true, prune: true, listings: out.listings, noteLinks: alwaysOn },
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
    { follow: false, prune: false, listings: out.listings, noteLinks: true },
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

/**
 * The rows whose files `--loaded`'s model reads too (instruction files, skills, the memory index):
 * not a skill's other files, topic memory or conventions, which only an access reads.
 */
const MODEL_READS: ReadonlySet<Loading> = new Set<Loading>([
  "startup-instruction",
  "client-or-import-dependent",
  "invoked-skill",
  "memory-index-limited",
]);

/** Measure `path` (a regular file) and emit a `file` row, or an issue when it cannot be read. */
function addFileRow(
  out: Discovery,
  label: RootLabel,
  path: string,
  tier: Tier,
  loading: Loading,
): void {
  // Files the loading model reads keep their text for it (`files.ts`'s `share`).
  const read = measureFile(path, MODEL_READS.has(loading));
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

/** A probe: a row when `path` is a regular file after following links, else nothing or an issue. */
function probe(out: Discovery, label: RootLabel, path: string, loading: Loading): void {
  const st = statFollow(path);
  if ("error" in st) out.statIssue(label, path, st.error);
  else if (st.isFile) addFileRow(out, label, path, "always-on", loading);
}

/**
 * Which interesting components lie between the root and a directory: relative to the root, so
 * where the root lives does not matter (D6 in
 * `references/context-scan.md#differences-from-the-original`).
 */
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

/** A file Claude Code may load when a file below its folder is accessed (its name, its path). */
export function isInstructionName(name: string, path: string): boolean {
  return name === "CLAUDE.md" || name === "CLAUDE.local.md" ||
    (name.endsWith(".md") && path.includes("/.claude/rules/"));
}

function rootWalk(
  out: Discovery,
  label: "project" | "global",
  root: string,
  st: Deno.FileInfo,
): RootWalkClasses {
  const classes: RootWalkClasses = { hooks: [], agents: [], skills: [] };
  const nested = label === "project" ? out.nestedInstructions : [];
  const visitor: WalkVisitor<RootContext> = {
    child: (parent, name) => ({
      hooks: parent.hooks || name === "hooks",
      agents: parent.agents || name === "agents",
      skills: parent.skills || name === "skills",
    }),
    file: (path, name, ctx) => {
      let wanted = false;
      if (isInstructionName(name, path)) nested.push(path);
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
  const unreadable: ScanWarning[] = [];
  for (const problem of result.problems) {
    if (problem.kind === "unreadable") {
      unreadable.push({
        kind: "unreadable-directory",
        root: label,
        path: problem.path,
        reason: problem.reason,
      });
    } else {
      issues.push(problem);
    }
  }
  // Listings come in OS order; sorting keeps the warnings reproducible.
  out.warnings.push(...unreadable.sort((a, b) => compareUtf8(a.path, b.path)));
  // Lossy would-be rows were pushed to a class before the walk rejected them: keep only accepted.
  const accepted = new Set(result.files);
  for (const key of ["hooks", "agents", "skills"] as const) {
    classes[key] = classes[key].filter((p) => accepted.has(p)).sort(compareUtf8);
  }
  out.walkIssue(label, root, issues);
  return classes;
}

/**
 * Run every discovery step for the root `root` labelled `label`
 * (`references/context-scan.md#steps-in-output-order`).
 */
export function scanRoot(out: Discovery, label: "project" | "global", root: string): void {
  const rootStat = statFollow(root);
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
    const rule = out.scan(label, path, new RuleScopeScanner(), true);
    if (rule === undefined) continue;
    const loading = rule.result ? "path-scoped-rule" : "unscoped-rule";
    out.rows.push({
      path,
      root: label,
      tier: "always-on",
      kind: "file",
      bytes: rule.size,
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
    const hook = out.scan(label, path, new HookScanner(), true);
    if (hook === undefined) continue;
    const estimate = hook.result;
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
    const agent = out.scan(
      label,
      path,
      new DescriptionScanner(),
      // Claude Code lists the agents of `.claude/agents` (the global root's `agents`) only.
      label === "global" || path.includes("/.claude/agents/"),
    );
    if (agent === undefined) continue;
    out.rows.push({
      path,
      root: label,
      tier: "per-spawn",
      kind: "file",
      bytes: agent.size,
      estimated: false,
      loading: "selected-agent",
    });
    out.rows.push({
      path,
      root: label,
      tier: "always-on",
      kind: "field:description",
      bytes: agent.result,
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
      false,
    );
    for (const ref of references.sort(compareUtf8)) {
      addFileRow(out, label, ref, "per-invocation", "on-demand");
    }
  }
}
