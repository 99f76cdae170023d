/**
 * `context-guard state` (spec §7.9): the ratchet state file of context-slim, built from two
 * context-scan documents (before and after the run) and the drop ledger.
 *
 * The scan documents are validated with a schema derived from the scan's own (`lib/scan/schema.ts`),
 * loosened to the fields the ratchet reads and tightened where the state needs more (non-empty
 * paths, empty `scan_issues`, integer *literals*, totals that add up).
 *
 * @module
 */

import { mkdirSync, readFileSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../atomic.ts";
import { ArgCursor } from "../args.ts";
import { CtxkitError, die } from "../exit.ts";
import { writeOut } from "../io.ts";
import { jsonString } from "../json.ts";
import { globalRoot } from "../paths.ts";
import { compareUtf8 } from "../sort.ts";
import { ScanDocumentSchema, ScanRowSchema, ScanTotalSchema } from "../scan/schema.ts";
import { ledgerLines } from "./ledger.ts";
import { projectRoot } from "./roots.ts";

// ---------------------------------------------------------------------------------------------
// Input: the two scan documents

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
export const StateScanInputSchema: z.ZodType<StateScanInput> = z.object({
  scan_issues: ScanDocumentSchema.shape.scan_issues.max(0),
  files: z.array(
    ScanRowSchema.pick({ path: true, tokens: true }).extend({
      path: ScanRowSchema.shape.path.min(1),
    }),
  ),
  totals: z.object({ grand: ScanTotalSchema.pick({ tokens: true }) }),
}).superRefine((doc, ctx) => {
  const sum = doc.files.reduce((n, f) => n + BigInt(f.tokens), 0n);
  if (sum !== BigInt(doc.totals.grand.tokens)) {
    ctx.addIssue({
      code: "custom",
      path: ["totals", "grand", "tokens"],
      message: "scanner token totals do not match its inventory",
    });
  }
});

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
 * Check one scan document's text for `state` (§7.9). The first violation in the table's order is
 * reported (entries in order, a path before its `tokens`).
 *
 * @example
 * ```ts
 * import { checkScanText } from "./state.ts";
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

function firstLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0].trim();
}

/** Read and check a scan document file; unreadable and non-UTF-8 files are `invalid JSON`. */
export function checkScanFile(path: string): ScanCheck {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(path));
  } catch (e) {
    return { ok: false, reason: `invalid JSON: ${firstLine(e)}` };
  }
  return checkScanText(text);
}

// ---------------------------------------------------------------------------------------------
// Output: the state document

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

const count = z.number().int().nonnegative();

/**
 * One ledger row as the state document records it (`drops[]`): the TSV fields verbatim, missing ones
 * `""`. Also published as the ledger-row JSON Schema.
 */
export const StateDropSchema: z.ZodType<StateDrop> = z.object({
  path: z.string(),
  lines: z.string(),
  survivor: z.string(),
  reason: z.string(),
});

/** The state document `state` writes (and re-parses after writing). Key order is the writer's. */
export const StateDocumentSchema: z.ZodType<StateDocument> = z.object({
  schema: z.literal(1),
  timestamp: z.string().regex(
    /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$/,
  ),
  mode: z.string(),
  flags: z.string(),
  totals: z.object({ before_tokens: count, after_tokens: count }),
  achieved_ratio_pct: z.number(),
  files: z.array(z.object({ path: z.string(), before_tokens: count, after_tokens: count })),
  drops: z.array(StateDropSchema),
});

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

// ---------------------------------------------------------------------------------------------
// Numbers: exact division, half-to-even rounding, Python float repr

/** The double nearest to `n / d` (ties to even), exactly — also when `n` exceeds 2^53. */
export function ratioToDouble(n: bigint, d: bigint): number {
  if (d <= 0n) throw new RangeError("denominator must be positive");
  if (n === 0n) return 0;
  const negative = n < 0n;
  const abs = negative ? -n : n;
  const limit = 1n << 53n;
  if (abs < limit && d < limit) {
    const q = Number(abs) / Number(d); // both exact: IEEE division rounds once, correctly
    return negative ? -q : q;
  }
  // Scale so the integer quotient holds 54 bits (53 kept + a guard bit); the remainder is sticky.
  const bits = (v: bigint): number => v.toString(2).length;
  let shift = 54 - (bits(abs) - bits(d));
  const num = shift >= 0 ? abs << BigInt(shift) : abs;
  const den = shift >= 0 ? d : d << BigInt(-shift);
  let q = num / den;
  let sticky = num % den !== 0n;
  if (bits(q) > 54) {
    sticky ||= (q & 1n) === 1n;
    q >>= 1n;
    shift -= 1;
  }
  const guard = (q & 1n) === 1n;
  q >>= 1n;
  shift -= 1;
  if (guard && (sticky || (q & 1n) === 1n)) q += 1n;
  const result = Number(q) * 2 ** -shift;
  return negative ? -result : result;
}

/** Exact value of a finite double as `mantissa × 2^exponent` with an integer mantissa. */
function exactBinary(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bitsValue = view.getBigUint64(0);
  const sign = bitsValue >> 63n === 1n ? -1n : 1n;
  const biased = Number((bitsValue >> 52n) & 0x7ffn);
  const fraction = bitsValue & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  return { mantissa: sign * mantissa, exponent };
}

/**
 * Round a double to `places` decimals half-to-even on its exact binary value, like Python's
 * `round(x, places)`: `0.125` → `0.12`, `0.375` → `0.38`, `2.675` → `2.67`. The sign of a zero
 * result follows `x` (`-0.001` → `-0.0`).
 */
export function roundHalfEven(x: number, places: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const { mantissa, exponent } = exactBinary(x);
  const scale = 10n ** BigInt(places);
  let rounded: bigint;
  if (exponent >= 0) {
    rounded = mantissa * scale * (1n << BigInt(exponent));
  } else {
    const num = mantissa * scale;
    const den = 1n << BigInt(-exponent);
    const negative = num < 0n;
    const abs = negative ? -num : num;
    let q = abs / den;
    const twice = (abs % den) * 2n;
    if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
    rounded = negative ? -q : q;
  }
  if (rounded === 0n) return x < 0 ? -0 : 0;
  return ratioToDouble(rounded, scale);
}

/** `((before − after) × 100) ÷ before` rounded to 2 places half-to-even; `0.0` when before is 0. */
export function achievedRatio(before: number, after: number): number {
  if (before === 0) return 0;
  const exact = ratioToDouble((BigInt(before) - BigInt(after)) * 100n, BigInt(before));
  return roundHalfEven(exact, 2);
}

/**
 * A finite double written as Python's `repr` does: shortest round-trip digits, `.0` on integral
 * values, exponent form when the decimal exponent is below −4 or at least 16.
 *
 * @example
 * ```ts
 * import { pythonFloatRepr } from "./state.ts";
 * [27.14, 0, -0, 100, 1e16, 1e-5].map(pythonFloatRepr); // ["27.14", "0.0", "-0.0", "100.0", "1e+16", "1e-05"]
 * ```
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // toExponential() without an argument gives the shortest digits that round-trip.
  const [mant, exp] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "");
  const decpt = Number(exp) + 1; // value = 0.<digits> × 10^decpt
  if (decpt <= -4 || decpt > 16) {
    const e = decpt - 1;
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
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

// ---------------------------------------------------------------------------------------------
// The subcommand

/** Parsed `state` options; `undefined` = not given. */
export interface StateOptions {
  /** `--check` seen. */
  check: boolean;
  /** `--mode` value. */
  mode?: string;
  /** `--before` value. */
  before?: string;
  /** `--after` value. */
  after?: string;
  /** `--flags` value. */
  flags?: string;
  /** `--ledger` value. */
  ledger?: string;
  /** `--root` value. */
  root?: string;
  /** `--out` value. */
  out?: string;
}

const VALUE_OPTIONS = {
  "--mode": "mode",
  "--before": "before",
  "--after": "after",
  "--flags": "flags",
  "--ledger": "ledger",
  "--root": "root",
  "--out": "out",
} as const;

/**
 * Parse `state`'s arguments (after the subcommand word): left to right, last wins; dies with
 * `❌ <option> needs a value` or `❌ unknown argument: <arg>`.
 */
export function parseStateArgs(args: readonly string[]): StateOptions {
  const options: StateOptions = { check: false };
  const cursor = new ArgCursor(args);
  while (!cursor.done) {
    const arg = cursor.next();
    if (arg === "--check") {
      options.check = true;
    } else if (Object.hasOwn(VALUE_OPTIONS, arg)) {
      const key = VALUE_OPTIONS[arg as keyof typeof VALUE_OPTIONS];
      const value = cursor.value();
      if (value === undefined) die(`❌ ${arg} needs a value`);
      options[key] = value;
    } else {
      die(`❌ unknown argument: ${arg}`);
    }
  }
  return options;
}

/** The state file path: `--out` if non-empty, else `<root>/.claude/brewtools/context-slim/state.json`. */
export function statePath(options: StateOptions, project: () => string = projectRoot): string {
  if (options.out !== undefined && options.out !== "") return options.out;
  const root = options.root !== undefined && options.root !== "" ? options.root : project();
  return `${root}/.claude/brewtools/context-slim/state.json`;
}

function isRegularFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function writeStateFile(path: string, text: string): void {
  const fail = (reason: string): never => {
    throw new CtxkitError(2, `❌ cannot write state file: ${path} (${reason})`);
  };
  try {
    mkdirSync(dirname(path), { recursive: true });
    // 0666 minus the umask: the state file is an ordinary project file, not a private backup.
    writeFileAtomic(path, text, { mode: 0o666 });
  } catch (e) {
    fail(firstLine(e));
  }
  let reread: unknown;
  try {
    reread = JSON.parse(new TextDecoder().decode(readFileSync(path)));
  } catch (e) {
    fail(`written file does not parse: ${firstLine(e)}`);
  }
  const check = StateDocumentSchema.safeParse(reread);
  if (!check.success) fail("written file does not match the state schema");
}

/**
 * Run `context-guard state <args>`: `--check` reports presence; otherwise validate both scans and
 * the ledger, then write the state file atomically. Returns the exit code; errors throw
 * {@linkcode CtxkitError}.
 */
export function stateMain(args: readonly string[], now: () => Date = () => new Date()): number {
  globalRoot(); // every subcommand but help needs G: dies `❌ HOME is not set` without it
  const options = parseStateArgs(args);
  const path = statePath(options);
  if (options.check) {
    writeOut(`STATE: ${isRegularFile(path) ? "present" : "absent"} ${path}`);
    return 0;
  }
  if (options.mode === undefined || options.mode === "") die("❌ state needs --mode");
  if (options.before === undefined || !isRegularFile(options.before)) {
    die("❌ state needs --before <context-scan JSON>");
  }
  if (options.after === undefined || !isRegularFile(options.after)) {
    die("❌ state needs --after <context-scan JSON>");
  }
  const ledger = options.ledger !== undefined && options.ledger !== "" ? options.ledger : undefined;
  if (ledger !== undefined && !isRegularFile(ledger)) die(`❌ no such ledger file: ${ledger}`);
  const scans: StateScanInput[] = [];
  for (const scanPath of [options.before, options.after]) {
    const check = checkScanFile(scanPath);
    if (!check.ok) throw new CtxkitError(2, `State rejected: ${scanPath}: ${check.reason}`);
    scans.push(check.doc);
  }
  let ledgerText: string | undefined;
  if (ledger !== undefined) {
    try {
      ledgerText = new TextDecoder().decode(readFileSync(ledger));
    } catch {
      die(`❌ no such ledger file: ${ledger}`);
    }
  }
  const doc = buildStateDocument({
    mode: options.mode,
    flags: options.flags ?? "",
    before: scans[0],
    after: scans[1],
    ledgerText,
    now: now(),
  });
  writeStateFile(path, renderStateDocument(StateDocumentSchema.parse(doc)));
  writeOut(`STATE: written ${path}`);
  return 0;
}
