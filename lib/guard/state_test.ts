import assert from "node:assert/strict";
import fc from "fast-check";
import {
  achievedRatio,
  buildStateDocument,
  checkScanText,
  localTimestamp,
  parseStateArgs,
  pythonFloatRepr,
  ratioToDouble,
  renderStateDocument,
  roundHalfEven,
  stateDrops,
  stateFiles,
  statePath,
  type StateScanInput,
} from "./state.ts";
import { CtxkitError } from "../exit.ts";

// Expected values computed with CPython 3: repr(round((b - a) * 100 / b, 2)).
const RATIOS: [number, number, string][] = [
  [8, 7, "12.5"],
  [8, 5, "37.5"],
  [8, 9, "-12.5"],
  [1000, 1, "99.9"],
  [3, 2, "33.33"],
  [7, 0, "100.0"],
  [7, 7, "0.0"],
  [100000, 99999, "0.0"],
  [100000, 100001, "-0.0"],
  [800, 799, "0.12"],
  [800, 797, "0.38"],
  [1, 1000000000000000, "-9.99999999999999e+16"],
  [9007199254740991, 1, "100.0"],
  [9007199254740991, 9007199254740990, "0.0"],
  [700, 510, "27.14"],
  [3, 1, "66.67"],
  [6, 5, "16.67"],
  [400, 399, "0.25"],
  [9007199254740991, 4503599627370496, "50.0"],
  [21250919909, 4502355920, "78.81"],
  [5992, 9548, "-59.35"],
  [33870412123024, 38775354357721, "-14.48"],
  [17422815957712, 7855269482589, "54.91"],
  [44211436549913, 82409537253136, "-86.4"],
  [337508673038681, 274829716679200, "18.57"],
  [6187509738963656, 8085480931126560, "-30.67"],
  [1238722067160939, 421520287998206, "65.97"],
  [63, 93, "-47.62"],
];

Deno.test("achievedRatio + pythonFloatRepr match CPython round() and repr()", () => {
  for (const [before, after, want] of RATIOS) {
    assert.equal(pythonFloatRepr(achievedRatio(before, after)), want, `${before} -> ${after}`);
  }
  assert.equal(pythonFloatRepr(achievedRatio(0, 0)), "0.0");
  assert.equal(pythonFloatRepr(achievedRatio(0, 12)), "0.0");
});

Deno.test("roundHalfEven: exact binary value, ties to even, sign of zero kept", () => {
  const cases: [number, string][] = [
    [0.125, "0.12"],
    [0.375, "0.38"],
    [2.675, "2.67"],
    [1.005, "1.0"],
    [-0.001, "-0.0"],
    [-0.005, "-0.01"],
    [-0.015, "-0.01"],
    [0.005, "0.01"],
    [0.015, "0.01"],
    [0.025, "0.03"],
    [1e16, "1e+16"],
    [123456.785, "123456.79"],
    [-2.5e-7, "-0.0"],
  ];
  for (const [x, want] of cases) assert.equal(pythonFloatRepr(roundHalfEven(x, 2)), want, `${x}`);
  // toFixed alone is wrong: it rounds 0.125 up.
  assert.equal((0.125).toFixed(2), "0.13");
});

Deno.test("pythonFloatRepr: CPython repr forms", () => {
  const cases: [number, string][] = [
    [27.14, "27.14"],
    [0, "0.0"],
    [-0, "-0.0"],
    [100, "100.0"],
    [12.5, "12.5"],
    [1e16, "1e+16"],
    [1e15, "1000000000000000.0"],
    [1e-5, "1e-05"],
    [1e-4, "0.0001"],
    [0.1, "0.1"],
    [1.2345678901234568e17, "1.2345678901234568e+17"],
    [1.5e-7, "1.5e-07"],
    [-1e22, "-1e+22"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
  ];
  for (const [x, want] of cases) assert.equal(pythonFloatRepr(x), want);
});

Deno.test("ratioToDouble: equals IEEE division where that is exact, and for big numerators", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(2n ** 53n) + 1n, max: 2n ** 53n - 1n }),
      fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }),
      (n, d) => Object.is(ratioToDouble(n, d), Number(n) / Number(d)) || n === 0n,
    ),
  );
  // Big numerators: scaling by a power of two on both sides must not change the quotient.
  fc.assert(
    fc.property(
      fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }),
      fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }),
      fc.integer({ min: 1, max: 40 }),
      (n, d, k) => ratioToDouble(n << BigInt(k), d << BigInt(k)) === Number(n) / Number(d),
    ),
  );
  // A halfway case beyond 2^53: (2^53 + 1) / 1 ties to even (2^53).
  assert.equal(ratioToDouble(2n ** 53n + 1n, 1n), 2 ** 53);
  assert.equal(ratioToDouble(2n ** 53n + 3n, 1n), 2 ** 53 + 4);
  assert.equal(ratioToDouble(-(10n ** 17n), 1n), -1e17);
});

Deno.test("localTimestamp: numeric offset, never Z", () => {
  const ts = localTimestamp(new Date(2026, 9, 12, 14, 3, 7));
  assert.match(ts, /^2026-10-12T14:03:07[+-][0-9]{2}:[0-9]{2}$/);
  const off = -new Date(2026, 9, 12, 14, 3, 7).getTimezoneOffset();
  const sign = off < 0 ? "-" : "+";
  const abs = Math.abs(off);
  const want = `${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${
    String(abs % 60).padStart(2, "0")
  }`;
  assert.ok(ts.endsWith(want));
});

const scan = (files: [string, number][], grand?: number): string =>
  JSON.stringify({
    scan_issues: [],
    files: files.map(([path, tokens]) => ({ path, tokens })),
    totals: { grand: { tokens: grand ?? files.reduce((n, [, t]) => n + t, 0) } },
  });

const reason = (text: string): string => {
  const r = checkScanText(text);
  assert.ok(!r.ok, `expected a rejection for ${text}`);
  return r.reason;
};

Deno.test("checkScanText: accepts a minimal and a full scan document", () => {
  const r = checkScanText(scan([["a.md", 3], ["a.md", 4], ["b.md", 0]]));
  assert.ok(r.ok);
  assert.deepEqual(r.doc.files.map((f) => f.tokens), [3, 4, 0]);
  assert.ok(checkScanText(`{"scan_issues":[],"files":[],"totals":{"grand":{"tokens":0}}}`).ok);
  assert.ok(
    checkScanText(
      `{"scan_issues":[],"files":[{"path":"a","tokens":-0}],` +
        `"totals":{"grand":{"tokens":0}}}`,
    ).ok,
  );
});

Deno.test("checkScanText: each §7.9 reason", () => {
  const incomplete = "incomplete scanner inventory: scan_issues must be present and empty";
  assert.match(reason("{"), /^invalid JSON: ./);
  assert.match(reason(""), /^invalid JSON: ./);
  assert.equal(reason("[]"), incomplete);
  assert.equal(reason("5"), incomplete);
  assert.equal(reason(`{"files":[],"totals":{"grand":{"tokens":0}}}`), incomplete);
  assert.equal(reason(`{"scan_issues":{},"files":[],"totals":{"grand":{"tokens":0}}}`), incomplete);
  assert.equal(
    reason(`{"scan_issues":[{"root":"project"}],"files":[],"totals":{"grand":{"tokens":0}}}`),
    incomplete,
  );
  assert.equal(
    reason(`{"scan_issues":[],"files":{},"totals":{}}`),
    "invalid scanner file inventory",
  );
  assert.equal(reason(`{"scan_issues":[]}`), "invalid scanner file inventory");
  const withFiles = (files: string, grand = "0") =>
    `{"scan_issues":[],"files":${files},"totals":{"grand":{"tokens":${grand}}}}`;
  assert.equal(reason(withFiles(`[5]`)), "invalid scanner file path");
  assert.equal(reason(withFiles(`[{"tokens":1}]`, "1")), "invalid scanner file path");
  assert.equal(reason(withFiles(`[{"path":"","tokens":1}]`, "1")), "invalid scanner file path");
  assert.equal(reason(withFiles(`[{"path":7,"tokens":1}]`, "1")), "invalid scanner file path");
  for (const bad of ["5.0", "1e2", "true", "-1", '"5"', "null", "9007199254740992", "1.5"]) {
    assert.equal(
      reason(withFiles(`[{"path":"a","tokens":${bad}}]`, "5")),
      "invalid scanner token count",
      bad,
    );
  }
  assert.ok(
    checkScanText(withFiles(`[{"path":"a","tokens":9007199254740991}]`, "9007199254740991")).ok,
  );
  // Entries in order, a path before its tokens.
  assert.equal(
    reason(withFiles(`[{"path":"a","tokens":1.0},{"path":""}]`)),
    "invalid scanner token count",
  );
  assert.equal(
    reason(withFiles(`[{"path":"","tokens":1.0}]`)),
    "invalid scanner file path",
  );
  const noGrand = "missing totals.grand.tokens";
  assert.equal(reason(`{"scan_issues":[],"files":[]}`), noGrand);
  assert.equal(reason(`{"scan_issues":[],"files":[],"totals":[]}`), noGrand);
  assert.equal(reason(`{"scan_issues":[],"files":[],"totals":{"grand":{}}}`), noGrand);
  const mismatch = "scanner token totals do not match its inventory";
  assert.equal(reason(scan([["a", 1], ["b", 2]], 4)), mismatch);
  assert.equal(reason(withFiles(`[]`, "null")), mismatch);
  assert.equal(reason(withFiles(`[]`, "0.0")), mismatch);
  assert.equal(reason(withFiles(`[]`, "-1")), mismatch);
  assert.equal(reason(withFiles(`[{"path":"a","tokens":3}]`, "3.0")), mismatch);
});

const doc = (files: [string, number][]): StateScanInput => {
  const r = checkScanText(scan(files));
  assert.ok(r.ok);
  return r.doc;
};

Deno.test("stateFiles: sorted union by code point, per-path sums, 0 on a missing side", () => {
  const before = doc([["b.md", 5], ["a.md", 1], ["a.md", 2], ["ｚ.md", 1], ["𝔸.md", 1]]);
  const after = doc([["c.md", 4], ["a.md", 1], ["B.md", 2]]);
  assert.deepEqual(stateFiles(before, after), [
    { path: "B.md", before_tokens: 0, after_tokens: 2 },
    { path: "a.md", before_tokens: 3, after_tokens: 1 },
    { path: "b.md", before_tokens: 5, after_tokens: 0 },
    { path: "c.md", before_tokens: 0, after_tokens: 4 },
    { path: "ｚ.md", before_tokens: 1, after_tokens: 0 },
    { path: "𝔸.md", before_tokens: 1, after_tokens: 0 },
  ]);
});

Deno.test("stateDrops: verbatim rows, CRLF, comments, short rows padded", () => {
  assert.deepEqual(stateDrops(undefined), []);
  assert.deepEqual(
    stateDrops(
      "# path\tlines\r\nA.md\t3\t-\tlossy\r\n\r\nB.md\r\nC.md\tx-y\t\tr\textra\rD\t1\tS\n",
    ),
    [
      { path: "A.md", lines: "3", survivor: "-", reason: "lossy" },
      { path: "B.md", lines: "", survivor: "", reason: "" },
      { path: "C.md", lines: "x-y", survivor: "", reason: "r" },
      { path: "D", lines: "1", survivor: "S", reason: "" },
    ],
  );
});

Deno.test("renderStateDocument: key order, layout, escapes, empty arrays", () => {
  const built = buildStateDocument({
    mode: "slim",
    flags: "--global --target=50%",
    before: doc([["CLAUDE.md", 500], [".claude/rules/ä\t.md", 200]]),
    after: doc([["CLAUDE.md", 310], [".claude/rules/ä\t.md", 200]]),
    ledgerText: 'CLAUDE.md\t5\t-\tsaid "x"\n',
    now: new Date(2026, 9, 12, 14, 3, 7),
  });
  const text = renderStateDocument(built);
  const ts = localTimestamp(new Date(2026, 9, 12, 14, 3, 7));
  assert.equal(
    text,
    `{
  "schema": 1,
  "timestamp": "${ts}",
  "mode": "slim",
  "flags": "--global --target=50%",
  "totals": {
    "before_tokens": 700,
    "after_tokens": 510
  },
  "achieved_ratio_pct": 27.14,
  "files": [
    {
      "path": ".claude/rules/ä\\t.md",
      "before_tokens": 200,
      "after_tokens": 200
    },
    {
      "path": "CLAUDE.md",
      "before_tokens": 500,
      "after_tokens": 310
    }
  ],
  "drops": [
    {
      "path": "CLAUDE.md",
      "lines": "5",
      "survivor": "-",
      "reason": "said \\"x\\""
    }
  ]
}
`,
  );
  const empty = renderStateDocument(buildStateDocument({
    mode: "m",
    flags: "",
    before: doc([]),
    after: doc([]),
    now: new Date(2026, 0, 1),
  }));
  assert.ok(empty.includes(`  "achieved_ratio_pct": 0.0,\n  "files": [],\n  "drops": []\n}\n`));
  assert.deepEqual(JSON.parse(text).drops[0].reason, 'said "x"');
});

Deno.test("parseStateArgs: last wins, values verbatim, errors", () => {
  assert.deepEqual(parseStateArgs(["--mode", "a", "--mode", "--check", "--flags", "--global"]), {
    check: false,
    mode: "--check",
    flags: "--global",
  });
  assert.deepEqual(parseStateArgs(["--root", "", "--check"]), { check: true, root: "" });
  const dies = (args: string[], message: string) =>
    assert.throws(() => parseStateArgs(args), (e: unknown) => {
      assert.ok(e instanceof CtxkitError);
      assert.equal(e.exitCode, 2);
      assert.equal(e.message, message);
      return true;
    });
  for (const opt of ["--mode", "--before", "--after", "--flags", "--ledger", "--root", "--out"]) {
    dies(["--check", opt], `❌ ${opt} needs a value`);
  }
  dies(["--bogus"], "❌ unknown argument: --bogus");
  dies(["x"], "❌ unknown argument: x");
  dies(["--mode=slim"], "❌ unknown argument: --mode=slim");
});

Deno.test("statePath: --out, then --root, then P", () => {
  assert.equal(statePath({ check: true, out: "o.json", root: "/r" }, () => "/p"), "o.json");
  assert.equal(
    statePath({ check: true, out: "", root: "/r" }, () => "/p"),
    "/r/.claude/brewtools/context-slim/state.json",
  );
  assert.equal(
    statePath({ check: true, root: "" }, () => "/p"),
    "/p/.claude/brewtools/context-slim/state.json",
  );
});
