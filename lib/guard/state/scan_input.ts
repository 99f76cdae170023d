/**
 * The two context-scan documents `state` reads (`references/context-guard.md#ratchet-state`),
 * validated with a schema derived from the scan's own (`lib/scan/schema.ts`): loosened to the
 * fields the ratchet reads, tightened where the state needs more (non-empty paths, empty
 * `scan_issues`, integer *literals*, totals that add up).
 *
 * @module
 */

import * as z from "../../_zod.ts";
import { firstLine } from "../../_fs/errors.ts";
import { readRegular } from "../../_fs/read.ts";
import { ScanDocumentSchema, ScanRowSchema, ScanTotalSchema } from "../../scan/schema.ts";

/** A context-scan document as `state` reads it: only the fields the ratchet needs. */
export interface StateScanInput {
  /** Discovery problems; always empty once validated. */
  scan_issues: unknown[];
  /** Inventory rows: non-empty path, non-negative integer token count. */
  files: { path: string; tokens: number }[];
  /** The grand total, equal to the sum of `files[].tokens`. */
  totals: { grand: { tokens: number } };
}

/**
 * What `state` requires of a context-scan document, derived from the scan schema: only the fields
 * the ratchet reads are checked (others may be absent), `scan_issues` must be empty, paths non-empty,
 * and the grand total must equal the sum of the entries' `tokens`.
 */
export const StateScanInputSchema: z.ZodMiniType<StateScanInput> = z.deferred(() =>
  z.object({
    scan_issues: ScanDocumentSchema.shape.scan_issues.check(z.maxLength(0)),
    files: z.array(
      z.extend(z.pick(ScanRowSchema, { path: true, tokens: true }), {
        path: ScanRowSchema.shape.path.check(z.minLength(1)),
      }),
    ),
    totals: z.object({ grand: z.pick(ScanTotalSchema, { tokens: true }) }),
  }).check(z.superRefine((doc, ctx) => {
    const sum = doc.files.reduce((n, f) => n + BigInt(f.tokens), 0n);
    if (sum !== BigInt(doc.totals.grand.tokens)) {
      ctx.addIssue({
        code: "custom",
        path: ["totals", "grand", "tokens"],
        message: "scanner token totals do not match its inventory",
      });
    }
  }))
);

/** Why a scan document was rejected: the `<reason>` of `State rejected: <path>: <reason>`. */
export type ScanRejection = string;

/** The result of checking one scan document's text. */
export type ScanCheck =
  | { readonly ok: true; readonly doc: StateScanInput }
  | { readonly ok: false; readonly reason: ScanRejection };

const INTEGER_LITERAL = /^-?(?:0|[1-9][0-9]*)$/;

/**
 * Parse JSON text, turning every number whose *literal* is not an integer (`5.0`, `1e2`) into `NaN`
 * so the schema's integer checks see what `JSON.parse` alone would hide. Uses the reviver's
 * source-text access.
 */
export function parseJsonIntegerLiterals(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }): unknown =>
    typeof value === "number" && context?.source !== undefined &&
      !INTEGER_LITERAL.test(context.source)
      ? Number.NaN
      : value;
  return JSON.parse(text, reviver as unknown as Parameters<typeof JSON.parse>[1]);
}

function hasOwn(value: unknown, key: string): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.hasOwn(value, key);
}

/** True when `totals.grand.tokens` exists as a key chain of objects. */
function hasGrandTokens(doc: unknown): boolean {
  if (!hasOwn(doc, "totals")) return false;
  const totals = doc.totals;
  if (!hasOwn(totals, "grand")) return false;
  return hasOwn(totals.grand, "tokens");
}

/** Map a schema issue path to its table row rank and reason (lowest rank is reported). */
function rankIssue(path: readonly PropertyKey[], doc: unknown): [number, ScanRejection] {
  const [head, index, field] = path;
  if (head === undefined || head === "scan_issues") {
    return [0, "incomplete scanner inventory: scan_issues must be present and empty"];
  }
  if (head === "files") {
    if (index === undefined) return [1, "invalid scanner file inventory"];
    const i = typeof index === "number" ? index : 0;
    return field === "tokens"
      ? [3 + 2 * i, "invalid scanner token count"]
      : [2 + 2 * i, "invalid scanner file path"];
  }
  return hasGrandTokens(doc)
    ? [Number.MAX_SAFE_INTEGER, "scanner token totals do not match its inventory"]
    : [Number.MAX_SAFE_INTEGER - 1, "missing totals.grand.tokens"];
}

/**
 * Check one scan document's text for `state`. The first violation in the documented order is
 * reported (entries in order, a path before its `tokens`).
 *
 * @example
 * ```ts
 * import { checkScanText } from "./scan_input.ts";
 * const r = checkScanText('{"scan_issues":[],"files":[{"path":"a","tokens":5.0}],"totals":{"grand":{"tokens":5}}}');
 * r.ok; // false — reason "invalid scanner token count"
 * ```
 */
export function checkScanText(text: string): ScanCheck {
  let doc: unknown;
  try {
    doc = parseJsonIntegerLiterals(text);
  } catch (e) {
    return { ok: false, reason: `invalid JSON: ${firstLine(e)}` };
  }
  const parsed = StateScanInputSchema.safeParse(doc);
  if (parsed.success) return { ok: true, doc: parsed.data };
  let best: [number, ScanRejection] | undefined;
  for (const issue of parsed.error.issues) {
    const ranked = rankIssue(issue.path, doc);
    if (best === undefined || ranked[0] < best[0]) best = ranked;
  }
  return { ok: false, reason: best![1] };
}

/** Read and check a scan document file; unreadable and non-UTF-8 files are `invalid JSON`. */
export function checkScanFile(path: string): ScanCheck {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(readRegular(path));
  } catch (e) {
    return { ok: false, reason: `invalid JSON: ${firstLine(e)}` };
  }
  return checkScanText(text);
}
