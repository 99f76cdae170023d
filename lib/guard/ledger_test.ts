import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import {
  allLedgered,
  coverageLine,
  coverMisses,
  ledgerCoverage,
  LedgerIndex,
  ledgerLines,
  type LedgerRow,
  loadLedger,
  malformedReason,
  parseLineRange,
  resolveLedgerPath,
  sameLedgerFile,
  survivorTokenLookup,
  validateLedger,
} from "./ledger.ts";
import fc from "fast-check";
import { CtxkitError } from "../errors.ts";
import { makeTempDir } from "../../tests/_helpers.ts";
import { plain } from "../text.ts";

// A stand-in alphabet for the pure decision: every whitespace-separated word is a token.
const words = (line: string): string[] => line.split(/\s+/).filter((w) => w !== "");

function row(line: number, range: string, survivor: string, path = "F.md"): LedgerRow {
  const r = parseLineRange(range)!;
  return { line, path, range, first: r.first, last: r.last, survivor, reason: "" };
}

Deno.test("ledgerLines: LF, CRLF and CR end lines; blanks and comments skipped; numbers physical", () => {
  const text = "# path\tline\n\na\t1\t-\r\nb\t2\tS\treason\rc\t3-4\t-\textra\tmore\n";
  assert.deepEqual(ledgerLines(text), [
    { line: 3, fields: ["a", "1", "-"] },
    { line: 4, fields: ["b", "2", "S", "reason"] },
    { line: 5, fields: ["c", "3-4", "-", "extra", "more"] },
  ]);
  assert.deepEqual(ledgerLines(""), []);
  assert.deepEqual(ledgerLines(" #not a comment"), [{ line: 1, fields: [" #not a comment"] }]);
});

Deno.test("parseLineRange: N or N-M with 1 <= N <= M", () => {
  assert.deepEqual(parseLineRange("3"), { first: 3, last: 3 });
  assert.deepEqual(parseLineRange("3-5"), { first: 3, last: 5 });
  assert.deepEqual(parseLineRange("007-7"), { first: 7, last: 7 });
  assert.deepEqual(parseLineRange("2-99999999999999999999"), {
    first: 2,
    last: Number.MAX_SAFE_INTEGER,
  });
  for (const bad of ["", "0", "0-3", "5-3", "3-x", "-3", "3-", "1.5", " 3", "3 ", "+3", "١"]) {
    assert.equal(parseLineRange(bad), undefined, bad);
  }
});

Deno.test("malformedReason: each reason, checked in order", () => {
  const need = "need path<TAB>line-range<TAB>survivor[<TAB>reason]";
  assert.equal(malformedReason(["a"]), need);
  assert.equal(malformedReason(["a", "1"]), need);
  assert.equal(malformedReason(["", "x", ""]), "empty path");
  assert.equal(
    malformedReason(["a", "3-x", ""]),
    "bad line range '3-x' (want N or N-M, 1 <= N <= M)",
  );
  assert.equal(malformedReason(["a", "1", ""]), "empty survivor (use - for an accepted loss)");
  assert.equal(malformedReason(["a", "1", "-"]), undefined);
  assert.equal(malformedReason(["a", "1", "-", "why", "x"]), undefined);
});

Deno.test("validateLedger: first malformed row wins with its physical line", () => {
  const text = "# h\nCLAUDE.md\t3\tstyle.md\tok\r\nCLAUDE.md\t3-x\t-\nbad\n";
  assert.deepEqual(validateLedger(text), {
    ok: false,
    line: 3,
    why: "bad line range '3-x' (want N or N-M, 1 <= N <= M)",
  });
  const good = validateLedger("a\t1-2\ts\tr\tignored\nb\t4\t-\n");
  assert.ok(good.ok);
  assert.deepEqual(good.rows, [
    { line: 1, path: "a", range: "1-2", first: 1, last: 2, survivor: "s", reason: "r" },
    { line: 2, path: "b", range: "4", first: 4, last: 4, survivor: "-", reason: "" },
  ]);
});

/** Token set of snapshot lines `first..last` (1-based; past the end absent): the oracle's part. */
function rangeTokens(lines: readonly string[], first: number, last: number): Set<string> {
  const out = new Set<string>();
  for (let n = first; n <= Math.min(last, lines.length); n++) {
    for (const token of words(lines[n - 1])) out.add(token);
  }
  return out;
}

/** The rule as the reference states it, tried row by row: the oracle for `coverMisses`. */
function naiveCoverMisses(
  misses: readonly string[],
  rows: readonly LedgerRow[],
  lines: readonly string[],
  survivors: Record<string, ReadonlySet<string> | undefined>,
) {
  return misses.map((token) => {
    const hit = rows.find((r) =>
      rangeTokens(lines, r.first, r.last).has(token) &&
      (r.survivor === "-" || (survivors[r.survivor]?.has(token) ?? false))
    );
    return hit === undefined ? { token } : { token, row: hit };
  });
}

Deno.test("coverMisses decides exactly as the rule, row by row, on random ledgers", () => {
  const word = fc.constantFrom("a", "b", "c", "d", "e");
  const survivorName = fc.constantFrom("-", "S.md", "T.md", "gone.md");
  fc.assert(
    fc.property(
      fc.array(fc.array(word, { maxLength: 4 }).map((w) => w.join(" ")), { maxLength: 8 }),
      fc.array(fc.tuple(fc.nat(9), fc.nat(4), survivorName), { maxLength: 10 }),
      fc.uniqueArray(word, { maxLength: 5 }),
      fc.array(word, { maxLength: 3 }),
      fc.array(word, { maxLength: 3 }),
      (lines, spans, misses, s, t) => {
        const rows = spans.map(([first, extra, survivor], i) =>
          row(i + 1, `${first + 1}-${first + 1 + extra}`, survivor)
        );
        const survivors = { "S.md": new Set(s), "T.md": new Set(t), "gone.md": undefined };
        const got = coverMisses(misses, rows, {
          snapshotLines: lines,
          lineTokens: words,
          survivorTokens: (name) => survivors[name as keyof typeof survivors],
        });
        assert.deepEqual(got, naiveCoverMisses(misses, rows, lines, survivors));
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("coverMisses: `-`, survivor carrying the token, first matching row", () => {
  const snapshot = ["title", "x 30", "y build.sh", "z 30"];
  const survivors: Record<string, Set<string>> = {
    "style.md": new Set(["build.sh", "other"]),
    "empty.md": new Set(),
  };
  const rows = [
    row(1, "1", "-"), // range lacks every miss
    row(2, "3", "empty.md"), // survivor lacks build.sh
    row(3, "3", "style.md"), // covers build.sh
    row(4, "2-4", "-"), // covers 30
    row(5, "4", "-"), // would cover 30 too, but row 4 comes first
  ];
  const coverage = coverMisses(["30", "build.sh", "gone"], rows, {
    snapshotLines: snapshot,
    lineTokens: words,
    survivorTokens: (s) => survivors[s],
  });
  assert.deepEqual(coverage.map((c) => plain(coverageLine(c))), [
    "LEDGERED: 30 (row 4: 2-4 -> -)",
    "LEDGERED: build.sh (row 3: 3 -> style.md)",
    "UNCOVERED: gone",
  ]);
  assert.equal(allLedgered(coverage), false);
  assert.equal(allLedgered(coverage.slice(0, 2)), true);
});

Deno.test("coverMisses: missing survivor, range without the token, no rows", () => {
  const inputs = {
    snapshotLines: ["a 1", "b 2"],
    lineTokens: words,
    survivorTokens: (_: string) => undefined,
  };
  assert.deepEqual(coverMisses(["1"], [row(1, "1", "gone.md")], inputs), [{ token: "1" }]);
  assert.deepEqual(coverMisses(["1"], [row(1, "2", "-")], inputs), [{ token: "1" }]);
  assert.deepEqual(coverMisses(["1"], [], inputs), [{ token: "1" }]);
  let asked = 0;
  coverMisses(["1"], [row(1, "1", "-")], {
    ...inputs,
    survivorTokens: () => {
      asked++;
      return undefined;
    },
  });
  assert.equal(asked, 0, "`-` needs no survivor lookup");
});

Deno.test("resolveLedgerPath: ~/, relative, lexical normalisation", () => {
  assert.equal(
    resolveLedgerPath("~/.claude/CLAUDE.md", "/p", "/home/ana"),
    "/home/ana/.claude/CLAUDE.md",
  );
  assert.equal(resolveLedgerPath("a/../b//c.md", "/p/q", "/h"), "/p/q/b/c.md");
  assert.equal(resolveLedgerPath("/abs/./x", "/p", "/h"), "/abs/x");
  assert.equal(resolveLedgerPath("~x/y", "/p", "/h"), "/p/~x/y");
});

Deno.test("sameLedgerFile and LedgerIndex: logical or physical identity", () => {
  const root = makeTempDir("ledger-");
  mkdirSync(join(root, "real"));
  writeFileSync(join(root, "real", "F.md"), "x\n");
  symlinkSync(join(root, "real"), join(root, "lnk"));
  assert.ok(sameLedgerFile(join(root, "lnk", "F.md"), join(root, "real", "F.md")));
  assert.ok(sameLedgerFile("/nowhere/a", "/nowhere/a"));
  assert.ok(!sameLedgerFile("/nowhere/a", "/nowhere/b"));

  const rows = validateLedger(
    "F.md\t1\t-\nreal/F.md\t1\t-\n../x/F.md\t1\t-\n~/F.md\t1\t-\nother.md\t1\t-\n",
  );
  assert.ok(rows.ok);
  const index = new LedgerIndex(rows.rows, join(root, "lnk"), join(root, "real"));
  assert.deepEqual(index.rowsFor(join(root, "lnk", "F.md")).map((r) => r.line), [1, 4]);
  const index2 = new LedgerIndex(rows.rows, root, join(root, "real"));
  assert.deepEqual(index2.rowsFor(join(root, "real", "F.md")).map((r) => r.line), [2, 4]);
  assert.equal(index2.survivorPath("S.md"), join(root, "S.md"));
});

Deno.test("survivorTokenLookup: regular files only, memoised", () => {
  const root = makeTempDir("ledger-");
  writeFileSync(join(root, "S.md"), "alpha beta\n");
  mkdirSync(join(root, "dir"));
  let reads = 0;
  const lookup = survivorTokenLookup(new LedgerIndex([], root, "/h"), (bytes) => {
    reads++;
    return new Set(words(new TextDecoder().decode(bytes)));
  });
  assert.deepEqual([...lookup("S.md")!], ["alpha", "beta"]);
  assert.deepEqual([...lookup(join(root, "S.md"))!], ["alpha", "beta"]);
  assert.equal(reads, 1);
  assert.equal(lookup("dir"), undefined);
  assert.equal(lookup("missing.md"), undefined);
});

Deno.test("loadLedger: missing file and malformed rows die with exit 2", () => {
  const root = makeTempDir("ledger-");
  const dies = (arg: string, message: string) =>
    assert.throws(() => loadLedger(arg), (e: unknown) => {
      assert.ok(e instanceof CtxkitError);
      assert.equal(e.exitCode, 2);
      assert.equal(e.message, message);
      return true;
    });
  dies(join(root, "nope.tsv"), `no such ledger file: ${join(root, "nope.tsv")}`);
  dies(root, `no such ledger file: ${root}`);
  writeFileSync(join(root, "l.tsv"), "a\t1\t-\n\t2\tS\n");
  dies(join(root, "l.tsv"), `malformed ledger row ${join(root, "l.tsv")}:2: empty path`);
  writeFileSync(join(root, "ok.tsv"), "a\t1\t-\r\n");
  assert.equal(loadLedger(join(root, "ok.tsv")).length, 1);
});

Deno.test("ledgerCoverage: binds rows, snapshot copy and survivors for the stage", () => {
  const root = makeTempDir("ledger-");
  writeFileSync(join(root, "copy.md"), "one\ntwo three\nfour\n");
  writeFileSync(join(root, "S.md"), "three\n");
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  const alphabet = {
    lineTokens: words,
    fileTokens: (b: Uint8Array) => new Set(words(text(b))),
    lines: (b: Uint8Array) => text(b).split("\n").slice(0, -1),
  };
  const rows = validateLedger(
    "F.md\t2\tS.md\tmoved\nF.md\t2-3\t-\nG.md\t1\t-\nsub/../F.md\t1\tS.md\n",
  );
  assert.ok(rows.ok);
  const bound = ledgerCoverage(rows.rows, alphabet, new LedgerIndex(rows.rows, root, "/h"));
  const cover = {
    cover: (target: { arg: string }, copy: string, misses: string[]) => {
      const v = bound.cover(target, Deno.readFileSync(copy), misses);
      return { lines: v.lines.map(plain), covered: v.covered };
    },
  };
  assert.deepEqual(cover.cover({ arg: "./F.md" }, join(root, "copy.md"), ["one", "three", "two"]), {
    lines: [
      "UNCOVERED: one",
      "LEDGERED: three (row 1: 2 -> S.md)",
      "LEDGERED: two (row 2: 2-3 -> -)",
    ],
    covered: false,
  });
  assert.deepEqual(cover.cover({ arg: join(root, "F.md") }, join(root, "copy.md"), ["four"]), {
    lines: ["LEDGERED: four (row 2: 2-3 -> -)"],
    covered: true,
  });
  // Rows of another file never cover this one.
  assert.deepEqual(cover.cover({ arg: "H.md" }, join(root, "copy.md"), ["one"]), {
    lines: ["UNCOVERED: one"],
    covered: false,
  });
});
