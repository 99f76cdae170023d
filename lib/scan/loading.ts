/**
 * The `--loaded` step (`references/context-scan.md#loaded-figures`): Claude Code's loading model
 * (`claude_model.ts`) laid over the inventory. Every source Claude Code sends gets its own row —
 * an inventory row when discovery found the file, a new row otherwise (an import right after its
 * importer, with `imported_by`) — whose `loaded_bytes` is the exact text Claude Code sends. A row
 * Claude Code does not load at session start counts 0 there, with a limit saying why; rows of the
 * per-spawn and per-invocation tiers count what that spawn or invocation sends, and on-access
 * sources what the first access sends (`tier_rows.ts`). Each row also names its `/context`
 * category.
 *
 * @module
 */

import { envValue } from "../paths.ts";
import type { CandidateRow } from "./discovery.ts";
import {
  type LoadedSource,
  type LoadingModel,
  loadingModel,
  skillListingPotential,
} from "./claude_model.ts";
import { linkTarget, logicalName, type ModelView, modelView } from "./loaded_rows.ts";
import { LIMIT_MEANINGS } from "./loading_rules.ts";
import { tierModel } from "./model/tiers.ts";
import { withOneReadEach } from "./model/read.ts";
import { type TierRows, tierRows } from "./tier_rows.ts";
import { tokensOf } from "./measure.ts";
import type { LoadingContext, LoadingStep } from "./scan.ts";
import type { LimitCode, LoadedCategory, ScanRow } from "./schema.ts";

// A plain list, not the zod enum: `--loaded` parses no JSON document, so it needs no zod schema.
const LIMIT_ORDER = Object.keys(LIMIT_MEANINGS) as LimitCode[];

/** `limits` in the documented order (that of `LIMIT_MEANINGS` and `LimitCodeSchema`). */
function ordered(limits: ReadonlySet<LimitCode>): LimitCode[] {
  return LIMIT_ORDER.filter((code) => limits.has(code));
}

/** How `--loaded` resolves what it cannot see in a file. */
export interface LoadingOptions {
  /** The home directory `@~/…` imports resolve against (default `$HOME`). */
  home?: string;
  /** `--plugin-dir` folders, already resolved (default none). */
  pluginDirs?: readonly string[];
  /** The listing budget override (default `$SLASH_COMMAND_TOOL_CHAR_BUDGET`). */
  budgetOverride?: string;
  /** The managed policy folder (default: the platform's, `/etc/claude-code` on Linux). */
  managed?: string;
}

/** Values by a row's path and kind: a map per kind, so no key is built per lookup. */
class ByPathKind<V> {
  readonly #kinds = new Map<string, Map<string, V>>();

  get(path: string, kind: string): V | undefined {
    return this.#kinds.get(kind)?.get(path);
  }

  has(path: string, kind: string): boolean {
    return this.#kinds.get(kind)?.has(path) ?? false;
  }

  set(path: string, kind: string, value: V): void {
    let paths = this.#kinds.get(kind);
    if (paths === undefined) {
      paths = new Map();
      this.#kinds.set(kind, paths);
    }
    paths.set(path, value);
  }
}

/** The `/context` group of an inventory row Claude Code does not load as a source. */
function categoryOf(row: CandidateRow | ScanRow): LoadedCategory | null {
  if (row.tier !== "always-on") return null;
  if (row.loading === "skill-listing" || row.loading === "command-listing") return "skills";
  if (row.kind === "field:description") return "agents";
  if (row.kind === "hook-payload") return "hooks";
  return "memory-files";
}

/** Why an always-on inventory row without a source loads nothing at session start. */
function absentLimit(row: ScanRow, model: ModelView & { agentsMdLoaded: boolean }): LimitCode[] {
  if (model.counted.has(row.path)) return ["loaded-elsewhere"];
  if (model.names.excludedFiles.has(row.path)) return ["excluded"];
  switch (row.loading) {
    case "path-scoped-rule":
      return ["path-scoped"];
    case "on-demand":
      return ["on-demand"];
    case "import-or-read-required":
      return ["import-only"];
    case "client-or-import-dependent":
      return model.agentsMdLoaded ? ["not-loaded"] : ["agents-md-unused"];
    case "skill-listing":
      return model.names.listingFiles.has(row.path) ? ["not-listed"] : ["not-loaded"];
    case "startup-instruction":
    case "unscoped-rule":
      // Read but empty once shown (nothing to say), or never read: outside Claude Code's layout.
      return model.names.instructionFiles.has(row.path) ? [] : ["not-loaded"];
    default:
      return ["not-loaded"];
  }
}

function newRow(source: LoadedSource): CandidateRow {
  return {
    path: source.path,
    root: source.root,
    tier: "always-on",
    kind: source.kind,
    bytes: source.potential,
    estimated: false,
    loading: source.loading,
  };
}

/**
 * The `--loaded` step for a scan.
 *
 * @example
 * ```ts ignore
 * import { scanProject } from "./scan.ts";
 * import { createLoadingStep } from "./loading.ts";
 * const { document } = scanProject({ root: ".", loaded: true }, createLoadingStep());
 * console.log(document.categories?.["memory-files"].tokens);
 * ```
 */
export function createLoadingStep(options: LoadingOptions = {}): LoadingStep {
  const home = options.home ?? envValue("HOME");
  let model: (ModelView & { agentsMdLoaded: boolean }) | undefined;
  let tiers: TierRows | undefined;
  const byKey = new ByPathKind<LoadedSource>();
  return {
    run: withOneReadEach,
    addRows(candidates: readonly CandidateRow[], context: LoadingContext): CandidateRow[] {
      // The global root always takes part (its skills count toward the listing budget, its files
      // are read first); its rows are reported only with --global.
      const roots = {
        project: context.project,
        global: context.global,
        includeGlobal: true,
        home,
        pluginDirs: options.pluginDirs ?? [],
        budgetOverride: options.budgetOverride ?? envValue("SLASH_COMMAND_TOOL_CHAR_BUDGET"),
        ...(options.managed === undefined ? {} : { managed: options.managed }),
      };
      // Beyond start-up: what an invocation, a spawn, an access sends (model/tiers.ts), from the
      // same reads of the same files.
      const [whole, perTier] = withOneReadEach(() => {
        const whole: LoadingModel = loadingModel(roots);
        return [whole, tierModel(roots, whole, context.nestedInstructions ?? [])] as const;
      });
      const view = modelView(whole, context, candidates);
      model = { ...view, agentsMdLoaded: whole.agentsMdLoaded };
      // Named as the inventory names its files.
      tiers = tierRows(
        perTier,
        whole.project === context.project ? undefined : logicalName(whole.project, context.project),
      );
      const reported = view.sources;
      for (const s of reported) byKey.set(s.path, s.kind, s);
      const matched = new ByPathKind<true>();
      const rows: CandidateRow[] = [];
      const children = new Map<string, LoadedSource[]>();
      for (const s of reported) {
        if (s.importedBy === undefined) continue;
        const siblings = children.get(s.importedBy);
        if (siblings === undefined) children.set(s.importedBy, [s]);
        else siblings.push(s);
      }
      // Built when an import first needs it (most scans have none).
      let candidateKeys: ByPathKind<true> | undefined;
      const isCandidate = (path: string, kind: string) => {
        if (candidateKeys === undefined) {
          candidateKeys = new ByPathKind();
          for (const c of candidates) {
            if (c.tier === "always-on") candidateKeys.set(c.path, c.kind, true);
          }
        }
        return candidateKeys.has(path, kind);
      };
      const push = (row: CandidateRow) => {
        rows.push(row);
        if (row.tier !== "always-on" || row.kind !== "file") return;
        for (const child of children.get(row.path) ?? []) {
          if (matched.has(child.path, child.kind) || isCandidate(child.path, child.kind)) continue;
          matched.set(child.path, child.kind, true);
          push(newRow(child));
        }
      };
      for (const row of [...candidates, ...view.pluginRows]) {
        if (row.tier === "always-on") matched.set(row.path, row.kind, true);
        push(row);
        if (row.loading !== "invoked-skill" || row.kind !== "file") continue;
        // Each SKILL.md's listing entry, loaded or not.
        const source = byKey.get(row.path, "field:description");
        matched.set(row.path, "field:description", true);
        push({
          path: row.path,
          root: row.root,
          tier: "always-on",
          kind: "field:description",
          bytes: source?.potential ?? skillListingPotential(row.path),
          estimated: false,
          loading: "skill-listing",
        });
      }
      for (const s of reported) {
        if (matched.has(s.path, s.kind)) continue;
        matched.set(s.path, s.kind, true);
        push(newRow(s));
      }
      rows.push(...tiers.extraRows(rows, context.includeGlobal));
      return rows;
    },
    annotate(rows: readonly ScanRow[]): ScanRow[] {
      const current = model;
      const perTier = tiers;
      if (current === undefined || perTier === undefined) {
        throw new TypeError("annotate before addRows");
      }
      return rows.map((row) => {
        if (row.tier !== "always-on") {
          // What the invocation or spawn sends (`tier_rows.ts`); no start-up category.
          const later = perTier.later(row);
          return {
            ...row,
            loaded_bytes: later.bytes,
            loaded_tokens: tokensOf(later.bytes),
            limits: later.limits,
            category: null,
          };
        }
        const annotated = annotateRow(row, current);
        const figures = perTier.figures(annotated);
        return figures === undefined ? annotated : { ...annotated, ...figures };
      });
    },
  };

  /** The start-up figures of one admitted always-on row. */
  function annotateRow(row: ScanRow, current: ModelView & { agentsMdLoaded: boolean }): ScanRow {
    const source = byKey.get(row.path, row.kind);
    // Instruction files are where links matter (a CLAUDE.md linked to AGENTS.md): one lstat each.
    const target = row.kind === "file" ? linkTarget(row.path, (p) => p) : undefined;
    // Each row is built whole, its keys in one order: the row's, then what `--loaded` adds (a
    // `loading` it changes keeps its place).
    if (source === undefined) {
      const figures = {
        loaded_bytes: 0,
        loaded_tokens: 0,
        limits: absentLimit(row, current),
        category: categoryOf(row),
      };
      const out: ScanRow = target === undefined
        ? { ...row, ...figures }
        : { ...row, resolves_to: target, ...figures };
      if (row.kind === "field:description" && row.loading === "runtime-dependent") {
        out.loading = "agent-listing";
      }
      return out;
    }
    const out: ScanRow = {
      ...row,
      loaded_bytes: source.loaded,
      loaded_tokens: tokensOf(source.loaded),
      limits: ordered(source.limits),
      category: source.category,
    };
    if (source.category === "agents") out.loading = "agent-listing";
    // The file a link reaches loads at start-up as the link did.
    if (row.loading === "client-or-import-dependent") out.loading = source.loading;
    if (source.name !== undefined) out.name = source.name;
    if (source.importedBy !== undefined) out.imported_by = source.importedBy;
    if (target !== undefined) out.resolves_to = target;
    return out;
  }
}
