import assert from "node:assert/strict";
import {
  achievedRatio,
  buildStateDocument,
  localTimestamp,
  renderStateDocument,
  stateDrops,
  stateFiles,
} from "./document.ts";
import { pythonFloatRepr } from "./pyfloat.ts";
import { checkScanText, type StateScanInput } from "./scan_input.ts";

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
