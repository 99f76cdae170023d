import assert from "node:assert/strict";
import { checkScanText } from "./scan_input.ts";

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

Deno.test("checkScanText: each documented rejection reason", () => {
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
