/**
 * Row admission (`references/context-scan.md#admission-and-totals`) and the output document
 * (`references/context-scan.md#output-document`): tier filter, zero-byte drop, dedup, totals, and
 * the byte-exact renderer. Key order lives here and only here.
 *
 * @module
 */

import { compactJson, jsonString, type JsonValue, spacedObject } from "../json.ts";
import type { CandidateRow } from "./discovery.ts";
import { tokensOf } from "./measure.ts";
import type {
  LoadedCategory,
  ScanDocument,
  ScanIssue,
  ScanLoadedTotal,
  ScanObserved,
  ScanObservedSource,
  ScanRow,
  ScanTotal,
  ScanTotals,
  Tier,
  TierFilter,
} from "./schema.ts";

/** The tiers in document order. */
export const TIERS: readonly Tier[] = ["always-on", "per-spawn", "per-invocation"];

/**
 * Admit candidate rows in order: tier filter, then `bytes` 0 dropped, then dedup on
 * `(tier, path, kind)` where the first row wins.
 */
export function admitRows(candidates: readonly CandidateRow[], filter: TierFilter): ScanRow[] {
  const seen = new Set<string>();
  const rows: ScanRow[] = [];
  for (const c of candidates) {
    if (filter !== "all" && c.tier !== filter) continue;
    if (c.bytes === 0) continue;
    const key = `${c.tier}\0${c.path}\0${c.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    rows.push({
      path: c.path,
      root: c.root,
      tier: c.tier,
      kind: c.kind,
      bytes: c.bytes,
      tokens: tokensOf(c.bytes),
      estimated: c.estimated,
      loading: c.loading,
    });
  }
  return rows;
}

/**
 * Per-tier totals (tokens = sum of per-row floors) and the grand total; with `loaded`, each also
 * sums the rows' loaded figures (`files` = rows with `loaded_bytes` > 0).
 */
export function computeTotals(rows: readonly ScanRow[], loaded = false): ScanTotals {
  const zero = (): ScanTotal =>
    loaded
      ? { files: 0, bytes: 0, tokens: 0, loaded: { files: 0, bytes: 0, tokens: 0 } }
      : { files: 0, bytes: 0, tokens: 0 };
  const totals: ScanTotals = {
    "always-on": zero(),
    "per-spawn": zero(),
    "per-invocation": zero(),
    grand: zero(),
  };
  for (const row of rows) {
    for (const t of [totals[row.tier], totals.grand]) {
      t.files++;
      t.bytes += row.bytes;
      t.tokens += row.tokens;
      if (t.loaded !== undefined && row.loaded_bytes !== undefined && row.loaded_bytes > 0) {
        t.loaded.files++;
        t.loaded.bytes += row.loaded_bytes;
        t.loaded.tokens += row.loaded_tokens ?? tokensOf(row.loaded_bytes);
      }
    }
  }
  return totals;
}

/**
 * Assemble the document from its parts (totals are computed from `rows`; with `loaded`, they carry
 * the loaded sums too).
 */
export function buildDocument(
  project: string,
  global: string | null,
  filter: TierFilter,
  rows: ScanRow[],
  issues: ScanIssue[],
  options: { loaded?: boolean } = {},
): ScanDocument {
  const document: ScanDocument = {
    roots: { project, global },
    tier_filter: filter,
    token_model: "chars/4",
    measurement: {
      scope: "potential-inventory",
      token_proxy: "bytes/4",
      actual_loading_observed: false,
    },
    files: rows,
    scan_issues: issues,
    totals: computeTotals(rows, options.loaded ?? false),
  };
  if (options.loaded) document.categories = categoryTotals(rows);
  return document;
}

/** The `/context` groups of the loaded document, in `/context` order. */
const LOADED_CATEGORIES: readonly LoadedCategory[] = [
  "system-prompt",
  "memory-files",
  "skills",
  "agents",
  "hooks",
];

/**
 * The loaded always-on rows summed per `/context` group (`--loaded`): `files` counts the rows with
 * `loaded_bytes` > 0.
 */
export function categoryTotals(rows: readonly ScanRow[]): NonNullable<ScanDocument["categories"]> {
  const zero = (): ScanLoadedTotal => ({ files: 0, bytes: 0, tokens: 0 });
  const totals = {
    "system-prompt": zero(),
    "memory-files": zero(),
    skills: zero(),
    agents: zero(),
    hooks: zero(),
  };
  for (const row of rows) {
    if (row.tier !== "always-on" || row.category == null) continue;
    const loaded = row.loaded_bytes ?? 0;
    if (loaded === 0) continue;
    const t = totals[row.category];
    t.files++;
    t.bytes += loaded;
    t.tokens += row.loaded_tokens ?? tokensOf(loaded);
  }
  return totals;
}

function rowJson(row: ScanRow): string {
  const json: { [key: string]: JsonValue } = {
    path: row.path,
    root: row.root,
    tier: row.tier,
    kind: row.kind,
    bytes: row.bytes,
    tokens: row.tokens,
    estimated: row.estimated,
    loading: row.loading,
  };
  // `--loaded` only, after every key of the default row.
  if (row.loaded_bytes !== undefined) json.loaded_bytes = row.loaded_bytes;
  if (row.loaded_tokens !== undefined) json.loaded_tokens = row.loaded_tokens;
  if (row.limits !== undefined) json.limits = [...row.limits];
  if (row.category !== undefined) json.category = row.category;
  if (row.name !== undefined) json.name = row.name;
  if (row.imported_by !== undefined) json.imported_by = row.imported_by;
  if (row.resolves_to !== undefined) json.resolves_to = row.resolves_to;
  if (row.on_access_bytes !== undefined) json.on_access_bytes = row.on_access_bytes;
  if (row.fires !== undefined) json.fires = [...row.fires];
  return compactJson(json);
}

function issueJson(issue: ScanIssue): string {
  return compactJson({
    root: issue.root,
    path: issue.path,
    kind: issue.kind,
    exit_status: issue.exit_status,
    detail: issue.detail,
  });
}

function loadedJson(total: ScanLoadedTotal): { [key: string]: JsonValue } {
  return { files: total.files, bytes: total.bytes, tokens: total.tokens };
}

function totalJson(total: ScanTotal): string {
  const json: { [key: string]: JsonValue } = {
    files: total.files,
    bytes: total.bytes,
    tokens: total.tokens,
  };
  if (total.loaded !== undefined) json.loaded = loadedJson(total.loaded);
  return spacedObject(json);
}

function arrayLines(name: string, items: string[]): string[] {
  return [
    `  ${jsonString(name)}: [`,
    ...items.map((item, i) => `    ${item}${i < items.length - 1 ? "," : ""}`),
    "  ],",
  ];
}

/**
 * Render the document exactly as context-scan prints it (2-space layout, one compact line per row
 * and issue, ending `}\n`).
 *
 * @example
 * ```ts ignore
 * import { renderScanDocument, scanContext } from "./mod.ts";
 * const text = renderScanDocument(scanContext({ root: "." }).document); // byte-exact CLI stdout
 * ```
 */
export function renderScanDocument(doc: ScanDocument): string {
  const lines = [
    "{",
    `  "roots": ${spacedObject({ project: doc.roots.project, global: doc.roots.global })},`,
    `  "tier_filter": ${jsonString(doc.tier_filter)},`,
    `  "token_model": ${jsonString(doc.token_model)},`,
    `  "measurement": ${
      spacedObject({
        scope: doc.measurement.scope,
        token_proxy: doc.measurement.token_proxy,
        actual_loading_observed: doc.measurement.actual_loading_observed,
      })
    },`,
    ...arrayLines("files", doc.files.map(rowJson)),
    ...arrayLines("scan_issues", doc.scan_issues.map(issueJson)),
    `  "totals": {`,
    `    "always-on": ${totalJson(doc.totals["always-on"])},`,
    `    "per-spawn": ${totalJson(doc.totals["per-spawn"])},`,
    `    "per-invocation": ${totalJson(doc.totals["per-invocation"])},`,
    `    "grand": ${totalJson(doc.totals.grand)}`,
    doc.categories === undefined && doc.observed === undefined ? "  }" : "  },",
    ...(doc.categories === undefined ? [] : [
      `  "categories": {`,
      ...LOADED_CATEGORIES.map((key, i) =>
        `    ${jsonString(key)}: ${spacedObject(loadedJson(doc.categories![key]))}${
          i < LOADED_CATEGORIES.length - 1 ? "," : ""
        }`
      ),
      doc.observed === undefined ? "  }" : "  },",
    ]),
    ...(doc.observed === undefined ? [] : observedLines(doc.observed)),
    "}",
  ];
  return lines.join("\n") + "\n";
}

/**
 * The document with an observation in it (`--observe`): `actual_loading_observed` true and the
 * `observed` object last.
 */
export function withObserved(doc: ScanDocument, observed: ScanObserved): ScanDocument {
  return {
    ...doc,
    measurement: { ...doc.measurement, actual_loading_observed: true },
    observed,
  };
}

function sourceJson(source: ScanObservedSource): string {
  const json: { [key: string]: JsonValue } = {
    category: source.category,
    kind: source.kind,
    name: source.name,
    path: source.path,
    built_in: source.built_in,
    bytes: source.bytes,
    tokens: source.tokens,
  };
  if (source.origin !== undefined) json.origin = source.origin;
  if (source.file_bytes !== undefined) json.file_bytes = source.file_bytes;
  if (source.cut !== undefined) json.cut = source.cut;
  return compactJson(json);
}

/** The `observed` object's lines (`references/context-scan.md#observed`), 2-space layout. */
function observedLines(o: ScanObserved): string[] {
  const keys = Object.keys(o.categories) as (keyof ScanObserved["categories"])[];
  const list = (name: string, items: string[], last = false) => [
    `    ${jsonString(name)}: [`,
    ...items.map((item, i) => `      ${item}${i < items.length - 1 ? "," : ""}`),
    last ? "    ]" : "    ],",
  ];
  return [
    `  "observed": {`,
    `    "claude_code_version": ${jsonString(o.claude_code_version)},`,
    `    "sandboxed": ${o.sandboxed},`,
    `    "layout_checked_on": ${compactJson(o.layout_checked_on)},`,
    `    "categories": {`,
    ...keys.map((k, i) =>
      `      ${jsonString(k)}: ${spacedObject({ ...o.categories[k] })}${
        i < keys.length - 1 ? "," : ""
      }`
    ),
    "    },",
    `    "total": ${spacedObject({ ...o.total })},`,
    ...list("sources", o.sources.map(sourceJson)),
    ...list("warnings", o.warnings.map((w) => jsonString(w)), o.tiers === undefined),
    ...(o.tiers === undefined ? [] : tiersLines(o.tiers)),
    "  }",
  ];
}

/** `observed.tiers` (`--observe-tiers`): one compact line per invocation, spawn and access. */
function tiersLines(t: NonNullable<ScanObserved["tiers"]>): string[] {
  const list = (name: string, items: string[], last = false) => [
    `      ${jsonString(name)}: [`,
    ...items.map((item, i) => `        ${item}${i < items.length - 1 ? "," : ""}`),
    last ? "      ]" : "      ],",
  ];
  const compact = (v: object) => compactJson(v as unknown as JsonValue);
  return [
    `    "tiers": {`,
    `      "requests": ${t.requests},`,
    ...list("invocations", t.invocations.map(compact)),
    ...list("spawns", t.spawns.map(compact)),
    ...list("accesses", t.accesses.map(compact)),
    ...list("warnings", t.warnings.map((w) => jsonString(w)), true),
    "    }",
  ];
}
