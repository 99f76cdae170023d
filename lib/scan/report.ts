/**
 * `--format table`: the scan document as a report a person reads in ten seconds
 * (`references/context-scan.md#table-report`) — per-tier totals (potential and, with `--loaded`,
 * loaded), the 10 heaviest rows with a proportional bar, the limits that fired and the scan
 * issues, fitted to a width. A pure function of the document; the command line picks the width
 * and whether to colour.
 *
 * @module
 */

import { printable } from "../text.ts";
import { CONTEXT_CATEGORIES } from "./categories.ts";
import { whenItLoads } from "./report_tiers.ts";
import { LIMIT_MEANINGS, RULES_AS_OF } from "./loading_rules.ts";
import { type ColumnPath, cutLeft, fitColumn, fitPath, keepEnd, width } from "./report_paths.ts";
import type { LimitCode, ScanDocument, ScanObserved, ScanRow, ScanTotal } from "./schema.ts";

/** How to render the report. */
export interface ReportOptions {
  /** Columns to fit (at least {@linkcode MIN_WIDTH} are used). */
  width: number;
  /** Use ANSI colours (the command line: a TTY without `NO_COLOR`). */
  color: boolean;
  /** The home directory, shown as `~` in paths outside the project root. */
  home?: string;
}

/** The narrowest report: below this the columns no longer fit. */
export const MIN_WIDTH = 60;
/** How many rows the heaviest-files list shows. */
export const HEAVIEST = 10;

const TIER_COLOR: Readonly<Record<string, string>> = {
  "always-on": "33",
  "per-spawn": "36",
  "per-invocation": "35",
};

/** `s` cut to `max` code points, keeping its start before a trailing `…`. */
export function keepStart(s: string, max: number): string {
  const chars = [...s];
  if (chars.length <= max) return s;
  return max <= 0 ? "" : chars.slice(0, max - 1).join("") + "…";
}

function padEnd(s: string, n: number): string {
  return s + " ".repeat(Math.max(0, n - width(s)));
}

/** `s` padded on the left to `n` code points. */
export function padStart(s: string, n: number): string {
  return " ".repeat(Math.max(0, n - width(s))) + s;
}

/** `n` with thousands separators (`en-US`). */
export function num(n: number): string {
  return n.toLocaleString("en-US");
}

/**
 * Render the report (every line at most `width` code points; names through `printable`).
 *
 * @example
 * ```ts ignore
 * import { renderReport } from "./report.ts";
 * console.log(renderReport(scanContext({ root: "." }).document, { width: 80, color: false }));
 * ```
 */
export function renderReport(doc: ScanDocument, options: ReportOptions): string {
  const w = Math.max(MIN_WIDTH, Math.floor(options.width));
  const paint = (code: string, s: string) => options.color ? `\x1b[${code}m${s}\x1b[0m` : s;
  const bold = (s: string) => paint("1", s);
  const loaded = doc.totals.grand.loaded !== undefined;
  const show = (path: string) => printable(displayPath(path, doc, options.home));
  const out: string[] = [];

  const root = (path: string) => printable(tildePath(path, options.home));
  out.push(bold(keepEnd(`context-scan ${root(doc.roots.project)}`, w)));
  if (doc.roots.global !== null) out.push(keepEnd(`global root  ${root(doc.roots.global)}`, w));
  if (doc.tier_filter !== "all") out.push(`tier filter   ${doc.tier_filter}`);
  out.push(keepStart(
    loaded
      ? `tokens = bytes/4; loaded = what Claude Code ${RULES_AS_OF} sends (observed rules)`
      : "tokens = bytes/4 of whole files (potential inventory; --loaded models loading)",
    w,
  ));
  out.push("");

  // Per-tier totals.
  const totalCols = (t: ScanTotal) =>
    padStart(num(t.files), 7) + padStart(num(t.tokens), 11) +
    (loaded ? padStart(num(t.loaded?.tokens ?? 0), 11) : "");
  out.push(bold(
    padEnd("TIER", 16) + padStart("FILES", 7) + padStart("TOKENS", 11) +
      (loaded ? padStart("LOADED", 11) : ""),
  ));
  for (const tier of ["always-on", "per-spawn", "per-invocation"] as const) {
    out.push(paint(TIER_COLOR[tier], padEnd(tier, 16)) + totalCols(doc.totals[tier]));
  }
  out.push(padEnd("total", 16) + totalCols(doc.totals.grand));
  out.push("");

  // The loaded always-on figures as /context groups them.
  if (doc.categories !== undefined) {
    out.push(bold(keepStart("AT SESSION START, AS /context GROUPS IT", w)));
    out.push(bold(padEnd("CATEGORY", 16) + padStart("SOURCES", 7) + padStart("LOADED", 11)));
    for (const { key, title } of CONTEXT_CATEGORIES) {
      if (!(key in doc.categories)) continue;
      const t = doc.categories[key as keyof typeof doc.categories];
      // The system prompt holds a file of the user's only with an output style.
      if (key === "system-prompt" && t.files === 0) continue;
      out.push(padEnd(title, 16) + padStart(num(t.files), 7) + padStart(num(t.tokens), 11));
    }
    // What no file owns is seen only by an observation: said where there is none.
    if (doc.observed === undefined) {
      out.push(keepStart("  (system prompt and tools: only --observe can see them)", w));
    }
    out.push("");
  }

  out.push(...heaviestSection(doc, w, paint, show));

  // Limits that fired.
  if (loaded) {
    out.push("");
    const counts = new Map<LimitCode, number>();
    for (const row of doc.files) {
      for (const code of row.limits ?? []) counts.set(code, (counts.get(code) ?? 0) + 1);
    }
    out.push(bold("LIMITS THAT FIRED"));
    if (counts.size === 0) out.push("  none");
    for (const [code, count] of [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))) {
      const line = `${padEnd(code, 22)}${padStart(num(count), 5)}  ${LIMIT_MEANINGS[code]}`;
      out.push(`  ${paint("33", keepStart(line, w - 2))}`);
    }
  }

  const when = whenItLoads(doc, w, paint, show);
  if (when.length > 0) out.push("", ...when);

  if (doc.observed !== undefined) out.push("", ...observedSection(doc.observed, w, paint, show));

  // Scan issues.
  out.push("");
  out.push(bold(`SCAN ISSUES (${doc.scan_issues.length})`));
  if (doc.scan_issues.length === 0) out.push(`  ${paint("32", "none: the inventory is complete")}`);
  for (const issue of doc.scan_issues) {
    const path = show(issue.path);
    out.push(`  ${paint("31", fitPath(path, w - 2))}`);
    // Problem lines name absolute paths: shown relative to the project root, so the reason fits;
    // a reason longer than the line wraps at spaces, never cut.
    for (const line of issue.detail.split("\n")) {
      const short = printable(line.replaceAll(`${doc.roots.project}/`, ""));
      for (const part of wrapWords(short, w - 4)) out.push(`    ${part}`);
    }
  }
  return out.join("\n") + "\n";
}

/**
 * The heaviest rows: a bar proportional to the heaviest (a tenth of the width), the figures, the
 * tier and the path. When a path does not fit, the bars go first (the column is dropped for every
 * row); then paths are cut from the left, never into their name; a row whose name still does not
 * fit prints its path on the line below, across the width.
 */
function heaviestSection(
  doc: ScanDocument,
  w: number,
  paint: (code: string, s: string) => string,
  show: (path: string) => string,
): string[] {
  const loaded = doc.totals.grand.loaded !== undefined;
  const rank = (r: ScanRow) => loaded ? (r.loaded_tokens ?? 0) : r.tokens;
  const heaviest = doc.files
    .map((row, i) => ({ row, i }))
    .sort((a, b) => rank(b.row) - rank(a.row) || b.row.tokens - a.row.tokens || a.i - b.i)
    .slice(0, HEAVIEST)
    .map(({ row }) => row);
  const out = [paint(
    "1",
    keepStart(
      `HEAVIEST ${heaviest.length === 1 ? "ROW" : `${heaviest.length} ROWS`} (by ${
        loaded ? "loaded" : "potential"
      } tokens)`,
      w,
    ),
  )];
  if (heaviest.length === 0) return [...out, "  none"];
  const figures = (tokens: string, loadedTokens: string) =>
    padStart(tokens, 9) + (loaded ? padStart(loadedTokens, 9) : "");
  const columns = 2 + (loaded ? 18 : 9) + 2 + 14 + 2;
  const paths: ColumnPath[] = heaviest.map((row) => ({
    path: show(row.path),
    suffix: kindSuffix(row),
    plugin: row.root === "plugin",
  }));
  const withBars = Math.floor(w / 10);
  const fitted = fitColumn(paths, w - columns - withBars);
  const barWidth = fitted.every((p) => p !== undefined) ? withBars : 0;
  const texts = barWidth > 0 ? fitted : fitColumn(paths, w - columns);
  // A name too wide for the column: its own line, indented, with the whole width.
  const below = texts.includes(undefined) ? fitColumn(paths, w - WRAP_INDENT) : [];
  out.push(`  ${" ".repeat(barWidth)}${figures("tokens", "loaded")}  ${padEnd("tier", 14)}  path`);
  const max = Math.max(0, ...heaviest.map(rank));
  heaviest.forEach((row, i) => {
    const value = rank(row);
    const length = max === 0 || barWidth === 0
      ? 0
      : Math.max(value > 0 ? 1 : 0, Math.round((value / max) * barWidth));
    const bar = (length > 0 ? paint(TIER_COLOR[row.tier], "█".repeat(length)) : "") +
      " ".repeat(barWidth - length);
    const numbers = figures(num(row.tokens), num(row.loaded_tokens ?? 0));
    const tier = padEnd(row.tier, 14);
    const text = texts[i];
    if (text !== undefined) out.push(`  ${bar}${numbers}  ${tier}  ${text}`);
    else {
      const whole = paths[i].path + paths[i].suffix;
      out.push(`  ${bar}${numbers}  ${row.tier}`);
      out.push(" ".repeat(WRAP_INDENT) + (below[i] ?? keepEnd(whole, w - WRAP_INDENT)));
    }
  });
  return out;
}

/** The indent of a path printed below its row. */
const WRAP_INDENT = 6;

/** `text` broken at spaces into lines of at most `max` code points (a longer word is split). */
function wrapWords(text: string, max: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    const joined = line === "" ? word : `${line} ${word}`;
    if (width(joined) <= max) {
      line = joined;
      continue;
    }
    if (line !== "") lines.push(line);
    let rest = [...word];
    while (rest.length > max) {
      lines.push(rest.slice(0, max).join(""));
      rest = rest.slice(max);
    }
    line = rest.join("");
  }
  return [...lines, line];
}

/** A row's kind, when not a whole file, as a suffix of its path. */
function kindSuffix(row: ScanRow): string {
  if (row.loading === "skill-listing" || row.loading === "command-listing") return " [listing]";
  if (row.loading === "agent-listing") return " [listing]";
  if (row.kind === "field:description") return " [description]";
  if (row.kind === "hook-payload") return " [hook]";
  return "";
}

/** `path` with a leading home directory written `~`. */
function tildePath(path: string, home: string | undefined): string {
  if (home === undefined || home === "" || home === "/") return path;
  if (path === home) return "~";
  return path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

/**
 * A row's path as the report shows it: relative below the project root, else `~/…` below the
 * home directory, else absolute.
 */
export function displayPath(path: string, doc: ScanDocument, home: string | undefined): string {
  const project = doc.roots.project;
  if (path.startsWith(`${project}/`)) return path.slice(project.length + 1);
  return tildePath(path, home);
}

/** How many observed sources the report lists. */
export const OBSERVED_SOURCES = 10;

/**
 * The observed start-up context (`--observe`), grouped as Claude Code's `/context` groups it: one
 * line per group (tokens, share of the total, a bar), the total, then the heaviest sources.
 */
function observedSection(
  o: ScanObserved,
  w: number,
  paint: (code: string, s: string) => string,
  show: (path: string) => string,
): string[] {
  const out: string[] = [];
  const bold = (s: string) => paint("1", s);
  out.push(bold(keepStart(
    `OBSERVED START-UP CONTEXT (Claude Code ${printable(o.claude_code_version)}, ${
      o.sandboxed ? "sandboxed" : "not sandboxed"
    }; tokens = bytes/4)`,
    w,
  )));
  const barWidth = Math.floor(w / 5);
  const max = Math.max(0, ...CONTEXT_CATEGORIES.map((c) => o.categories[c.key].tokens));
  const share = (n: number) =>
    o.total.tokens === 0 ? "0.0%" : `${((n / o.total.tokens) * 100).toFixed(1)}%`;
  for (const { key, title } of CONTEXT_CATEGORIES) {
    const tokens = o.categories[key].tokens;
    const length = max === 0
      ? 0
      : Math.max(tokens > 0 ? 1 : 0, Math.round((tokens / max) * barWidth));
    const bar = length === 0
      ? ""
      : `  ${paint(key === "unattributed" ? "31" : "36", "█".repeat(length))}`;
    out.push(
      `  ${padEnd(title, 16)}${padStart(num(tokens), 9)}${padStart(share(tokens), 8)}${bar}`,
    );
  }
  out.push(`  ${padEnd("total", 16)}${padStart(num(o.total.tokens), 9)}`);
  const heaviest = o.sources
    .map((source, i) => ({ source, i }))
    .sort((a, b) => b.source.tokens - a.source.tokens || a.i - b.i)
    .slice(0, OBSERVED_SOURCES)
    .map(({ source }) => source);
  out.push("");
  out.push(bold(`HEAVIEST OBSERVED SOURCES (${heaviest.length} of ${o.sources.length})`));
  if (heaviest.length === 0) out.push("  none");
  for (const s of heaviest) {
    const head = `  ${padStart(num(s.tokens), 9)}  ${padEnd(s.kind, 12)}  `;
    const room = w - width(head);
    const name = printable(s.name);
    let what: string;
    if (s.kind === "hook" || s.path === null) what = `${name}${s.built_in ? " [built-in]" : ""}`;
    else if (s.kind === "skill" || s.kind === "command" || s.kind === "agent") {
      // The listing name is what tells the entry apart; its file comes after it, as room allows.
      const path = show(s.path);
      const file = cutLeft(path, ")", room - width(name) - 2, path.split("/").length - 1);
      what = file === undefined ? name : `${name} (${file}`;
    } else what = fitPath(show(s.path), room);
    out.push(head + keepEnd(what, room));
  }
  for (const warning of o.warnings) {
    out.push(`  ${paint("33", keepStart(`⚠ ${printable(warning)}`, w - 2))}`);
  }
  return out;
}
