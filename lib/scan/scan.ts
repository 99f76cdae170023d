/**
 * The scan as a library call: resolve the roots, run discovery in output order, admit rows and
 * build the document. Nothing here prints or picks an exit code; that is `cli.ts`'s job.
 *
 * @module
 */

import { globalRoot } from "../paths.ts";
import { addMemoryRows, type CandidateRow, Discovery, memoryFiles, scanRoot } from "./discovery.ts";
import { admitRows, buildDocument } from "./document.ts";
import { memorySlugs, resolveProjectRoot } from "./roots.ts";
import type { ScanDocument, ScanRow } from "./schema.ts";

/** What to scan. */
export interface ScanOptions {
  /**
   * Project root as given on the command line (`--root`), relative to the logical cwd; default:
   * `CLAUDE_PROJECT_DIR`, the git toplevel, or the cwd (`references/context-scan.md#roots`).
   */
  root?: string;
  /** Also scan the global root (`--global`). */
  global?: boolean;
  /** Tier filter (default `all`). */
  tier?: "all" | "always-on" | "per-spawn" | "per-invocation";
  /**
   * Add what Claude Code really loads (`--loaded`): rows gain `loaded_bytes`, `loaded_tokens` and
   * `limits`, totals a `loaded` sum (`references/context-scan.md#loaded-figures`).
   */
  loaded?: boolean;
  /**
   * `--plugin-dir` folders (repeatable, as Claude Code's own flag): with `loaded`, each is counted
   * as an installed plugin (`references/context-scan.md#plugins`).
   */
  pluginDirs?: string[];
}

/** What the `--loaded` step needs to know about the scan's roots. */
export interface LoadingContext {
  /** The project root `R`. */
  project: string;
  /** The global root `G`. */
  global: string;
  /** Whether `G` is scanned (`--global`). */
  includeGlobal: boolean;
  /** Instruction files the root walk met below `R` (the on-access ones among them). */
  nestedInstructions?: readonly string[];
}

/**
 * What `--loaded` adds to a scan: the extra rows it inventories (one skill listing per
 * `SKILL.md`), then the loaded figures of the admitted rows.
 */
export interface LoadingStep {
  /** The candidate rows with `--loaded`'s extra rows, in output order. */
  addRows(candidates: readonly CandidateRow[], context: LoadingContext): CandidateRow[];
  /** The admitted rows, each with `loaded_bytes`, `loaded_tokens` and `limits`. */
  annotate(rows: readonly ScanRow[]): ScanRow[];
}

/** A finished scan. */
export interface ScanResult {
  /** The output document. */
  document: ScanDocument;
  /** True when `document.scan_issues` is empty: the inventory is complete. */
  complete: boolean;
  /**
   * Directories the broad root walk skipped (they never make the inventory incomplete): kind
   * `unreadable-directory`, the root whose walk met it, its logical path and the OS reason.
   */
  warnings: Array<{
    kind: "unreadable-directory";
    root: "project" | "global";
    path: string;
    reason: string;
  }>;
}

/** The two roots of a scan, already resolved. */
export interface ScanRoots {
  /** The project root `R` (logical, absolute). */
  project: string;
  /** The global root `G`: scanned only with `global`, but always the base of per-project memory. */
  global: string;
}

/**
 * Scan the project (and optionally global) context inventory, with `loading` (the `--loaded`
 * step, `createLoadingStep()` of `loading.ts`) when `options.loaded` asks for it — passed in, so
 * a scan without it never loads the loading rules. Throws `UsageError` for a `root` that is not a
 * directory, and `EnvironmentError` when neither `CLAUDE_CONFIG_DIR` nor `HOME` is set. The
 * library's `scanContext` (`mod.ts`) supplies the step itself.
 */
export function scanProject(options: ScanOptions = {}, loading?: LoadingStep): ScanResult {
  const project = resolveProjectRoot(options.root);
  return scanRoots({ project, global: globalRoot() }, options, loading);
}

/**
 * {@linkcode scanProject} for roots already resolved (`options.root` is ignored): no environment
 * is read.
 */
export function scanRoots(
  roots: ScanRoots,
  options: ScanOptions = {},
  loading?: LoadingStep,
): ScanResult {
  const tier = options.tier ?? "all";
  const out = new Discovery();

  scanRoot(out, "project", roots.project);
  for (const slug of memorySlugs(roots.project)) {
    const memory = `${roots.global}/projects/${slug}/memory`;
    addMemoryRows(out, "project", memoryFiles(out, "project", memory));
  }
  if (options.global) scanRoot(out, "global", roots.global);

  if (options.loaded && loading === undefined) {
    throw new TypeError("scanRoots: loaded needs the loading step");
  }
  const candidates = loading
    ? loading.addRows(out.rows, {
      project: roots.project,
      global: roots.global,
      includeGlobal: options.global === true,
      nestedInstructions: out.nestedInstructions,
    })
    : out.rows;
  const admitted = admitRows(candidates, tier);
  const rows = loading ? loading.annotate(admitted) : admitted;
  const global = options.global ? roots.global : null;
  const document = buildDocument(roots.project, global, tier, rows, out.issues, {
    loaded: loading !== undefined,
  });
  return { document, complete: out.issues.length === 0, warnings: out.warnings };
}
