/**
 * The table report's "when it loads" view (`--format table` with `--loaded`;
 * `references/context-scan.md#table-report`): what the context costs at start-up, with every
 * prompt, per invocation (the heaviest skills and commands), per spawn (the heaviest agents, with
 * the whole spawn request when observed) and on access (the heaviest rules and subfolders'
 * instruction files) — the model's tokens beside what `--observe-tiers` saw. A pure function.
 *
 * @module
 */

import { printable } from "../text.ts";
import { keepStart, num, padStart } from "./report.ts";
import { fitPath } from "./report_paths.ts";
import { tokensOf } from "./measure.ts";
import type { ScanDocument, ScanRow } from "./schema.ts";

/** How many sources each tier of the view lists. */
export const WHEN_HEAVIEST = 5;

/** The lines of the view (none without `--loaded`). */
export function whenItLoads(
  doc: ScanDocument,
  w: number,
  paint: (code: string, s: string) => string,
  show: (path: string) => string,
): string[] {
  if (doc.totals.grand.loaded === undefined) return [];
  const bold = (s: string) => paint("1", s);
  const tiers = doc.observed?.tiers;
  const dash = "-";
  const line = (model: string, observed: string, what: string) => {
    const head = `  ${padStart(model, 9)}${padStart(observed, 10)}  `;
    // A path is cut from the left, never into its name (references/context-scan.md#table-report).
    return head + fitPath(what, w - head.length);
  };
  const out: string[] = [];
  out.push(bold(keepStart("WHEN IT LOADS (tokens: the model's, then what Claude Code sent)", w)));
  out.push(line("model", "observed", "source"));

  const startup = doc.totals["always-on"].loaded?.tokens ?? 0;
  const request = doc.observed === undefined ? dash : num(doc.observed.total.tokens);
  out.push(line(num(startup), request, "at start-up: the files' text (observed: whole request)"));
  // A prompt hook's output is known only when it runs: counted, not sized.
  const everyPrompt = doc.files.filter((r) => r.fires?.includes("every-prompt")).length;
  out.push(line(
    dash,
    dash,
    `with every prompt: ${everyPrompt} hook ${
      everyPrompt === 1 ? "file" : "files"
    } (sized only when run)`,
  ));

  const section = (
    title: string,
    rows: ScanRow[],
    figure: (r: ScanRow) => number,
    observed: (r: ScanRow) => string,
    note: (r: ScanRow) => string = () => "",
  ) => {
    const heaviest = rows.map((row, i) => ({ row, i }))
      .sort((a, b) => figure(b.row) - figure(a.row) || a.i - b.i)
      .slice(0, WHEN_HEAVIEST).map(({ row }) => row);
    const total = rows.reduce((n, r) => n + figure(r), 0);
    if (rows.length === 0) return;
    out.push(bold(keepStart(
      `  ${title}: ${num(rows.length)} ${rows.length === 1 ? "file" : "files"}, ${
        num(total)
      } tokens${rows.length > heaviest.length ? `; heaviest ${heaviest.length}` : ""}`,
      w,
    )));
    for (const row of heaviest) {
      out.push(line(num(figure(row)), observed(row), show(row.path) + note(row)));
    }
  };

  const byPath = <T extends { path: string }>(items: readonly T[] | undefined) =>
    new Map((items ?? []).map((i) => [i.path, i]));
  const invocations = byPath(tiers?.invocations);
  const spawns = byPath(tiers?.spawns);
  const accesses = byPath(tiers?.accesses);
  const seen = (item: { status: string; tokens: number } | undefined) =>
    item === undefined ? dash : item.status === "observed" ? num(item.tokens) : item.status;

  section(
    "PER INVOCATION (skills and commands)",
    doc.files.filter((r) =>
      r.tier === "per-invocation" && r.loading !== "on-demand" && (r.loaded_bytes ?? 0) > 0
    ),
    (r) => r.loaded_tokens ?? 0,
    (r) => seen(invocations.get(r.path)),
  );
  section(
    "PER SPAWN (agents)",
    doc.files.filter((r) => r.tier === "per-spawn" && (r.loaded_bytes ?? 0) > 0),
    (r) => r.loaded_tokens ?? 0,
    (r) => seen(spawns.get(r.path)),
    (r) => {
      const request = spawns.get(r.path)?.request;
      return request === null || request === undefined
        ? ""
        : `  (request ${num(request.total.tokens)})`;
    },
  );
  section(
    "ON ACCESS (rules and subfolders' files)",
    doc.files.filter((r) => (r.on_access_bytes ?? 0) > 0),
    (r) => tokensOf(r.on_access_bytes ?? 0),
    (r) => seen(accesses.get(r.path)),
  );
  for (const warning of tiers?.warnings ?? []) {
    out.push(`  ${paint("33", keepStart(`⚠ ${printable(warning)}`, w - 2))}`);
  }
  return out;
}
