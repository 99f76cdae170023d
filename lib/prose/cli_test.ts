import assert from "node:assert/strict";
import { CtxkitError, EnvironmentError, UsageError } from "../errors.ts";
import { text } from "../text.ts";
import {
  actionLine,
  clockNow,
  driftLine,
  errorLine,
  proseErrorFormat,
  statusLine,
  statusSentence,
} from "./cli.ts";
import { ProseError } from "./errors.ts";
import type { ProseFlag, StatusDocument } from "./schema.ts";

const NOW = 1_800_000_000_000;
const ISO = new Date(NOW).toISOString();

function doc(patch: Partial<StatusDocument>): StatusDocument {
  return {
    schema: "ctxkit.prose.status/1",
    via: "filesystem",
    now: NOW,
    flagPath: "/r/prose/.active",
    state: "absent",
    reason: null,
    field: null,
    effectiveLevel: "off",
    flag: null,
    mirror: null,
    expected: null,
    drift: null,
    driftKeys: null,
    ...patch,
  };
}

function flag(patch: Partial<ProseFlag> = {}): ProseFlag {
  return {
    level: "full",
    ttl: { unit: "turn", value: 2 },
    expiresAt: null,
    activatedAt: NOW,
    source: "manual",
    ...patch,
  };
}

Deno.test("error lines: one shape, codes and fields rendered as values", () => {
  assert.equal(errorLine("io-error", "/p: I/O error"), "PROSE-ERROR: code=io-error /p: I/O error");
  assert.equal(errorLine("usage", "m", "a b"), 'PROSE-ERROR: code=usage field="a b" m');
  assert.equal(errorLine("x\x1b[2J", "m"), 'PROSE-ERROR: code="x\\x1b[2J" m');
});

Deno.test("proseErrorFormat: every failure is one PROSE-ERROR line (plus a synopsis), values sanitized", () => {
  const error = proseErrorFormat.error!;
  assert.deepEqual(error(new ProseError("usage", text`unknown option ${"--\x1b[31mx"}`)), [
    'PROSE-ERROR: code=usage unknown option "--\\x1b[31mx"',
  ]);
  assert.deepEqual(
    error(new ProseError("usage", text`unexpected argument x`, { synopsis: "usage: prose serve" })),
    ["PROSE-ERROR: code=usage unexpected argument x", "usage: prose serve"],
  );
  assert.deepEqual(error(new ProseError("config", text`c.json: unknown key`, { field: "levle" })), [
    "PROSE-ERROR: code=config field=levle c.json: unknown key",
  ]);
  assert.deepEqual(
    error(new EnvironmentError("CELLM_DIR", text`CELLM_DIR must be an absolute path`)),
    [
      "PROSE-ERROR: code=env field=CELLM_DIR CELLM_DIR must be an absolute path",
    ],
  );
  assert.deepEqual(error(new UsageError(text`--x needs a value`)), [
    "PROSE-ERROR: code=usage --x needs a value",
  ]);
  assert.deepEqual(error(new CtxkitError(1, text`odd`)), ["PROSE-ERROR: code=internal odd"]);
  assert.equal(
    proseErrorFormat.permission!("Requires net\x07"),
    'PROSE-ERROR: code=permission "Requires net\\a"',
  );
  assert.equal(
    proseErrorFormat.permission!('Requires read access to "/x"'),
    'PROSE-ERROR: code=permission Requires read access to "/x"',
  );
  assert.equal(proseErrorFormat.internal!("boom"), "PROSE-ERROR: code=internal boom");
  assert.deepEqual(
    [
      new ProseError("usage", text``),
      new ProseError("config", text``),
      new ProseError("db", text``),
      new ProseError("port-in-use", text``),
      new ProseError("token", text``),
    ]
      .map((e) => e.exitCode),
    [2, 2, 1, 1, 1],
  );
});

Deno.test("action lines: result, then reason and remaining when there are any", () => {
  assert.equal(actionLine("on", { result: "activated" }), "PROSE: action=on result=activated");
  assert.equal(
    actionLine("on", { result: "kept", reason: "existing-override" }),
    "PROSE: action=on result=kept reason=existing-override",
  );
  assert.equal(
    actionLine("consume", { result: "decremented", remaining: 2 }),
    "PROSE: action=consume result=decremented remaining=2",
  );
  assert.equal(
    actionLine("on", { result: "x y\x1b[0m" }),
    'PROSE: action=on result="x y\\x1b[0m"',
  );
});

Deno.test("status lines of reads and documents", () => {
  assert.equal(
    statusLine({ state: "absent", flag: null, reason: null, field: null }),
    "PROSE: state=absent level=- effective=off ttl=- expiresAt=- activatedAt=- source=-",
  );
  assert.equal(
    statusLine(doc({ state: "active", flag: flag({ expiresAt: NOW + 1000 }) })),
    `PROSE: state=active level=full effective=full ttl=turn:2 expiresAt=${
      new Date(NOW + 1000).toISOString()
    } activatedAt=${ISO} source=manual`,
  );
  assert.equal(
    statusLine(
      doc({ state: "expired", flag: flag({ ttl: { unit: "block", value: 0 }, expiresAt: NOW }) }),
    ),
    `PROSE: state=expired level=full effective=off ttl=block expiresAt=${ISO} activatedAt=${ISO} source=manual`,
  );
  assert.equal(
    statusLine(doc({ state: "invalid", reason: "schema", field: "level" })),
    "PROSE: state=invalid level=- effective=off ttl=- expiresAt=- activatedAt=- source=- reason=schema field=level",
  );
});

Deno.test("status sentences", () => {
  assert.equal(statusSentence(doc({})), "No prose override: default quantization applies.");
  assert.equal(
    statusSentence(doc({ state: "active", flag: flag({ ttl: { unit: "turn", value: 1 } }) })),
    "Prose override active: level full, 1 response left, no time limit.",
  );
  assert.equal(
    statusSentence(doc({
      state: "active",
      flag: flag({ level: "minimal", ttl: { unit: "session", value: 0 }, expiresAt: NOW + 1000 }),
    })),
    `Prose override active: level minimal, until the session ends, expires ${
      new Date(NOW + 1000).toISOString()
    }.`,
  );
  assert.match(
    statusSentence(doc({ state: "active", flag: flag({ level: "off" }) })),
    /^Prose override paused \(level off\): default quantization applies, 2 responses left/,
  );
  assert.equal(
    statusSentence(doc({ state: "expired", flag: flag({ expiresAt: NOW }) })),
    `Prose override expired at ${ISO}: default quantization applies.`,
  );
  assert.equal(
    statusSentence(doc({ state: "invalid", reason: "schema" })),
    "Prose flag is invalid (schema): default quantization applies; run `prose off` to remove it.",
  );
  assert.equal(
    statusSentence(doc({ state: "unsafe", reason: "symlink-file" })),
    "Prose flag path is unsafe (symlink-file): default quantization applies; check /r/prose/.active.",
  );
});

Deno.test("drift lines", () => {
  assert.equal(
    driftLine(doc({ drift: false, driftKeys: [] })),
    "PROSE: mirror drift=false driftKeys=-",
  );
  assert.equal(
    driftLine(doc({ drift: true, driftKeys: ["CELLM_PROSE_ACTIVE", "CELLM_PROSE_LEVEL"] })),
    "PROSE: mirror drift=true driftKeys=CELLM_PROSE_ACTIVE,CELLM_PROSE_LEVEL",
  );
  assert.equal(driftLine(doc({})), "PROSE: mirror drift=- driftKeys=-");
});

Deno.test("clockNow: CTXKIT_NOW_MS pins the clock; a malformed value is an environment error", () => {
  const saved = Deno.env.get("CTXKIT_NOW_MS");
  try {
    Deno.env.set("CTXKIT_NOW_MS", String(NOW));
    assert.equal(clockNow(), NOW);
    Deno.env.set("CTXKIT_NOW_MS", "soon");
    assert.throws(
      () => clockNow(),
      (e: unknown) =>
        e instanceof EnvironmentError && e.variable === "CTXKIT_NOW_MS" && e.exitCode === 2,
    );
    Deno.env.delete("CTXKIT_NOW_MS");
    assert.ok(Math.abs(clockNow() - Date.now()) < 60_000);
  } finally {
    if (saved === undefined) Deno.env.delete("CTXKIT_NOW_MS");
    else Deno.env.set("CTXKIT_NOW_MS", saved);
  }
});
