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

export { scanContext, type ScanOptions, type ScanResult, type ScanWarning } from "./scan.ts";
export { renderScanDocument } from "./document.ts";
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
