/**
 * The zod schema of the context-scan output document — the single definition every consumer
 * (context-guard `state`, tests) parses scan documents with.
 *
 * Parse-side only: it accepts every document the scanner emits. Key order and layout are the
 * writer's business (`document.ts`). The public types (`ScanDocument`, `ScanRow`, `ScanIssue`,
 * `ScanTotal`) are spelled out in one piece, so the public API documents itself without naming a
 * dozen small unions; the short names the code uses (`Tier`, `Loading`, …) are derived from them.
 * `_check*` constants prove schema and type agree. The root `mod.ts` exports the types and
 * {@linkcode parseScanDocument}, never zod objects.
 *
 * @module
 */

import * as z from "../_zod.ts";
import type { ContextCategory } from "./categories.ts";
import { type ScanObservedTiers, ScanObservedTiersSchema } from "./schema_tiers.ts";

export type {
  ScanObservedAccess,
  ScanObservedInvocation,
  ScanObservedPreload,
  ScanObservedSpawn,
  ScanObservedSpawnRequest,
  ScanObservedTiers,
} from "./schema_tiers.ts";

/** An inventory tier. */
export type Tier = ScanRow["tier"];
/** The three inventory tiers. */
export const TierSchema = z.deferred(() => z.enum(["always-on", "per-spawn", "per-invocation"]));

/** A `--tier` value: a tier or `all`. */
export type TierFilter = ScanDocument["tier_filter"];
/** The `--tier` values. */
export const TierFilterSchema = z.deferred(() =>
  z.enum([
    "all",
    "always-on",
    "per-spawn",
    "per-invocation",
  ])
);

/** Which scanned root a row or issue belongs to. */
export type RootLabel = ScanRow["root"];
/** The root labels. */
export const RootLabelSchema = z.deferred(() => z.enum(["project", "global", "plugin", "managed"]));

/** What a row measures. */
export type RowKind = ScanRow["kind"];
/** The row kinds. */
export const RowKindSchema = z.deferred(() =>
  z.enum([
    "file",
    "field:description",
    "hook-payload",
  ])
);

/** The loading condition reported for a row. */
export type Loading = ScanRow["loading"];
/** The loading conditions. */
export const LoadingSchema = z.deferred(() =>
  z.enum([
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
    "imported-instruction",
    "command-listing",
    "agent-listing",
    "hook-context",
    "invoked-command",
    "on-access-instruction",
    "output-style",
  ])
);

/**
 * Why a row's `loaded_bytes` differs from what a whole-file count suggests (`--loaded` only;
 * `references/context-scan.md#loaded-figures`).
 */
export type LimitCode = NonNullable<ScanRow["limits"]>[number];
/** The limit codes. */
export const LimitCodeSchema = z.deferred(() =>
  z.enum([
    "frontmatter-stripped",
    "html-comments-hidden",
    "import-depth-exceeded",
    "import-external",
    "import-skipped",
    "memory-truncated",
    "description-capped",
    "listing-budget",
    "not-listed",
    "path-scoped",
    "on-demand",
    "import-only",
    "agents-md-unused",
    "not-loaded",
    "loaded-elsewhere",
    "hook-runtime",
    "estimated-large-file",
    "unreadable",
    "on-access",
    "shell-runtime",
    "user-invoked-only",
    "read-too-large",
    "excluded",
  ])
);

/** The `/context` groups `--loaded` fills (`lib/scan/categories.ts` names them all). */
export type LoadedCategory = NonNullable<ScanRow["category"]>;
/** The loaded categories. */
export const LoadedCategorySchema = z.deferred(() =>
  z.enum(["system-prompt", "memory-files", "skills", "agents", "hooks"])
);

/** The moments a hook's output is sent. */
export const HookFiringSchema = z.deferred(() =>
  z.enum(["start-up", "every-prompt", "every-tool-call"])
);

/** One inventory row of `files` (keys in output order). */
export interface ScanRow {
  /** Logical path of the measured file. */
  path: string;
  /**
   * Label of the root being scanned when the row was found (`plugin`: a `--plugin-dir` or an
   * installed plugin; `managed`: the managed policy folder).
   */
  root: "project" | "global" | "plugin" | "managed";
  /** Inventory tier. */
  tier: "always-on" | "per-spawn" | "per-invocation";
  /** What is measured. */
  kind: "file" | "field:description" | "hook-payload";
  /** File size, description bytes or hook estimate. */
  bytes: number;
  /** `floor(bytes / 4)`. */
  tokens: number;
  /** True for hook-payload estimates. */
  estimated: boolean;
  /** Loading condition (`references/context-scan.md#output-document`). */
  loading:
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
    | "skill-listing"
    | "imported-instruction"
    | "command-listing"
    | "agent-listing"
    | "hook-context"
    | "invoked-command"
    | "on-access-instruction"
    | "output-style";
  /** `--loaded` only: the bytes the agent receives at the point the row's tier names. */
  loaded_bytes?: number;
  /** `--loaded` only: `floor(loaded_bytes / 4)`. */
  loaded_tokens?: number;
  /** `--loaded` only: the loading rules that shaped `loaded_bytes` (possibly none). */
  limits?: Array<
    | "frontmatter-stripped"
    | "html-comments-hidden"
    | "import-depth-exceeded"
    | "import-external"
    | "import-skipped"
    | "memory-truncated"
    | "description-capped"
    | "listing-budget"
    | "not-listed"
    | "path-scoped"
    | "on-demand"
    | "import-only"
    | "agents-md-unused"
    | "not-loaded"
    | "loaded-elsewhere"
    | "hook-runtime"
    | "estimated-large-file"
    | "unreadable"
    | "on-access"
    | "shell-runtime"
    | "user-invoked-only"
    | "read-too-large"
    | "excluded"
  >;
  /**
   * `--loaded` only: the `/context` group the row's loaded bytes count in at session start
   * (`null` for rows of the per-spawn and per-invocation tiers).
   */
  category?: "system-prompt" | "memory-files" | "skills" | "agents" | "hooks" | null;
  /** `--loaded` only, listing rows: the entry's name as the listing writes it. */
  name?: string;
  /** `--loaded` only, imports: the file whose `@path` loaded this one. */
  imported_by?: string;
  /** `--loaded` only: the file a row whose path is a symbolic link resolves to. */
  resolves_to?: string;
  /**
   * `--loaded` only, path-scoped rules and subfolders' instruction files: the bytes the first
   * read or write of a matching file sends (`references/context-scan.md#tier-rules`).
   */
  on_access_bytes?: number;
  /** `--loaded` only, hook rows: when the hook's output is sent. */
  fires?: Array<"start-up" | "every-prompt" | "every-tool-call">;
}

/** Schema of one inventory row. */
export const ScanRowSchema = z.deferred(() =>
  z.object({
    path: z.string(),
    root: RootLabelSchema,
    tier: TierSchema,
    kind: RowKindSchema,
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
    estimated: z.boolean(),
    loading: LoadingSchema,
    loaded_bytes: z.optional(z.int().check(z.nonnegative())),
    loaded_tokens: z.optional(z.int().check(z.nonnegative())),
    limits: z.optional(z.array(LimitCodeSchema)),
    category: z.optional(z.nullable(LoadedCategorySchema)),
    name: z.optional(z.string()),
    imported_by: z.optional(z.string()),
    resolves_to: z.optional(z.string()),
    on_access_bytes: z.optional(z.int().check(z.nonnegative())),
    fires: z.optional(z.array(HookFiringSchema)),
  })
);

/** When a hook's output is sent (`references/context-scan.md#tier-rules`). */
export type HookFiring = NonNullable<ScanRow["fires"]>[number];

/** One entry of `scan_issues` (keys in output order). */
export interface ScanIssue {
  /** Label of the root being scanned (per-project memory: `project`). */
  root: "project" | "global" | "plugin" | "managed";
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
export const ScanIssueSchema = z.deferred(() =>
  z.object({
    root: RootLabelSchema,
    path: z.string(),
    kind: z.literal("discovery-incomplete"),
    exit_status: z.int(),
    detail: z.string(),
  })
);

/** `{files, bytes, tokens}` of the loaded figures of one tier (`--loaded` only). */
export type ScanLoadedTotal = NonNullable<ScanTotal["loaded"]>;

/** Schema of a loaded total. */
export const ScanLoadedTotalSchema = z.deferred(() =>
  z.object({
    files: z.int().check(z.nonnegative()),
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
  })
);

/** `{files, bytes, tokens}` of one tier or the grand total. */
export interface ScanTotal {
  /** Admitted rows. */
  files: number;
  /** Sum of their bytes. */
  bytes: number;
  /** Sum of their per-row token floors. */
  tokens: number;
  /** `--loaded` only: the same sums over the loaded figures (rows with `loaded_bytes` > 0). */
  loaded?: { files: number; bytes: number; tokens: number };
}

/** Schema of one total. */
export const ScanTotalSchema = z.deferred(() =>
  z.object({
    files: z.int().check(z.nonnegative()),
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
    loaded: z.optional(ScanLoadedTotalSchema),
  })
);

/** The `totals` object: per tier, then `grand`. */
export type ScanTotals = ScanDocument["totals"];

/** Schema of the `totals` object. */
export const ScanTotalsSchema = z.deferred(() =>
  z.object({
    "always-on": ScanTotalSchema,
    "per-spawn": ScanTotalSchema,
    "per-invocation": ScanTotalSchema,
    grand: ScanTotalSchema,
  })
);

/** The `/context` groups of an observation (`lib/scan/categories.ts`). */
export const ObservedCategorySchema = z.deferred(() =>
  z.enum([
    "system-prompt",
    "tools",
    "memory-files",
    "skills",
    "agents",
    "hooks",
    "environment",
    "messages",
    "unattributed",
  ])
);

/** `{bytes, tokens}` of an observed group or of the whole request. */
export interface ScanObservedSize {
  /** UTF-8 bytes of the text Claude Code sent. */
  bytes: number;
  /** `floor(bytes / 4)`. */
  tokens: number;
}

/** Schema of an observed size. */
export const ScanObservedSizeSchema = z.deferred(() =>
  z.object({
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
  })
);

/** One source of an observation: an instruction file, a listing entry or a hook's output. */
export interface ScanObservedSource {
  /** The group it counts in. */
  category: ContextCategory;
  /** What it is. */
  kind:
    | "instruction"
    | "rule"
    | "import"
    | "memory-index"
    | "skill"
    | "command"
    | "agent"
    | "hook"
    | "output-style";
  /** The listing entry's name, the hook line's label, or (files) the real path. */
  name: string;
  /** The real file it came from; `null` for a built-in entry, a hook, or a file not found. */
  path: string | null;
  /** A listing entry that matches no file: Claude Code's own (a plugin entry is never built-in). */
  built_in: boolean;
  /** Bytes Claude Code sent for it. */
  bytes: number;
  /** `floor(bytes / 4)`. */
  tokens: number;
  /** Files only: how Claude Code described the file (`project instructions, …`). */
  origin?: string;
  /** Files only: the file's size on disk now (`null` when it cannot be read). */
  file_bytes?: number | null;
  /** `memory-index` only: true when Claude Code sent less than the whole file. */
  cut?: boolean;
}

/** Schema of one observed source. */
export const ScanObservedSourceSchema = z.deferred(() =>
  z.object({
    category: ObservedCategorySchema,
    kind: z.enum([
      "instruction",
      "rule",
      "import",
      "memory-index",
      "skill",
      "command",
      "agent",
      "hook",
      "output-style",
    ]),
    name: z.string(),
    path: z.nullable(z.string()),
    built_in: z.boolean(),
    bytes: z.int().check(z.nonnegative()),
    tokens: z.int().check(z.nonnegative()),
    origin: z.optional(z.string()),
    file_bytes: z.optional(z.nullable(z.int().check(z.nonnegative()))),
    cut: z.optional(z.boolean()),
  })
);

/** What `--observe` adds to the document: the request the real Claude Code sent, measured. */
export interface ScanObserved {
  /** `claude --version`'s number. */
  claude_code_version: string;
  /** True when `claude` ran in a fresh network namespace holding only loopback. */
  sandboxed: boolean;
  /** The Claude Code versions the request layout was checked on. */
  layout_checked_on: string[];
  /** Bytes and tokens per `/context` group, every group in report order. */
  categories: {
    "system-prompt": ScanObservedSize;
    tools: ScanObservedSize;
    "memory-files": ScanObservedSize;
    skills: ScanObservedSize;
    agents: ScanObservedSize;
    hooks: ScanObservedSize;
    environment: ScanObservedSize;
    messages: ScanObservedSize;
    unattributed: ScanObservedSize;
  };
  /** The whole request's text: the sum of the groups. */
  total: ScanObservedSize;
  /** One row per instruction file, listing entry and hook output, in request order. */
  sources: ScanObservedSource[];
  /** Blocks not understood (counted as unattributed) and entries not copied. */
  warnings: string[];
  /** `--observe-tiers` only: what the scripted session sent per invocation, spawn and access. */
  tiers?: ScanObservedTiers;
}

/** Schema of an observation's bytes per `/context` group (every group). */
export const ScanObservedCategoriesSchema = z.deferred(() =>
  z.object({
    "system-prompt": ScanObservedSizeSchema,
    tools: ScanObservedSizeSchema,
    "memory-files": ScanObservedSizeSchema,
    skills: ScanObservedSizeSchema,
    agents: ScanObservedSizeSchema,
    hooks: ScanObservedSizeSchema,
    environment: ScanObservedSizeSchema,
    messages: ScanObservedSizeSchema,
    unattributed: ScanObservedSizeSchema,
  })
);

/** Schema of the `observed` object. */
export const ScanObservedSchema = z.deferred(() =>
  z.object({
    claude_code_version: z.string(),
    sandboxed: z.boolean(),
    layout_checked_on: z.array(z.string()),
    categories: ScanObservedCategoriesSchema,
    total: ScanObservedSizeSchema,
    sources: z.array(ScanObservedSourceSchema),
    warnings: z.array(z.string()),
    tiers: z.optional(ScanObservedTiersSchema),
  })
);

/** The context-scan output document. */
export interface ScanDocument {
  /** The scanned roots; `global` is `null` without `--global`. */
  roots: { project: string; global: string | null };
  /** The `--tier` value. */
  tier_filter: "all" | "always-on" | "per-spawn" | "per-invocation";
  /** Legacy name; the proxy is bytes/4. */
  token_model: "chars/4";
  /** What the numbers are. */
  measurement: {
    scope: "potential-inventory";
    token_proxy: "bytes/4";
    /** True only with `--observe`: then `observed` holds what Claude Code really sent. */
    actual_loading_observed: boolean;
  };
  /** Admitted rows in discovery order. */
  files: ScanRow[];
  /** Discovery problems; non-empty means exit 2. */
  scan_issues: ScanIssue[];
  /** Per-tier and grand totals of `files`: `grand` is the sum of the three tiers. */
  totals: {
    "always-on": ScanTotal;
    "per-spawn": ScanTotal;
    "per-invocation": ScanTotal;
    grand: ScanTotal;
  };
  /**
   * `--loaded` only: the loaded always-on rows summed per `/context` group, in the order
   * `/context` shows them.
   */
  categories?: {
    "system-prompt": { files: number; bytes: number; tokens: number };
    "memory-files": { files: number; bytes: number; tokens: number };
    skills: { files: number; bytes: number; tokens: number };
    agents: { files: number; bytes: number; tokens: number };
    hooks: { files: number; bytes: number; tokens: number };
  };
  /** `--observe` only: what the real Claude Code sent (`references/context-scan.md#observed`). */
  observed?: ScanObserved;
}

/** Schema of the whole document context-scan prints on stdout. */
export const ScanDocumentSchema = z.deferred(() =>
  z.object({
    roots: z.object({
      project: z.string(),
      global: z.nullable(z.string()),
    }),
    tier_filter: TierFilterSchema,
    token_model: z.literal("chars/4"),
    measurement: z.object({
      scope: z.literal("potential-inventory"),
      token_proxy: z.literal("bytes/4"),
      actual_loading_observed: z.boolean(),
    }),
    files: z.array(ScanRowSchema),
    scan_issues: z.array(ScanIssueSchema),
    totals: ScanTotalsSchema,
    categories: z.optional(z.object({
      "system-prompt": ScanLoadedTotalSchema,
      "memory-files": ScanLoadedTotalSchema,
      skills: ScanLoadedTotalSchema,
      agents: ScanLoadedTotalSchema,
      hooks: ScanLoadedTotalSchema,
    })),
    observed: z.optional(ScanObservedSchema),
  })
);

// Compile-time proof that the spelled-out types and the schemas agree in both directions.
const _checkDocument: z.ZodMiniType<ScanDocument> = ScanDocumentSchema;
const _checkDocumentBack: z.ZodMiniType<z.infer<typeof ScanDocumentSchema>> = z.deferred(() =>
  z.custom<
    ScanDocument
  >()
);
void _checkDocument;
void _checkDocumentBack;

/**
 * Validate a parsed JSON value as a context-scan document.
 *
 * @example
 * ```ts ignore
 * const parsed = parseScanDocument(JSON.parse(stdout));
 * if (!parsed.ok) throw new Error(parsed.error);
 * ```
 */
export function parseScanDocument(
  value: unknown,
): { ok: true; document: ScanDocument } | { ok: false; error: string } {
  const result = ScanDocumentSchema.safeParse(value);
  if (result.success) return { ok: true, document: result.data };
  const first = result.error.issues[0];
  const where = first?.path.length ? first.path.join(".") : "document";
  return { ok: false, error: `${where}: ${first?.message ?? "invalid"}` };
}
