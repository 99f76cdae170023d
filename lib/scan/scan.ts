/**
 * The scan as a library call: resolve the roots, run discovery in §3.4 order, admit rows and build
 * the document.
 *
 * @module
 */

import { globalRoot } from "../paths.ts";
import { addMemoryRows, Discovery, memoryFiles, scanRoot } from "./discovery.ts";
import { admitRows, buildDocument } from "./document.ts";
import { memorySlugs, resolveProjectRoot } from "./roots.ts";
import type { ScanDocument, TierFilter } from "./schema.ts";

/** What to scan. */
export interface ScanOptions {
  /** Project root as given on the command line (`--root`); default: §2.1 resolution. */
  root?: string;
  /** Also scan the global root (`--global`). */
  global?: boolean;
  /** Tier filter (default `all`). */
  tier?: TierFilter;
}

/** A finished scan. */
export interface ScanResult {
  /** The output document. */
  document: ScanDocument;
  /** 0 when `scan_issues` is empty, else 2. */
  exitCode: 0 | 2;
  /** stderr warnings, one line each (`⚠️ skipped unreadable directory: <path>`). */
  warnings: string[];
}

/**
 * Scan the project (and optionally global) context inventory. Throws `CtxkitError` (exit 2) for a
 * `root` that is not a directory or when neither `CLAUDE_CONFIG_DIR` nor `HOME` is set.
 *
 * @example
 * ```ts ignore
 * const { document, exitCode } = scanContext({ root: ".", global: true });
 * console.log(document.totals.grand.tokens, exitCode);
 * ```
 */
export function scanContext(options: ScanOptions = {}): ScanResult {
  const tier = options.tier ?? "all";
  const project = resolveProjectRoot(options.root);
  const global = globalRoot();
  const out = new Discovery();

  scanRoot(out, "project", project);
  for (const slug of memorySlugs(project)) {
    addMemoryRows(out, "project", memoryFiles(out, "project", `${global}/projects/${slug}/memory`));
  }
  if (options.global) scanRoot(out, "global", global);

  const rows = admitRows(out.rows, tier);
  const document = buildDocument(project, options.global ? global : null, tier, rows, out.issues);
  return { document, exitCode: out.issues.length === 0 ? 0 : 2, warnings: out.warnings };
}
