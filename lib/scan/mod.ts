/**
 * Public API of the scan tool (re-exported by the root `mod.ts`): the scan as a function, the
 * renderer, the command line, the measurement functions and the output document types and
 * validator. The zod schemas themselves live in `lib/scan/schema.ts` (imported directly by
 * context-guard), outside the documented API, because zod's types are not part of it.
 *
 * @module
 */

export {
  type Loading,
  parseScanDocument,
  type RootLabel,
  type RowKind,
  type ScanDocument,
  type ScanDocumentParse,
  type ScanIssue,
  type ScanRow,
  type ScanTotal,
  type ScanTotals,
  type Tier,
  type TierFilter,
} from "./schema.ts";
export { scanContext, type ScanOptions, type ScanResult } from "./scan.ts";
export { admitRows, buildDocument, computeTotals, renderScanDocument } from "./document.ts";
export type { CandidateRow } from "./discovery.ts";
export { parseScanArgs, SCAN_HELP, type ScanCommand } from "./cli.ts";
export { descriptionBytes, hookEstimate, isPathScopedRule, tokensOf } from "./measure.ts";
export { memorySlugs, resolveProjectRoot } from "./roots.ts";
