/**
 * The ratchet state document (`references/context-guard.md#ratchet-state`): its schema (the
 * single definition, published as `references/schemas/state.schema.json`), how it is built from
 * the two scans and the ledger, and its exact text.
 *
 * @module
 */

import * as z from "../../_zod.ts";
import { jsonString } from "../../json.ts";
import { compareUtf8 } from "../../sort.ts";
import { ledgerLines } from "../ledger.ts";
import { pythonFloatRepr, ratioToDouble, roundHalfEven } from "./pyfloat.ts";
import type { StateScanInput } from "./scan_input.ts";

/** One `files` entry of the state document: a path's tokens summed per scan. */
export interface StateFile {
  /** The scanned path. */
  path: string;
  /** Its tokens in the before-scan (0 when absent there). */
  before_tokens: number;
  /** Its tokens in the after-scan (0 when absent there). */
  after_tokens: number;
}

/** One `drops` entry of the state document: a ledger row, verbatim. */
export interface StateDrop {
  /** Ledger field 1. */
  path: string;
  /** Ledger field 2 (the line range as written). */
  lines: string;
  /** Ledger field 3. */
  survivor: string;
  /** Ledger field 4. */
  reason: string;
}

/** The ratchet state document (key order = output order). */
export interface StateDocument {
  /** Always `1`. */
  schema: 1;
  /** Local write time, `YYYY-MM-DDTHH:MM:SS±HH:MM`. */
  timestamp: string;
  /** `--mode` as given. */
  mode: string;
  /** `--flags` as given, `""` when absent. */
  flags: string;
  /** Grand totals of both scans. */
  totals: { before_tokens: number; after_tokens: number };
  /** Savings in percent, 2 places. */
  achieved_ratio_pct: number;
  /** Every path of either scan, sorted. */
  files: StateFile[];
  /** The ledger rows. */
  drops: StateDrop[];
}

const count = z.deferred(() => z.int().check(z.nonnegative()));

/**
 * One ledger row as the state document records it (`drops[]`): the TSV fields verbatim, missing ones
 * `""`. Also published as the ledger-row JSON Schema.
 */
export const StateDropSchema: z.ZodMiniType<StateDrop> = z.deferred(() =>
  z.object({
    path: z.string(),
    lines: z.string(),
    survivor: z.string(),
    reason: z.string(),
  })
);

/** The state document `state` writes (and re-parses after writing). Key order is the writer's. */
export const StateDocumentSchema: z.ZodMiniType<StateDocument> = z.deferred(() =>
  z.object({
    schema: z.literal(1),
    timestamp: z.string().check(z.regex(
      /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$/,
    )),
    mode: z.string(),
    flags: z.string(),
    totals: z.object({ before_tokens: count, after_tokens: count }),
    achieved_ratio_pct: z.number(),
    files: z.array(z.object({ path: z.string(), before_tokens: count, after_tokens: count })),
    drops: z.array(StateDropSchema),
  })
);

/** Inputs of {@linkcode buildStateDocument}. */
export interface StateInputs {
  /** `--mode` as given. */
  readonly mode: string;
  /** `--flags` as given (`""` when absent). */
  readonly flags: string;
  /** The validated before-scan. */
  readonly before: StateScanInput;
  /** The validated after-scan. */
  readonly after: StateScanInput;
  /** The ledger text, or `undefined` without `--ledger`. */
  readonly ledgerText?: string;
  /** The write time. */
  readonly now: Date;
}

/** Tokens summed per path. */
function sumByPath(doc: StateScanInput): Map<string, number> {
  const sums = new Map<string, number>();
  for (const f of doc.files) sums.set(f.path, (sums.get(f.path) ?? 0) + f.tokens);
  return sums;
}

/** Where a scanned path physically is (links resolved), or `undefined` when it does not resolve. */
export type PhysicalOf = (path: string) => string | undefined;

/**
 * The scan with each physical file counted once (`references/context-guard.md#document`): names
 * that resolve to one file — a `CLAUDE.md` linked to `AGENTS.md` — keep the rows of the name that
 * is the file itself (else of the first name), and the grand total becomes the sum of the rows
 * kept. A scan without such names is returned as it is.
 */
export function countOnce(doc: StateScanInput, physicalOf: PhysicalOf): StateScanInput {
  const names = new Map<string, string[]>();
  for (const f of doc.files) {
    const key = physicalOf(f.path) ?? f.path;
    const list = names.get(key) ?? [];
    if (!list.includes(f.path)) list.push(f.path);
    names.set(key, list);
  }
  const dropped = new Set<string>();
  for (const [key, list] of names) {
    if (list.length < 2) continue;
    const kept = list.includes(key) ? key : list[0];
    for (const name of list) if (name !== kept) dropped.add(name);
  }
  if (dropped.size === 0) return doc;
  const files = doc.files.filter((f) => !dropped.has(f.path));
  const tokens = files.reduce((n, f) => n + f.tokens, 0);
  return { ...doc, files, totals: { grand: { tokens } } };
}

/** `files` of the state: every path of either scan, sorted by code point, 0 on a missing side. */
export function stateFiles(before: StateScanInput, after: StateScanInput): StateFile[] {
  const b = sumByPath(before);
  const a = sumByPath(after);
  const paths = [...new Set([...b.keys(), ...a.keys()])].sort(compareUtf8);
  return paths.map((path) => ({
    path,
    before_tokens: b.get(path) ?? 0,
    after_tokens: a.get(path) ?? 0,
  }));
}

/** `drops` of the state: one entry per ledger row, fields verbatim, missing ones `""`. */
export function stateDrops(ledgerText: string | undefined): StateDrop[] {
  if (ledgerText === undefined) return [];
  return ledgerLines(ledgerText).map(({ fields }) => ({
    path: fields[0] ?? "",
    lines: fields[1] ?? "",
    survivor: fields[2] ?? "",
    reason: fields[3] ?? "",
  }));
}

/** `((before − after) × 100) ÷ before` rounded to 2 places half-to-even; `0.0` when before is 0. */
export function achievedRatio(before: number, after: number): number {
  if (before === 0) return 0;
  const exact = ratioToDouble((BigInt(before) - BigInt(after)) * 100n, BigInt(before));
  return roundHalfEven(exact, 2);
}

/** Assemble the state document (key order = output order). */
export function buildStateDocument(inputs: StateInputs): StateDocument {
  const before = inputs.before.totals.grand.tokens;
  const after = inputs.after.totals.grand.tokens;
  return {
    schema: 1,
    timestamp: localTimestamp(inputs.now),
    mode: inputs.mode,
    flags: inputs.flags,
    totals: { before_tokens: before, after_tokens: after },
    achieved_ratio_pct: achievedRatio(before, after),
    files: stateFiles(inputs.before, inputs.after),
    drops: stateDrops(inputs.ledgerText),
  };
}

/** Local time as `YYYY-MM-DDTHH:MM:SS±HH:MM` (UTC → `+00:00`, never `Z`). */
export function localTimestamp(now: Date): string {
  const pad = (n: number, w = 2): string => String(n).padStart(w, "0");
  const offset = -Math.round(now.getTimezoneOffset());
  const sign = offset < 0 ? "-" : "+";
  const abs = Math.abs(offset);
  return `${pad(now.getFullYear(), 4)}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}T` +
    `${pad(now.getHours())}:${pad(now.getMinutes())}:${pad(now.getSeconds())}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * The state document as text: a 2-space pretty printer's layout (`"key": value`, one item per
 * line, `[]` for an empty array), the ratio as a Python float repr, final `\n`.
 */
export function renderStateDocument(doc: StateDocument): string {
  const fileLines = doc.files.map((f) =>
    [
      "    {",
      `      "path": ${jsonString(f.path)},`,
      `      "before_tokens": ${f.before_tokens},`,
      `      "after_tokens": ${f.after_tokens}`,
      "    }",
    ].join("\n")
  );
  const dropLines = doc.drops.map((d) =>
    [
      "    {",
      `      "path": ${jsonString(d.path)},`,
      `      "lines": ${jsonString(d.lines)},`,
      `      "survivor": ${jsonString(d.survivor)},`,
      `      "reason": ${jsonString(d.reason)}`,
      "    }",
    ].join("\n")
  );
  const array = (items: string[]): string =>
    items.length === 0 ? "[]" : `[\n${items.join(",\n")}\n  ]`;
  return [
    "{",
    `  "schema": ${doc.schema},`,
    `  "timestamp": ${jsonString(doc.timestamp)},`,
    `  "mode": ${jsonString(doc.mode)},`,
    `  "flags": ${jsonString(doc.flags)},`,
    `  "totals": {`,
    `    "before_tokens": ${doc.totals.before_tokens},`,
    `    "after_tokens": ${doc.totals.after_tokens}`,
    `  },`,
    `  "achieved_ratio_pct": ${pythonFloatRepr(doc.achieved_ratio_pct)},`,
    `  "files": ${array(fileLines)},`,
    `  "drops": ${array(dropLines)}`,
    "}",
    "",
  ].join("\n");
}
