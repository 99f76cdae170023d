/**
 * Property tests of every reader of on-disk documents (reliability suite): on arbitrary input the
 * ledger parser, the manifest reader, the prose flag reader, the prose config reader and the scan
 * checks never throw anything but their documented errors, never hang, and give a defined outcome.
 */
import assert from "node:assert/strict";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { CtxkitError } from "../lib/errors.ts";
import { ledgerLines, validateLedger } from "../lib/guard/ledger.ts";
import { isSafeManifestPath, readManifest } from "../lib/guard/manifest.ts";
import { checkScanText } from "../lib/guard/state/scan_input.ts";
import { parseConfigText, ProseConfigSchema } from "../lib/prose/config.ts";
import { parseFlagBytes, readProseFlag } from "../lib/prose/flag.ts";
import { FLAG_STATES, serializeFlag } from "../lib/prose/schema.ts";
import { parseScanDocument } from "../lib/scan/mod.ts";
import { makeTempDir } from "./_helpers.ts";
import { fuzzRuns, fuzzSeed } from "./stress/_properties.ts";

const SEED = fuzzSeed();
const pure = { numRuns: fuzzRuns(1000), seed: SEED };
const disk = { numRuns: Math.max(50, Math.floor(fuzzRuns(1000) / 4)), seed: SEED };

/** Text that looks like its format often enough to reach the deep checks. */
function textish(pieces: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })), { maxLength: 30 })
      .map((a) => a.join("")),
  );
}

// deno-lint-ignore no-control-regex -- the point is to find control characters
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

// ---------------------------------------------------------------------------------------------
// ledger

const LEDGER_WHY = [
  /^need path<TAB>line-range<TAB>survivor\[<TAB>reason\]$/,
  /^empty path$/,
  /^bad line range '.*' \(want N or N-M, 1 <= N <= M\)$/s,
  /^empty survivor \(use - for an accepted loss\)$/,
];

Deno.test(`fuzz ledger: any text validates to rows or to the first malformed line (seed ${SEED})`, () => {
  const ledger = textish(["\t", "\n", "\r\n", "\r", "#", "-", "1", "2-3", "0", "3-2", "a.md", " "]);
  fc.assert(
    fc.property(ledger, (text) => {
      const v = validateLedger(text);
      const physical = text.split(/\r\n|\r|\n/).length;
      if (v.ok) {
        let prev = 0;
        for (const row of v.rows) {
          assert.ok(row.line > prev && row.line <= physical);
          prev = row.line;
          assert.ok(row.path !== "" && row.survivor !== "");
          assert.ok(1 <= row.first && row.first <= row.last);
        }
        assert.equal(v.rows.length, ledgerLines(text).length);
      } else {
        assert.ok(v.line >= 1 && v.line <= physical);
        assert.ok(LEDGER_WHY.some((re) => re.test(v.why)), v.why);
        // Every data line before the reported one is well formed.
        assert.ok(validateLedger(text.split(/\r\n|\r|\n/).slice(0, v.line - 1).join("\n")).ok);
      }
      assert.deepEqual(validateLedger(text), v);
    }),
    pure,
  );
});

// ---------------------------------------------------------------------------------------------
// manifest reader

// Messages as thrown (the command line prints them after `❌ `).
const MANIFEST_DEATHS = [
  /^unreadable manifest \(invalid JSON\?\): /,
  /^manifest has no root: /,
  /^manifest root is not an absolute path: /,
  /^empty snapshot: .* lists no files$/s,
  /^unsafe manifest path: /,
  /^duplicate manifest path: /,
  /^manifest root .* is now .*, not .* where the run was taken \(/s,
];

const hex64 = fc.string({
  unit: fc.constantFrom(..."0123456789abcdef"),
  minLength: 64,
  maxLength: 64,
});
const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary });
const manifestEntry = fc.oneof(
  w(
    6,
    fc.record({
      path: fc.oneof(
        w(4, fc.constantFrom("a", "a/b", "c/d.md", "CLAUDE.md")),
        w(1, fc.constantFrom("../x", "/etc/x", "a/./b", "", ".", "a//b", "a\u0000", "a/..")),
        w(1, fc.string({ maxLength: 8 })),
        w(1, fc.jsonValue()),
      ),
      sha256: fc.oneof(w(4, hex64), w(1, fc.jsonValue())),
    }),
  ),
  w(1, fc.jsonValue()),
);
const manifestValue = fc.oneof(
  w(1, fc.jsonValue()),
  w(
    6,
    fc.record({
      root: fc.oneof(
        w(5, fc.constant("/r")),
        w(2, fc.constantFrom("/", "", "r", null, "/a\u0000b", "/x/", 7)),
        w(1, fc.jsonValue()),
      ),
      files: fc.oneof(w(6, fc.array(manifestEntry, { maxLength: 4 })), w(1, fc.jsonValue())),
      timestamp: fc.jsonValue(),
      root_physical: fc.oneof(w(2, fc.constantFrom("/", "/r", "/elsewhere")), w(1, fc.jsonValue())),
    }, { requiredKeys: ["files"] }),
  ),
);

Deno.test(`fuzz manifest reader: returns a safe manifest or dies with a manifest message, exit 2 (seed ${SEED})`, () => {
  const runDir = makeTempDir("ctxkit-fuzz-manifest-");
  mkdirSync(join(runDir, "orig"));
  const manifest = join(runDir, "manifest.json");
  const bytes = fc.oneof(
    manifestValue.map((v) => new TextEncoder().encode(JSON.stringify(v))),
    fc.uint8Array({ maxLength: 200 }),
    fc.constant(new TextEncoder().encode("[".repeat(100_000))),
    fc.constant(new TextEncoder().encode("[".repeat(100_000) + "]".repeat(100_000))),
    fc.constant(new TextEncoder().encode(`{"root":"/r","files":${"[".repeat(50_000)}`)),
  );
  const seen = new Set<number>();
  fc.assert(
    fc.property(bytes, (b) => {
      writeFileSync(manifest, b);
      try {
        const m = readManifest(runDir);
        seen.add(-1);
        assert.ok(m.root.startsWith("/"));
        assert.ok(m.files.length > 0);
        assert.equal(new Set(m.files.map((f) => f.path)).size, m.files.length);
        for (const f of m.files) assert.ok(isSafeManifestPath(f.path));
      } catch (e) {
        assert.ok(e instanceof CtxkitError, String(e));
        assert.equal(e.exitCode, 2);
        const kind = MANIFEST_DEATHS.findIndex((re) => re.test(e.message));
        assert.ok(kind >= 0, e.message);
        seen.add(kind);
      }
    }),
    disk,
  );
  // Valid manifests and every death were reached (a moved root surely, below).
  seen.delete(6);
  assert.deepEqual([...seen].sort(), [-1, 0, 1, 2, 3, 4, 5]);
  writeFileSync(manifest, JSON.stringify({ root: "/", root_physical: "/elsewhere", files: [] }));
  assert.throws(() => readManifest(runDir), /^ManifestError: manifest root \/ is now \/, not/);
  rmSync(manifest);
  assert.throws(() => readManifest(runDir), /^ManifestError: no manifest: /);
});

// ---------------------------------------------------------------------------------------------
// prose flag reader

const flagValue = fc.record({
  level: fc.oneof(fc.constantFrom("off", "minimal", "full", "max", ""), fc.jsonValue()),
  ttl: fc.oneof(
    fc.record({
      unit: fc.oneof(fc.constantFrom("turn", "block", "session", "explicit"), fc.jsonValue()),
      value: fc.oneof(fc.integer({ min: -2, max: 1002 }), fc.jsonValue()),
    }, { requiredKeys: [] }),
    fc.jsonValue(),
  ),
  expiresAt: fc.oneof(fc.constant(null), fc.integer(), fc.jsonValue()),
  activatedAt: fc.oneof(fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.jsonValue()),
  source: fc.oneof(fc.constantFrom("manual", "auto-clarity", "config"), fc.jsonValue()),
}, { requiredKeys: [] });

/** Flags that satisfy the flag schema, so the round-trip property is really exercised. */
const validFlag = fc.oneof(
  fc.record({
    level: fc.constantFrom("off", "minimal", "full"),
    ttl: fc.oneof(
      fc.integer({ min: 1, max: 1000 }).map((value) => ({ unit: "turn", value })),
      fc.constantFrom("block", "session").map((unit) => ({ unit, value: 0 })),
    ),
    expiresAt: fc.constant(null),
    activatedAt: fc.integer({ min: 1, max: 8.64e15 }),
    source: fc.constantFrom("manual", "config"),
  }),
  fc.integer({ min: 1, max: 8.64e15 - 3_600_000 }).map((at) => ({
    level: "full",
    ttl: { unit: "turn", value: 3 },
    expiresAt: at + 3_600_000,
    activatedAt: at,
    source: "auto-clarity",
  })),
);

const REASONS = new Set(["bad-utf8", "bad-json", "schema"]);

Deno.test(`fuzz flag parser: valid flags round-trip, everything else is bad-utf8, bad-json or schema (seed ${SEED})`, () => {
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.oneof(flagValue, validFlag, fc.jsonValue()).map((v) =>
      new TextEncoder().encode(JSON.stringify(v))
    ),
  );
  let valid = 0;
  fc.assert(
    fc.property(bytes, (b) => {
      const r = parseFlagBytes(b);
      if (r.ok) {
        valid++;
        const again = parseFlagBytes(new TextEncoder().encode(serializeFlag(r.flag)));
        assert.ok(again.ok);
        assert.deepEqual(again.flag, r.flag);
      } else {
        assert.ok(REASONS.has(r.reason), r.reason);
        if (r.field !== null) assert.ok(!CONTROL.test(r.field), r.field);
      }
    }),
    pure,
  );
  assert.ok(valid > 0, "the generator never produced a valid flag");
});

Deno.test(`fuzz flag reader: any planted flag file reads as one of the five states, nothing written (seed ${SEED})`, () => {
  const root = join(makeTempDir("ctxkit-fuzz-flag-"), "cellm");
  mkdirSync(join(root, "prose"), { recursive: true, mode: 0o700 });
  const flag = join(root, "prose", ".active");
  const bytes = fc.oneof(
    fc.uint8Array({ maxLength: 1100 }),
    validFlag.map((v) => new TextEncoder().encode(JSON.stringify(v) + "\n")),
    flagValue.map((v) => new TextEncoder().encode(JSON.stringify(v))),
  );
  fc.assert(
    fc.property(bytes, fc.integer({ min: 0, max: 2 ** 53 - 1 }), (b, now) => {
      writeFileSync(flag, b, { mode: 0o600 });
      const r = readProseFlag({ root, now });
      assert.ok((FLAG_STATES as readonly string[]).includes(r.state), r.state);
      assert.equal(r.flag !== null, r.state === "active" || r.state === "expired");
      if (r.state === "invalid") assert.ok(r.reason !== null);
      if (b.length > 1024) assert.equal(r.reason, "too-large");
      assert.deepEqual(Deno.readFileSync(flag), b);
    }),
    disk,
  );
});

// ---------------------------------------------------------------------------------------------
// prose config reader

Deno.test(`fuzz config reader: JSONC text gives a valid config or one sanitized field error (seed ${SEED})`, () => {
  const jsonc = fc.oneof(
    textish([
      "{",
      "}",
      "[",
      "]",
      ",",
      ":",
      '"level"',
      '"minimal"',
      "//",
      "/*",
      "*/",
      "\n",
      "\u001b[31m",
    ]),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.record({
      level: fc.oneof(fc.constantFrom("off", "minimal", "full"), fc.jsonValue()),
      trigger: fc.oneof(
        fc.record({
          enabled: fc.oneof(fc.boolean(), fc.jsonValue()),
          pattern: fc.oneof(fc.constantFrom("(", "prose", "a+", "[", "\\"), fc.string()),
        }, { requiredKeys: [] }),
        fc.jsonValue(),
      ),
      ["le\u001bvle"]: fc.jsonValue(),
    }, { requiredKeys: [] }).map((v) => `// comment\n${JSON.stringify(v, null, 1)},`),
  );
  fc.assert(
    fc.property(jsonc, (text) => {
      const r = parseConfigText(text, "/tmp/config.json");
      if (r.ok) {
        assert.ok(ProseConfigSchema.safeParse(r.config).success);
      } else {
        // An empty key name (`{"": 1}`) is reported as an empty field: still one defined line.
        assert.equal(typeof r.field, "string");
        assert.ok(!CONTROL.test(r.field), JSON.stringify(r.field));
        assert.ok(!CONTROL.test(r.message), JSON.stringify(r.message));
      }
    }),
    pure,
  );
});

// ---------------------------------------------------------------------------------------------
// scan documents: `state`'s checks and context-scan's own schema

const SCAN_REASONS = [
  /^invalid JSON: /,
  /^incomplete scanner inventory: scan_issues must be present and empty$/,
  /^invalid scanner file inventory$/,
  /^invalid scanner file path$/,
  /^invalid scanner token count$/,
  /^missing totals\.grand\.tokens$/,
  /^scanner token totals do not match its inventory$/,
];

Deno.test(`fuzz scan checks: any text is accepted or rejected with a state rejection reason (seed ${SEED})`, () => {
  const scan = fc.oneof(
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.record({
      scan_issues: fc.oneof(fc.constant([]), fc.jsonValue()),
      files: fc.oneof(
        fc.array(fc.record({ path: fc.jsonValue(), tokens: fc.jsonValue() }, { requiredKeys: [] })),
        fc.jsonValue(),
      ),
      totals: fc.oneof(fc.record({ grand: fc.record({ tokens: fc.jsonValue() }) }), fc.jsonValue()),
    }, { requiredKeys: [] }).map((v) => JSON.stringify(v).replace(/:(\d+)([,}])/, ":$1.0$2")),
  );
  fc.assert(
    fc.property(scan, (text) => {
      const r = checkScanText(text);
      if (!r.ok) {
        assert.ok(SCAN_REASONS.some((re) => re.test(r.reason)), r.reason);
        assert.ok(!r.reason.includes("\n"));
      }
    }),
    pure,
  );
});

Deno.test(`fuzz scan document schema: any JSON value parses or yields a one-line error (seed ${SEED})`, () => {
  fc.assert(
    fc.property(fc.anything(), (v) => {
      const r = parseScanDocument(v);
      if (!r.ok) assert.equal(typeof r.error, "string");
    }),
    pure,
  );
});
