/**
 * Public API of the scan tool (re-exported by the root `mod.ts`): what a skill author needs to
 * inventory a project's context in-process — the scan as a function, the byte-exact renderer, the
 * validator for a document read back from disk or a child's stdout, and the document types.
 *
 * The command line, the measurement rules and row admission stay internal: their results are in
 * the document. The zod schemas live in `lib/scan/schema.ts` (context-guard imports them directly)
 * and stay outside the API, because zod's types are not part of it.
 *
 * @example
 * ```ts ignore
 * import { renderScanDocument, scanContext } from "./mod.ts";
 * const { document, complete, warnings } = scanContext({ root: ".", tier: "always-on" });
 * for (const w of warnings) console.error(`skipped ${w.path}: ${w.reason}`);
 * if (!complete) throw new Error(`incomplete inventory: ${document.scan_issues.length} issues`);
 * console.log(renderScanDocument(document));
 * ```
 *
 * @module
 */

import { createLoadingStep } from "./loading.ts";
import { resolvePluginDirs } from "./roots.ts";
import { type ScanOptions, scanProject, type ScanResult } from "./scan.ts";

export type { ScanOptions, ScanResult } from "./scan.ts";
export { renderScanDocument } from "./document.ts";
export type { ContextCategory } from "./categories.ts";
export {
  type HookFiring,
  parseScanDocument,
  type ScanDocument,
  type ScanIssue,
  type ScanObserved,
  type ScanObservedAccess,
  type ScanObservedInvocation,
  type ScanObservedPreload,
  type ScanObservedSize,
  type ScanObservedSource,
  type ScanObservedSpawn,
  type ScanObservedSpawnRequest,
  type ScanObservedTiers,
  type ScanRow,
  type ScanTotal,
} from "./schema.ts";
export { type InvocationContext, type InvocationText, invocationText } from "./model/invocation.ts";

/**
 * Scan the project (and with `global` the global root) for every file that may enter the agent's
 * context, as the `context-scan` CLI does (`references/context-scan.md`): the document, whether
 * the inventory is complete (no `scan_issues`), and the directories the walk skipped. With
 * `loaded`, rows also carry what Claude Code really loads. Throws `UsageError` for a `root` that
 * is not a directory, `EnvironmentError` when neither `CLAUDE_CONFIG_DIR` nor `HOME` is set.
 *
 * @example
 * ```ts ignore
 * import { scanContext } from "./mod.ts";
 * const { document, complete } = scanContext({ root: ".", global: true, loaded: true });
 * if (!complete) throw new Error(`incomplete inventory: ${document.scan_issues.length} issues`);
 * console.log(document.totals["always-on"].loaded?.tokens);
 * ```
 */
export function scanContext(options: ScanOptions = {}): ScanResult {
  const pluginDirs = resolvePluginDirs(options.pluginDirs ?? []);
  return scanProject(options, options.loaded ? createLoadingStep({ pluginDirs }) : undefined);
}
