import assert from "node:assert/strict";
import type { FlagRead } from "./flag.ts";
import {
  type MirrorRows,
  type ProseFlag,
  type StatusDocument,
  StatusDocumentSchema,
} from "./schema.ts";
import { driftKeys, expectedMirror, MIRROR_DEFAULTS, statusDocument } from "./status.ts";
import { safeJson } from "./sanitize.ts";

const NOW = 1_800_000_000_000;
const ACTIVE_FULL = {
  CELLM_PROSE_ACTIVE: "true",
  CELLM_PROSE_LEVEL: "full",
  CELLM_PROSE_EXPIRES_AT: "1800000000000",
};
const NO_ROWS: MirrorRows = {
  CELLM_PROSE_ACTIVE: null,
  CELLM_PROSE_LEVEL: null,
  CELLM_PROSE_EXPIRES_AT: null,
};

function active(patch: Partial<ProseFlag>): FlagRead {
  const flag: ProseFlag = {
    level: "full",
    ttl: { unit: "turn", value: 1 },
    expiresAt: null,
    activatedAt: NOW,
    source: "manual",
    ...patch,
  };
  return { state: "active", flag, reason: null, field: null, path: "/r/prose/.active", raw: null };
}

Deno.test("expectedMirror: only an active flag is mirrored as active", () => {
  assert.deepEqual(
    expectedMirror({ state: "active", flag: { level: "full", expiresAt: 1800000000000 } }),
    ACTIVE_FULL,
  );
  assert.deepEqual(
    expectedMirror({ state: "active", flag: { level: "off", expiresAt: null } }),
    { CELLM_PROSE_ACTIVE: "true", CELLM_PROSE_LEVEL: "off", CELLM_PROSE_EXPIRES_AT: "null" },
  );
  for (const state of ["expired", "absent", "invalid", "unsafe"]) {
    const flag = state === "expired" ? { level: "full", expiresAt: 5 } : null;
    assert.deepEqual(expectedMirror({ state, flag }), MIRROR_DEFAULTS);
  }
});

Deno.test("driftKeys: missing rows are inactive defaults; keys in fixed order", () => {
  assert.deepEqual(driftKeys(NO_ROWS, { ...MIRROR_DEFAULTS }), []);
  assert.deepEqual(driftKeys(NO_ROWS, ACTIVE_FULL), [
    "CELLM_PROSE_ACTIVE",
    "CELLM_PROSE_LEVEL",
    "CELLM_PROSE_EXPIRES_AT",
  ]);
  assert.deepEqual(driftKeys({ ...ACTIVE_FULL, CELLM_PROSE_LEVEL: "minimal" }, ACTIVE_FULL), [
    "CELLM_PROSE_LEVEL",
  ]);
});

Deno.test("driftKeys: undecodable values are drift even when equal as text", () => {
  const odd = {
    CELLM_PROSE_ACTIVE: "yes",
    CELLM_PROSE_LEVEL: "max",
    CELLM_PROSE_EXPIRES_AT: "007",
  };
  assert.deepEqual(driftKeys(odd, odd), [
    "CELLM_PROSE_ACTIVE",
    "CELLM_PROSE_LEVEL",
    "CELLM_PROSE_EXPIRES_AT",
  ]);
});

Deno.test("status document: keys in contract order, parses with its own schema, hides invalid content", () => {
  const doc = statusDocument(active({ ttl: { unit: "block", value: 0 } }), "filesystem", NOW);
  // Keys in the order of the schema, which is the contract order.
  assert.deepEqual(Object.keys(doc), Object.keys(StatusDocumentSchema.shape));
  assert.equal(StatusDocumentSchema.safeParse(doc).success, true);
  assert.deepEqual([doc.effectiveLevel, doc.mirror, doc.drift, doc.driftKeys], [
    "full",
    null,
    null,
    null,
  ]);
  const hidden = statusDocument(
    {
      state: "invalid",
      flag: null,
      reason: "too-large",
      field: null,
      path: "/p\x1b[2J",
      raw: null,
    },
    "filesystem",
    NOW,
  );
  assert.equal(hidden.flag, null);
  assert.equal(hidden.flagPath, "/p\x1b[2J");
  assert.equal(StatusDocumentSchema.safeParse(hidden).success, true);
});

Deno.test("status document with a mirror: drift from the rows; an unreadable mirror drifts everywhere", () => {
  const read = active({ expiresAt: NOW + 1 });
  const same = statusDocument(read, "backend", NOW, { ...expectedMirror(read) });
  assert.deepEqual([same.drift, same.driftKeys], [false, []]);
  const broken = statusDocument(read, "backend", NOW, null);
  assert.deepEqual([broken.mirror, broken.drift, broken.driftKeys?.length], [null, true, 3]);
  const odd = statusDocument(read, "backend", NOW, {
    ...NO_ROWS,
    CELLM_PROSE_ACTIVE: "\x1b[2Jtrue",
  });
  assert.equal(odd.mirror?.CELLM_PROSE_ACTIVE, "\x1b[2Jtrue");
  assert.deepEqual(odd.driftKeys, [
    "CELLM_PROSE_ACTIVE",
    "CELLM_PROSE_LEVEL",
    "CELLM_PROSE_EXPIRES_AT",
  ]);
});

Deno.test("a document keeps the exact strings; safeJson prints them escaped, losslessly", () => {
  const read: FlagRead = {
    state: "unsafe",
    flag: null,
    reason: "symlink-file",
    field: null,
    path: "/tmp/\u001b[31mx\u009b\u202e/.active",
    raw: null,
  };
  const doc: StatusDocument = statusDocument(read, "backend", 1, {
    CELLM_PROSE_ACTIVE: "\u001b]0;title\u0007true",
    CELLM_PROSE_LEVEL: null,
    CELLM_PROSE_EXPIRES_AT: "null",
  });
  assert.equal(doc.flagPath, read.path);
  assert.equal(doc.mirror?.CELLM_PROSE_ACTIVE, "\u001b]0;title\u0007true");
  const text = safeJson(doc);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(text, /[\x00-\x1f\x7f-\x9f\u202e]/);
  assert.deepEqual(JSON.parse(text), doc);
});
