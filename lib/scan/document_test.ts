import assert from "node:assert/strict";
import { admitRows, buildDocument, computeTotals, renderScanDocument } from "./document.ts";
import type { CandidateRow } from "./discovery.ts";
import { parseScanDocument, ScanDocumentSchema } from "./schema.ts";

const row = (over: Partial<CandidateRow>): CandidateRow => ({
  path: "/r/a.md",
  root: "project",
  tier: "always-on",
  kind: "file",
  bytes: 7,
  estimated: false,
  loading: "on-demand",
  ...over,
});

Deno.test("admitRows: tier filter, then zero bytes, then dedup on (tier, path, kind), first wins", () => {
  const rows = admitRows([
    row({ bytes: 0 }),
    row({ root: "project", loading: "on-demand" }),
    row({ root: "global", loading: "startup-instruction", bytes: 9 }),
    row({ kind: "field:description", loading: "runtime-dependent" }),
    row({ tier: "per-spawn", loading: "selected-agent" }),
  ], "all");
  assert.deepEqual(rows.map((r) => [r.root, r.tier, r.kind, r.bytes, r.tokens]), [
    ["project", "always-on", "file", 7, 1],
    ["project", "always-on", "field:description", 7, 1],
    ["project", "per-spawn", "file", 7, 1],
  ]);
  assert.equal(admitRows([row({}), row({ tier: "per-spawn" })], "per-spawn").length, 1);
});

Deno.test("computeTotals sums per-row floors, not floor(sum/4)", () => {
  const rows = admitRows([row({ path: "/a", bytes: 3 }), row({ path: "/b", bytes: 3 })], "all");
  assert.deepEqual(computeTotals(rows).grand, { files: 2, bytes: 6, tokens: 0 });
  assert.deepEqual(computeTotals(rows)["per-spawn"], { files: 0, bytes: 0, tokens: 0 });
});

Deno.test("renderScanDocument: fixed layout, compact rows, empty arrays, trailing newline; schema round-trip", () => {
  const rows = admitRows([row({ path: '/r/q"\t\x1b.md' })], "all");
  const doc = buildDocument("/r", null, "all", rows, [
    { root: "project", path: "/r/x", kind: "discovery-incomplete", exit_status: 1, detail: "a\nb" },
  ]);
  const text = renderScanDocument(doc);
  assert.equal(
    text,
    `{
  "roots": {"project": "/r", "global": null},
  "tier_filter": "all",
  "token_model": "chars/4",
  "measurement": {"scope": "potential-inventory", "token_proxy": "bytes/4", "actual_loading_observed": false},
  "files": [
    {"path":"/r/q\\"\\t\\u001b.md","root":"project","tier":"always-on","kind":"file","bytes":7,"tokens":1,"estimated":false,"loading":"on-demand"}
  ],
  "scan_issues": [
    {"root":"project","path":"/r/x","kind":"discovery-incomplete","exit_status":1,"detail":"a\\nb"}
  ],
  "totals": {
    "always-on": {"files": 1, "bytes": 7, "tokens": 1},
    "per-spawn": {"files": 0, "bytes": 0, "tokens": 0},
    "per-invocation": {"files": 0, "bytes": 0, "tokens": 0},
    "grand": {"files": 1, "bytes": 7, "tokens": 1}
  }
}
`,
  );
  assert.deepEqual(ScanDocumentSchema.parse(JSON.parse(text)), doc);
  const empty = renderScanDocument(buildDocument("/r", "/g", "per-spawn", [], []));
  assert.ok(empty.includes('  "files": [\n  ],\n  "scan_issues": [\n  ],\n'));
  assert.ok(empty.includes('"global": "/g"'));
});

Deno.test("parseScanDocument accepts what the renderer writes and names the first bad field", () => {
  const doc = buildDocument("/r", "/g", "all", admitRows([row({})], "all"), []);
  const ok = parseScanDocument(JSON.parse(renderScanDocument(doc)));
  assert.deepEqual(ok, { ok: true, document: doc });
  const bad = JSON.parse(renderScanDocument(doc));
  bad.files[0].tier = "sometimes";
  const rejected = parseScanDocument(bad);
  assert.equal(rejected.ok, false);
  assert.ok(!rejected.ok && rejected.error.startsWith("files.0.tier: "));
});
