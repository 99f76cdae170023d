/**
 * The zod schema of the context-scan output document — the single definition every consumer
 * (context-guard `state`, tests) parses scan documents with.
 *
 * Parse-side only: it accepts every document the scanner emits. Key order and layout are the
 * writer's business (`document.ts`). Types are spelled out (not inferred) so the public API
 * documents itself; `_check*` constants prove schema and type agree. The schemas keep their full
 * inferred zod types (consumers use `.shape`, `.pick`, `.extend`), so the root `mod.ts` exports the
 * types and {@linkcode parseScanDocument} rather than zod objects.
 *
 * @module
 */

import { z } from "zod";

/** An inventory tier. */
export type Tier = "always-on" | "per-spawn" | "per-invocation";
/** The three inventory tiers. */
export const TierSchema = z.enum(["always-on", "per-spawn", "per-invocation"]);

/** A `--tier` value: a tier or `all`. */
export type TierFilter = "all" | Tier;
/** The `--tier` values. */
export const TierFilterSchema = z.enum([
  "all",
  "always-on",
  "per-spawn",
  "per-invocation",
]);

/** Which scanned root a row or issue belongs to. */
export type RootLabel = "project" | "global";
/** The root labels. */
export const RootLabelSchema = z.enum(["project", "global"]);

/** What a row measures. */
export type RowKind = "file" | "field:description" | "hook-payload";
/** The row kinds. */
export const RowKindSchema = z.enum([
  "file",
  "field:description",
  "hook-payload",
]);

/** The loading condition reported for a row. */
export type Loading =
  | "startup-instruction"
  | "client-or-import-dependent"
  | "path-scoped-rule"
  | "unscoped-rule"
  | "import-or-read-required"
  | "memory-index-limited"
  | "on-demand"
  | "runtime-dependent"
  | "selected-agent"
  | "invoked-skill"
  | "skill-listing";
/** The loading conditions. */
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
  "skill-listing",
]);

/**
 * Why a row's `loaded_bytes` differs from what a whole-file count suggests (`--loaded` only;
 * `references/context-scan.md#loaded-figures`).
 */
export type LimitCode =
  | "html-comments-hidden"
  | "imports-included"
  | "import-depth-exceeded"
  | "import-unreadable"
  | "memory-truncated"
  | "description-capped"
  | "not-listed"
  | "path-scoped"
  | "on-demand"
  | "import-only"
  | "unreadable";
/** The limit codes. */
export const LimitCodeSchema = z.enum([
  "html-comments-hidden",
  "imports-included",
  "import-depth-exceeded",
  "import-unreadable",
  "memory-truncated",
  "description-capped",
  "not-listed",
  "path-scoped",
  "on-demand",
  "import-only",
  "unreadable",
]);

/** One inventory row of `files` (keys in output order). */
export interface ScanRow {
  /** Logical path of the measured file. */
  path: string;
  /** Label of the root being scanned when the row was found. */
  root: RootLabel;
  /** Inventory tier. */
  tier: Tier;
  /** What is measured. */
  kind: RowKind;
  /** File size, description bytes or hook estimate. */
  bytes: number;
  /** `floor(bytes / 4)`. */
  tokens: number;
  /** True for hook-payload estimates. */
  estimated: boolean;
  /** Loading condition. */
  loading: Loading;
  /** `--loaded` only: the bytes the agent receives at the point the row's tier names. */
  loaded_bytes?: number;
  /** `--loaded` only: `floor(loaded_bytes / 4)`. */
  loaded_tokens?: number;
  /** `--loaded` only: the loading rules that shaped `loaded_bytes` (possibly none). */
  limits?: LimitCode[];
}

/** Schema of one inventory row. */
export const ScanRowSchema = z.object({
  path: z.string(),
  root: RootLabelSchema,
  tier: TierSchema,
  kind: RowKindSchema,
  bytes: z.number().int().nonnegative(),
  tokens: z.number().int().nonnegative(),
  estimated: z.boolean(),
  loading: LoadingSchema,
  loaded_bytes: z.number().int().nonnegative().optional(),
  loaded_tokens: z.number().int().nonnegative().optional(),
  limits: z.array(LimitCodeSchema).optional(),
});

/** One entry of `scan_issues` (keys in output order). */
export interface ScanIssue {
  /** Label of the root being scanned (per-project memory: `project`). */
  root: RootLabel;
  /** The walk start, instruction root or file concerned. */
  path: string;
  /** Always `discovery-incomplete`. */
  kind: "discovery-incomplete";
  /** Always 1 in ctxkit (the original reported a child's status). */
  exit_status: number;
  /** One line per problem, joined with `\n`. */
  detail: string;
}

/** Schema of one discovery issue. */
export const ScanIssueSchema = z.object({
  root: RootLabelSchema,
  path: z.string(),
  kind: z.literal("discovery-incomplete"),
  exit_status: z.number().int(),
  detail: z.string(),
});

/** `{files, bytes, tokens}` of the loaded figures of one tier (`--loaded` only). */
export interface ScanLoadedTotal {
  /** Rows with `loaded_bytes` > 0. */
  files: number;
  /** Sum of their `loaded_bytes`. */
  bytes: number;
  /** Sum of their `loaded_tokens`. */
  tokens: number;
}

/** Schema of a loaded total. */
export const ScanLoadedTotalSchema = z.object({
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  tokens: z.number().int().nonnegative(),
});

/** `{files, bytes, tokens}` of one tier or the grand total. */
export interface ScanTotal {
  /** Admitted rows. */
  files: number;
  /** Sum of their bytes. */
  bytes: number;
  /** Sum of their per-row token floors. */
  tokens: number;
  /** `--loaded` only: the same sums over the loaded figures. */
  loaded?: ScanLoadedTotal;
}

/** Schema of one total. */
export const ScanTotalSchema = z.object({
  files: z.number().int().nonnegative(),
  bytes: z.number().int().nonnegative(),
  tokens: z.number().int().nonnegative(),
  loaded: ScanLoadedTotalSchema.optional(),
});

/** The `totals` object: per tier, then `grand`. */
export interface ScanTotals {
  /** Always-on tier. */
  "always-on": ScanTotal;
  /** Per-spawn tier. */
  "per-spawn": ScanTotal;
  /** Per-invocation tier. */
  "per-invocation": ScanTotal;
  /** Sum of the tiers. */
  grand: ScanTotal;
}

/** Schema of the `totals` object. */
export const ScanTotalsSchema = z.object({
  "always-on": ScanTotalSchema,
  "per-spawn": ScanTotalSchema,
  "per-invocation": ScanTotalSchema,
  grand: ScanTotalSchema,
});

/** The context-scan output document. */
export interface ScanDocument {
  /** The scanned roots; `global` is `null` without `--global`. */
  roots: { project: string; global: string | null };
  /** The `--tier` value. */
  tier_filter: TierFilter;
  /** Legacy name; the proxy is bytes/4. */
  token_model: "chars/4";
  /** What the numbers are. */
  measurement: {
    scope: "potential-inventory";
    token_proxy: "bytes/4";
    actual_loading_observed: false;
  };
  /** Admitted rows in discovery order. */
  files: ScanRow[];
  /** Discovery problems; non-empty means exit 2. */
  scan_issues: ScanIssue[];
  /** Per-tier and grand totals of `files`. */
  totals: ScanTotals;
}

/** Schema of the whole document context-scan prints on stdout. */
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

// Compile-time proof that the spelled-out types and the schemas agree in both directions.
const _checkDocument: z.ZodType<ScanDocument> = ScanDocumentSchema;
const _checkDocumentBack: z.ZodType<z.infer<typeof ScanDocumentSchema>> = z.custom<ScanDocument>();
void _checkDocument;
void _checkDocumentBack;

/** Outcome of {@linkcode parseScanDocument}. */
export type ScanDocumentParse =
  | { ok: true; document: ScanDocument }
  | { ok: false; error: string };

/**
 * Validate a parsed JSON value as a context-scan document.
 *
 * @example
 * ```ts ignore
 * const parsed = parseScanDocument(JSON.parse(stdout));
 * if (!parsed.ok) throw new Error(parsed.error);
 * ```
 */
export function parseScanDocument(value: unknown): ScanDocumentParse {
  const result = ScanDocumentSchema.safeParse(value);
  if (result.success) return { ok: true, document: result.data };
  const first = result.error.issues[0];
  const where = first?.path.length ? first.path.join(".") : "document";
  return { ok: false, error: `${where}: ${first?.message ?? "invalid"}` };
}
