/**
 * The drop ledger (`references/context-guard.md#drop-ledger`): the TSV the context-slim skill
 * writes in phase 3, one row per dropped
 * fact — `path<TAB>line-range<TAB>survivor<TAB>reason`. `verify --ledger` validates it and accepts a
 * gate miss only when a row covers it; `state --ledger` copies its rows into `drops` unvalidated.
 *
 * Parsing, validation and the coverage decision are pure; reading the file and resolving paths are
 * the thin I/O edge at the bottom.
 *
 * @module
 */

import { isFileFollow, physicalPath } from "../_fs/inspect.ts";
import { readRegular } from "../_fs/read.ts";
import { readForGate } from "./gate_input.ts";
import { envValue, logicalCwd, normalizeLexical } from "../paths.ts";
import { type Text, text } from "../text.ts";
import { LedgerError } from "./errors.ts";

/** One data line of a ledger: its physical line number and its tab-separated fields. */
export interface LedgerLine {
  /** 1-based physical line number (every line of the file counts, comments and blanks too). */
  readonly line: number;
  /** The line split at TAB; may hold fewer or more than four fields. */
  readonly fields: readonly string[];
}

/** A validated ledger row (verify). */
export interface LedgerRow {
  /** 1-based physical line number in the ledger file. */
  readonly line: number;
  /** The file the dropped fact came from, as written. */
  readonly path: string;
  /** The line range as written (`N` or `N-M`). */
  readonly range: string;
  /** First snapshot line of the range (1-based). */
  readonly first: number;
  /** Last snapshot line of the range; may lie past the end of the file. */
  readonly last: number;
  /** Where the fact survives, as written; `-` = accepted loss. */
  readonly survivor: string;
  /** Free text; `""` when the row has three fields. */
  readonly reason: string;
}

/** The result of validating a ledger: its rows, or the first malformed line and why. */
export type LedgerValidation =
  | { readonly ok: true; readonly rows: readonly LedgerRow[] }
  | { readonly ok: false; readonly line: number; readonly why: string };

/**
 * The data lines of a ledger text: lines end at LF, CRLF or CR; empty lines and lines starting with
 * `#` are skipped; line numbers count every physical line.
 *
 * @example
 * ```ts
 * import { ledgerLines } from "./ledger.ts";
 * ledgerLines("# h\r\na\t1\t-\r\n"); // [{ line: 2, fields: ["a", "1", "-"] }]
 * ```
 */
export function ledgerLines(text: string): LedgerLine[] {
  const out: LedgerLine[] = [];
  const physical = text.split(/\r\n|\r|\n/);
  physical.forEach((line, index) => {
    if (line === "" || line.startsWith("#")) return;
    out.push({ line: index + 1, fields: line.split("\t") });
  });
  return out;
}

/** Upper bound for a parsed line number: larger ranges are clamped (lines past the end are absent). */
const LINE_CAP = Number.MAX_SAFE_INTEGER;

/**
 * Parse a line range: `N` or `N-M` in decimal digits with `1 <= N <= M`; `undefined` when invalid.
 * Numbers beyond 2^53−1 stay valid and are clamped, since lines past the end count as absent.
 */
export function parseLineRange(text: string): { first: number; last: number } | undefined {
  const match = /^([0-9]+)(?:-([0-9]+))?$/.exec(text);
  if (match === null) return undefined;
  const n = BigInt(match[1]);
  const m = match[2] === undefined ? n : BigInt(match[2]);
  if (n < 1n || n > m) return undefined;
  const clamp = (v: bigint): number => v > BigInt(LINE_CAP) ? LINE_CAP : Number(v);
  return { first: clamp(n), last: clamp(m) };
}

/** The `<why>` of a malformed row, or `undefined` when the row is valid. */
export function malformedReason(fields: readonly string[]): string | undefined {
  if (fields.length < 3) return "need path<TAB>line-range<TAB>survivor[<TAB>reason]";
  if (fields[0] === "") return "empty path";
  if (parseLineRange(fields[1]) === undefined) {
    return `bad line range '${fields[1]}' (want N or N-M, 1 <= N <= M)`;
  }
  if (fields[2] === "") return "empty survivor (use - for an accepted loss)";
  return undefined;
}

/**
 * Validate a whole ledger text (verify): every data line must be a well-formed row; the first
 * malformed one is reported with its physical line number.
 */
export function validateLedger(text: string): LedgerValidation {
  const rows: LedgerRow[] = [];
  for (const { line, fields } of ledgerLines(text)) {
    const why = malformedReason(fields);
    if (why !== undefined) return { ok: false, line, why };
    const range = parseLineRange(fields[1])!;
    rows.push({
      line,
      path: fields[0],
      range: fields[1],
      first: range.first,
      last: range.last,
      survivor: fields[2],
      reason: fields[3] ?? "",
    });
  }
  return { ok: true, rows };
}

/** The one-line message of a malformed ledger (exit 2). */
export function malformedLedgerMessage(ledgerArg: string, line: number, why: string): Text {
  return text`malformed ledger row ${ledgerArg}:${line}: ${why}`;
}

/** How one miss was decided: the first covering row, or none. */
export interface MissDecision {
  /** The missing token (`<prefix>:<text>`). */
  readonly token: string;
  /** The first row of the file that covers it; `undefined` = uncovered. */
  readonly row?: LedgerRow;
}

/** What the coverage decision needs to know about the world, injected so the decision stays pure. */
export interface CoverageInputs {
  /** The snapshot copy's lines (split at `\n` only). */
  readonly snapshotLines: readonly string[];
  /** The tokens of one line, in the alphabet of this command line. */
  readonly lineTokens: (line: string) => Iterable<string>;
  /**
   * The current token set of a survivor as written in the ledger, or `undefined` when it does not
   * resolve to an existing regular file. Never called for `-`.
   */
  readonly survivorTokens: (survivor: string) => ReadonlySet<string> | undefined;
}

/** The index of the first element of the ascending `sorted` that is `>= value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * For each of the ascending `positions`, the first of `rows` (indexes into `all`, in ledger order)
 * whose range holds it, or -1: each position is taken once, by the first row reaching it, and
 * later rows skip taken positions (a union-find "next free" pointer), so the cost is linear in
 * rows and positions whatever the ranges.
 */
function firstCoveringRow(
  positions: readonly number[],
  rows: readonly number[],
  all: readonly LedgerRow[],
): Int32Array {
  const owner = new Int32Array(positions.length).fill(-1);
  const next = Int32Array.from({ length: positions.length + 1 }, (_, i) => i);
  const free = (i: number): number => {
    let root = i;
    while (next[root] !== root) root = next[root];
    while (next[i] !== root) {
      const up = next[i];
      next[i] = root;
      i = up;
    }
    return root;
  };
  for (const r of rows) {
    for (let i = free(lowerBound(positions, all[r].first)); i < positions.length; i = free(i)) {
      if (positions[i] > all[r].last) break;
      owner[i] = r;
      next[i] = i + 1;
    }
  }
  return owner;
}

/**
 * Decide each miss (in the given order): ledgered by the first row, in ledger order, whose snapshot
 * range holds the token and whose survivor is `-` or currently carries the token; else uncovered.
 * `rows` must already be the rows of this file.
 *
 * Linear in the snapshot, the ledger and the survivors (`references/context-guard.md#drop-ledger`):
 * each line's tokens are taken once; rows are grouped by survivor (`-`, or each survivor's token
 * set), and within a group each line holding a miss that survivor carries is assigned, once, the
 * group's first row reaching it. A survivor is only looked up for a row whose range holds a miss.
 */
export function coverMisses(
  misses: readonly string[],
  rows: readonly LedgerRow[],
  inputs: CoverageInputs,
): MissDecision[] {
  const wanted = new Set(misses);
  const end = rows.reduce((m, r) => Math.max(m, Math.min(r.last, inputs.snapshotLines.length)), 0);
  // Where each miss occurs: its snapshot line numbers, ascending, each once.
  const where = new Map<string, number[]>();
  for (let n = 1; n <= end && wanted.size > 0; n++) {
    for (const token of inputs.lineTokens(inputs.snapshotLines[n - 1])) {
      if (!wanted.has(token)) continue;
      const at = where.get(token);
      if (at === undefined) where.set(token, [n]);
      else if (at[at.length - 1] !== n) at.push(n);
    }
  }
  const anyMiss = [...new Set([...where.values()].flat())].sort((a, b) => a - b);
  // Rows in ledger order, grouped by what their survivor carries: `-` carries everything.
  const groups = new Map<ReadonlySet<string> | "-", number[]>();
  rows.forEach((r, i) => {
    const at = lowerBound(anyMiss, r.first);
    if (at >= anyMiss.length || anyMiss[at] > r.last) return; // no miss in range: never asked
    const key = r.survivor === "-" ? "-" : inputs.survivorTokens(r.survivor);
    if (key === undefined) return; // a survivor that is not there covers nothing
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [i]);
    else group.push(i);
  });
  const best = new Map<string, number>();
  for (const [carried, members] of groups) {
    const eligible = [...where.keys()].filter((t) => carried === "-" || carried.has(t));
    if (eligible.length === 0) continue;
    const positions = [...new Set(eligible.flatMap((t) => where.get(t)!))].sort((a, b) => a - b);
    const owner = firstCoveringRow(positions, members, rows);
    const indexOf = new Map(positions.map((p, i) => [p, i]));
    for (const t of eligible) {
      for (const n of where.get(t)!) {
        const r = owner[indexOf.get(n)!];
        if (r >= 0 && r < (best.get(t) ?? Infinity)) best.set(t, r);
      }
    }
  }
  return misses.map((token) => {
    const r = best.get(token);
    return r === undefined ? { token } : { token, row: rows[r] };
  });
}

/** The `LEDGERED:` / `UNCOVERED:` line of one decided miss. */
export function coverageLine(c: MissDecision): Text {
  return c.row === undefined
    ? text`UNCOVERED: ${c.token}`
    : text`LEDGERED: ${c.token} (row ${c.row.line}: ${c.row.range} -> ${c.row.survivor})`;
}

/** True when every miss found a covering row (`GATE: PASS (every miss ledgered)`). */
export function allLedgered(decisions: readonly MissDecision[]): boolean {
  return decisions.every((d) => d.row !== undefined);
}

// ---------------------------------------------------------------------------------------------
// I/O edge

/**
 * Resolve a ledger path or survivor like a command-line argument: leading `~/` → `$HOME/`, relative
 * → joined to `cwd`, then lexical normalisation (links kept).
 */
export function resolveLedgerPath(path: string, cwd: string, home: string | undefined): string {
  const expanded = path.startsWith("~/") ? `${home ?? ""}/${path.slice(2)}` : path;
  return normalizeLexical(expanded, cwd);
}

/**
 * True when a ledger path (already resolved) names the verified file: equal logical absolute paths,
 * or both exist with the same physical path.
 */
export function sameLedgerFile(rowPath: string, fileLogical: string): boolean {
  if (rowPath === fileLogical) return true;
  const a = physicalPath(rowPath);
  return a !== undefined && a === physicalPath(fileLogical);
}

/**
 * Read and validate the `--ledger` file of verify: a {@linkcode LedgerError}
 * `no such ledger file: <L>` when it is not a readable regular file, or naming the first malformed
 * row.
 */
export function loadLedger(ledgerArg: string): LedgerRow[] {
  let content: string;
  const missing = () => new LedgerError(ledgerArg, text`no such ledger file: ${ledgerArg}`);
  if (!isFileFollow(ledgerArg)) throw missing();
  try {
    content = new TextDecoder().decode(readRegular(ledgerArg));
  } catch {
    throw missing();
  }
  const result = validateLedger(content);
  if (!result.ok) {
    throw new LedgerError(
      ledgerArg,
      malformedLedgerMessage(ledgerArg, result.line, result.why),
      result.line,
    );
  }
  return [...result.rows];
}

/** A ledger bound to the environment of one verify run: resolves rows to files. */
export class LedgerIndex {
  readonly #rows: readonly { row: LedgerRow; resolved: string }[];
  readonly #cwd: string;
  readonly #home: string | undefined;

  /** Index `rows`, resolving their paths against the logical cwd and `$HOME`. */
  constructor(
    rows: readonly LedgerRow[],
    cwd: string = logicalCwd(),
    home: string | undefined = envValue("HOME"),
  ) {
    this.#cwd = cwd;
    this.#home = home;
    this.#rows = rows.map((row) => ({ row, resolved: resolveLedgerPath(row.path, cwd, home) }));
  }

  /** The rows of the file whose logical absolute path is `fileLogical`, in ledger order. */
  rowsFor(fileLogical: string): LedgerRow[] {
    return this.#rows.filter((r) => sameLedgerFile(r.resolved, fileLogical)).map((r) => r.row);
  }

  /** The logical absolute path of a command-line file argument (no `~` expansion: the shell did it). */
  argumentPath(arg: string): string {
    return normalizeLexical(arg, this.#cwd);
  }

  /** Resolve a survivor as written to an absolute logical path. */
  survivorPath(survivor: string): string {
    return resolveLedgerPath(survivor, this.#cwd, this.#home);
  }
}

/**
 * The survivor-token lookup for {@linkcode CoverageInputs}: resolves the survivor and, when it is a
 * regular file, reads it as the gate reads its inputs — within the 64 MiB limit, a failure one
 * line naming the survivor as written (exit 2), never "not carried" — and extracts its tokens with
 * `fileTokens` (memoised per resolved path, so one file gives one set). Missing or not a regular
 * file: `undefined` (UNCOVERED).
 */
export function survivorTokenLookup(
  index: LedgerIndex,
  fileTokens: (bytes: Uint8Array) => ReadonlySet<string>,
): (survivor: string) => ReadonlySet<string> | undefined {
  const cache = new Map<string, ReadonlySet<string> | undefined>();
  return (survivor) => {
    const path = index.survivorPath(survivor);
    if (cache.has(path)) return cache.get(path);
    const tokens = isFileFollow(path) ? fileTokens(readForGate(path, survivor)) : undefined;
    cache.set(path, tokens);
    return tokens;
  };
}

/** The token functions of one alphabet, as the ledger needs them. */
export interface LedgerAlphabet {
  /** Tokens of one line. */
  lineTokens(line: string): Iterable<string>;
  /** Token set of a whole file's bytes. */
  fileTokens(bytes: Uint8Array): ReadonlySet<string>;
  /** A file's lines as the token reader splits them. */
  lines(bytes: Uint8Array): readonly string[];
}

/** The verdict on one file's misses: the lines to print after them and whether all are covered. */
export interface LedgerVerdict {
  /** `LEDGERED:` / `UNCOVERED:` lines, one per miss, in miss order. */
  lines: Text[];
  /** True when every miss is ledgered. */
  covered: boolean;
}

/**
 * Bind a validated ledger to one verify run: `cover(target, copy, misses)` judges a file's misses
 * against its rows (matched through the argument as typed), the snapshot copy's lines (`copy`: its
 * bytes) and the survivors' current tokens.
 */
export function ledgerCoverage(
  rows: readonly LedgerRow[],
  alphabet: LedgerAlphabet,
  index: LedgerIndex = new LedgerIndex(rows),
): {
  cover(target: { arg: string }, copy: Uint8Array, misses: readonly string[]): LedgerVerdict;
} {
  const survivorTokens = survivorTokenLookup(index, (bytes) => alphabet.fileTokens(bytes));
  return {
    cover(target, copy, misses) {
      const decisions = coverMisses(misses, index.rowsFor(index.argumentPath(target.arg)), {
        snapshotLines: alphabet.lines(copy),
        lineTokens: (line) => alphabet.lineTokens(line),
        survivorTokens,
      });
      return { lines: decisions.map(coverageLine), covered: allLedgered(decisions) };
    },
  };
}
