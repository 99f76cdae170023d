/**
 * The scan as a library call: resolve the roots, run discovery in output order, admit rows and
 * build the document. Nothing here prints or picks an exit code; that is `cli.ts`'s job.
 *
 * @module
 */

import { globalRoot } from "../paths.ts";
import {
  addMemoryRows,
  type CandidateRow,
  Discovery,
  memoryFiles,
  scanRoot,
  type ScanWarning,
} from "./discovery.ts";
import { admitRows, buildDocument } from "./document.ts";
import { memorySlugs, resolveProjectRoot } from "./roots.ts";
import type { ScanDocument, ScanRow, TierFilter } from "./schema.ts";

export type { ScanWarning } from "./discovery.ts";

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
  tier?: TierFilter;
  /**
   * The `--loaded` step (`createLoadingStep()` from `lib/scan/loading.ts`): rows gain loaded
   * figures and limits, totals a `loaded` sum (`references/context-scan.md#loaded-figures`).
   * Passed in, so a scan without it never loads the loading rules.
   */
  loading?: LoadingStep;
}

/**
 * What `--loaded` adds to a scan: the extra rows it inventories (one skill listing per
 * `SKILL.md`), then the loaded figures of the admitted rows.
 */
export interface LoadingStep {
  /** The candidate rows with `--loaded`'s extra rows, in output order. */
  addRows(candidates: readonly CandidateRow[]): CandidateRow[];
  /** The admitted rows, each with `loaded_bytes`, `loaded_tokens` and `limits`. */
  annotate(rows: readonly ScanRow[]): ScanRow[];
}

/** A finished scan. */
export interface ScanResult {
  /** The output document. */
  document: ScanDocument;
  /** True when `document.scan_issues` is empty: the inventory is complete. */
  complete: boolean;
  /** Directories the broad root walk skipped (they never make the inventory incomplete). */
  warnings: ScanWarning[];
}

/** The two roots of a scan, already resolved. */
export interface ScanRoots {
  /** The project root `R` (logical, absolute). */
  project: string;
  /** The global root `G`: scanned only with `global`, but always the base of per-project memory. */
  global: string;
}

/**
 * Scan the project (and optionally global) context inventory. Throws `UsageError` for a `root`
 * that is not a directory, and `EnvironmentError` when neither `CLAUDE_CONFIG_DIR` nor `HOME` is
 * set.
 *
 * @example
 * ```ts ignore
 * import { scanContext } from "./mod.ts";
 * const { document, complete } = scanContext({ root: ".", global: true });
 * if (!complete) throw new Error(`incomplete inventory: ${document.scan_issues.length} issues`);
 * console.log(document.totals.grand.tokens);
 * ```
 */
export function scanContext(options: ScanOptions = {}): ScanResult {
  const project = resolveProjectRoot(options.root);
  return scanRoots({ project, global: globalRoot() }, options);
}

/**
 * {@linkcode scanContext} for roots already resolved (`options.root` is ignored): no environment
 * is read.
 */
export function scanRoots(roots: ScanRoots, options: ScanOptions = {}): ScanResult {
  const tier = options.tier ?? "all";
  const out = new Discovery();

  scanRoot(out, "project", roots.project);
  for (const slug of memorySlugs(roots.project)) {
    const memory = `${roots.global}/projects/${slug}/memory`;
    addMemoryRows(out, "project", memoryFiles(out, "project", memory));
  }
  if (options.global) scanRoot(out, "global", roots.global);

  const loading = options.loading;
  const candidates = loading ? loading.addRows(out.rows) : out.rows;
  const admitted = admitRows(candidates, tier);
  const rows = loading ? loading.annotate(admitted) : admitted;
  const global = options.global ? roots.global : null;
  const document = buildDocument(roots.project, global, tier, rows, out.issues, {
    loaded: loading !== undefined,
  });
  return { document, complete: out.issues.length === 0, warnings: out.warnings };
}
