/**
 * The zod schema of the context-scan output document — the single definition every consumer
 * (context-guard `state`, tests) parses scan documents with.
 *
 * Parse-side only: it accepts every document the scanner emits. Key order and layout are the
 * writer's business (`render.ts`).
 *
 * @module
 */

import { z } from "zod";

/** The three inventory tiers. */
export const TierSchema = z.enum(["always-on", "per-spawn", "per-invocation"]);
/** An inventory tier. */
export type Tier = z.infer<typeof TierSchema>;

/** The `--tier` values: a tier or `all`. */
export const TierFilterSchema = z.enum(["all", "always-on", "per-spawn", "per-invocation"]);
/** A `--tier` value. */
export type TierFilter = z.infer<typeof TierFilterSchema>;

/** Which scanned root a row or issue belongs to. */
export const RootLabelSchema = z.enum(["project", "global"]);
/** A root label. */
export type RootLabel = z.infer<typeof RootLabelSchema>;

/** What a row measures. */
export const RowKindSchema = z.enum(["file", "field:description", "hook-payload"]);
/** A row kind. */
export type RowKind = z.infer<typeof RowKindSchema>;

/** The loading condition reported for a row. */
export const LoadingSchema = z.enum([
  "startup-instruction",
  "client-or-import-dependent",
  "path-scoped-rule",
  "unscoped-rule",
  "import-or-read-required",
  "memory-index-limited",
  "on-demand",
  "runtime-dependent",
  "selected-agent",
  "invoked-skill",
]);
/** A loading condition. */
export type Loading = z.infer<typeof LoadingSchema>;

const count = z.number().int().nonnegative();

/** One inventory row of `files`. */
export const ScanRowSchema = z.object({
  path: z.string(),
  root: RootLabelSchema,
  tier: TierSchema,
  kind: RowKindSchema,
  bytes: count,
  tokens: count,
  estimated: z.boolean(),
  loading: LoadingSchema,
});
/** One inventory row. */
export type ScanRow = z.infer<typeof ScanRowSchema>;

/** One entry of `scan_issues`. */
export const ScanIssueSchema = z.object({
  root: RootLabelSchema,
  path: z.string(),
  kind: z.literal("discovery-incomplete"),
  exit_status: z.number().int(),
  detail: z.string(),
});
/** One discovery issue. */
export type ScanIssue = z.infer<typeof ScanIssueSchema>;

/** `{files, bytes, tokens}` of one tier or the grand total. */
export const ScanTotalSchema = z.object({
  files: count,
  bytes: count,
  tokens: count,
});
/** One total. */
export type ScanTotal = z.infer<typeof ScanTotalSchema>;

/** The `totals` object. */
export const ScanTotalsSchema = z.object({
  "always-on": ScanTotalSchema,
  "per-spawn": ScanTotalSchema,
  "per-invocation": ScanTotalSchema,
  grand: ScanTotalSchema,
});
/** The `totals` object. */
export type ScanTotals = z.infer<typeof ScanTotalsSchema>;

/** The whole document context-scan prints on stdout. */
export const ScanDocumentSchema = z.object({
  roots: z.object({
    project: z.string(),
    global: z.string().nullable(),
  }),
  tier_filter: TierFilterSchema,
  token_model: z.literal("chars/4"),
  measurement: z.object({
    scope: z.literal("potential-inventory"),
    token_proxy: z.literal("bytes/4"),
    actual_loading_observed: z.literal(false),
  }),
  files: z.array(ScanRowSchema),
  scan_issues: z.array(ScanIssueSchema),
  totals: ScanTotalsSchema,
});
/** The context-scan output document. */
export type ScanDocument = z.infer<typeof ScanDocumentSchema>;
