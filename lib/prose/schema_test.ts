import assert from "node:assert/strict";
import {
  ErrorBodySchema,
  HookInputSchema,
  isExpired,
  issueField,
  type ProseFlag,
  ProseFlagSchema,
  serializeFlag,
  sourceRank,
  ToggleRequestSchema,
  WorkerJsonSchema,
} from "./schema.ts";

const FLAG: ProseFlag = {
  level: "full",
  ttl: { unit: "turn", value: 2 },
  expiresAt: 10,
  activatedAt: 5,
  source: "manual",
};

Deno.test("serializeFlag: compact JSON in schema order plus a newline, whatever the key order", () => {
  const shuffled = {
    source: "manual",
    activatedAt: 5,
    expiresAt: 10,
    ttl: { value: 2, unit: "turn" },
    level: "full",
  };
  assert.equal(
    serializeFlag(shuffled as ProseFlag),
    '{"level":"full","ttl":{"unit":"turn","value":2},"expiresAt":10,"activatedAt":5,"source":"manual"}\n',
  );
  assert.equal(ProseFlagSchema.safeParse(JSON.parse(serializeFlag(FLAG))).success, true);
});

Deno.test("issueField: dotted known paths, (extra-key) for unknown keys, (root) for a non-object", () => {
  const field = (v: unknown) => {
    const r = ProseFlagSchema.safeParse(v);
    return r.success ? "ok" : issueField(r.error.issues[0]);
  };
  assert.equal(field(FLAG), "ok");
  assert.equal(field({ ...FLAG, ttl: { unit: "turn", value: 2, x: 1 } }), "ttl.(extra-key)");
  assert.equal(field({ ...FLAG, secret: 1 }), "(extra-key)");
  assert.equal(field({ ...FLAG, ttl: { unit: "block", value: 2 } }), "ttl.value");
  assert.equal(field("flag"), "(root)");
});

Deno.test("precedence and expiry", () => {
  assert.ok(sourceRank("manual") > sourceRank("config"));
  assert.ok(sourceRank("config") > sourceRank("auto-clarity"));
  assert.equal(isExpired(FLAG, 9), false);
  assert.equal(isExpired(FLAG, 10), true);
  assert.equal(isExpired({ ...FLAG, expiresAt: null }, 8e15), false);
});

Deno.test("ToggleRequestSchema: strict bodies and the field each failure names", () => {
  const field = (v: unknown) => {
    const r = ToggleRequestSchema.safeParse(v);
    return r.success ? "ok" : issueField(r.error.issues[0]);
  };
  assert.equal(field({ action: "on" }), "ok");
  assert.equal(
    field({
      action: "on",
      level: "minimal",
      ttl: { unit: "turn", value: 3 },
      for: "1h",
      source: "config",
    }),
    "ok",
  );
  assert.equal(field({ action: "off" }), "ok");
  assert.equal(field({ action: "sync" }), "ok");
  assert.equal(field({ action: "level", level: "off" }), "ok");
  assert.equal(field({ action: "level", level: "max" }), "level");
  assert.equal(field({ action: "on", level: "off" }), "level");
  assert.equal(field({ action: "off", extra: 1 }), "(extra-key)");
  assert.equal(field({ action: "on", ttl: { unit: "turn", x: 1 } }), "ttl.(extra-key)");
  assert.equal(field({ action: "on", ttl: { unit: "turn", value: 1.5 } }), "ttl.value");
  assert.equal(field({ action: "on", source: "root" }), "source");
  assert.equal(field({ action: "explode" }), "action");
  assert.equal(field([]), "(root)");
});

Deno.test("documents of other programs: only the fields prose needs", () => {
  assert.equal(HookInputSchema.safeParse({ session_id: "x", prompt: "p" }).success, true);
  assert.equal(HookInputSchema.safeParse({ text: "p" }).success, false);
  assert.equal(WorkerJsonSchema.safeParse({ port: 4000, pid: 1 }).success, true);
  assert.equal(WorkerJsonSchema.safeParse({ port: 0 }).success, false);
  assert.equal(
    ErrorBodySchema.safeParse({ ok: false, error: "x", message: "m", extra: 1 }).success,
    false,
  );
});
