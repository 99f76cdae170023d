import assert from "node:assert/strict";
import { decodeJson, readBodyCapped } from "./http_body.ts";
import {
  declaredTooLarge,
  errorReply,
  hostAllowed,
  isJsonContentType,
  originAllowed,
  route,
  toResponse,
} from "./server_http.ts";
import { MAX_BODY_BYTES, ToggleRequestSchema } from "./server_protocol.ts";
import { issueField } from "./schema.ts";

Deno.test("route: exact paths; 404 for unknown, 405 with Allow for the wrong method", () => {
  assert.deepEqual(route("GET", "/health"), { ok: true, path: "/health" });
  assert.deepEqual(route("POST", "/api/prose/toggle"), { ok: true, path: "/api/prose/toggle" });
  for (const path of ["/", "/health/", "/api/prose", "/API/prose/status", "/constructor"]) {
    const r = route("GET", path);
    assert.equal(r.ok, false);
    if (!r.ok) assert.equal(r.reply.status, 404);
  }
  const wrong = route("GET", "/api/prose/toggle");
  assert.equal(wrong.ok, false);
  if (!wrong.ok) {
    assert.equal(wrong.reply.status, 405);
    assert.deepEqual(wrong.reply.headers, { Allow: "POST" });
  }
  const head = route("HEAD", "/health");
  if (!head.ok) assert.deepEqual(head.reply.headers, { Allow: "GET" });
  else assert.fail("HEAD must be refused");
});

Deno.test("hostAllowed: only the three loopback names with the bound port", () => {
  for (const h of ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"]) {
    assert.equal(hostAllowed(h, 8080), true, h);
  }
  for (const h of [null, "127.0.0.1", "127.0.0.1:8081", "evil.example:8080", "127.0.0.2:8080"]) {
    assert.equal(hostAllowed(h, 8080), false, String(h));
  }
});

Deno.test("originAllowed: absent or loopback http(s) origins only", () => {
  for (const o of [null, "http://127.0.0.1:3000", "http://localhost", "https://[::1]:9"]) {
    assert.equal(originAllowed(o), true, String(o));
  }
  for (
    const o of [
      "null",
      "http://evil.example",
      "http://127.0.0.1.evil.example",
      "file://",
      "ftp://127.0.0.1",
      "http://127.0.0.1:3000/path",
      "http://u:p@localhost",
      "",
    ]
  ) {
    assert.equal(originAllowed(o), false, o);
  }
});

Deno.test("isJsonContentType and declaredTooLarge", () => {
  assert.equal(isJsonContentType("application/json"), true);
  assert.equal(isJsonContentType("Application/JSON; charset=UTF-8"), true);
  for (const ct of [null, "text/plain", "application/json; charset=latin1", "application/jsonx"]) {
    assert.equal(isJsonContentType(ct), false, String(ct));
  }
  assert.equal(declaredTooLarge(null), false);
  assert.equal(declaredTooLarge(String(MAX_BODY_BYTES)), false);
  assert.equal(declaredTooLarge(String(MAX_BODY_BYTES + 1)), true);
});

Deno.test("readBodyCapped: stops a streamed body past the cap", async () => {
  const stream = (sizes: number[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const n of sizes) c.enqueue(new Uint8Array(n).fill(0x20));
        c.close();
      },
    });
  assert.equal(await readBodyCapped(stream([4000, 97])), "too-large");
  const ok = await readBodyCapped(stream([4000, 96]));
  assert.ok(ok instanceof Uint8Array && ok.length === 4096);
  assert.deepEqual(await readBodyCapped(null), new Uint8Array());
});

Deno.test("decodeJson: strict UTF-8 then JSON", () => {
  const enc = new TextEncoder();
  assert.deepEqual(decodeJson(enc.encode('{"action":"off"}')), { value: { action: "off" } });
  assert.equal(decodeJson(enc.encode("{")), undefined);
  assert.equal(decodeJson(new Uint8Array([0x7b, 0xff, 0x7d])), undefined);
  assert.equal(decodeJson(new Uint8Array()), undefined);
});

Deno.test("toResponse: JSON, no-store, nosniff, no CORS; error bodies in contract order", async () => {
  const res = toResponse(errorReply(400, "invalid_request", "bad level", { field: "level" }));
  assert.equal(res.status, 400);
  assert.equal(res.headers.get("content-type"), "application/json; charset=utf-8");
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  assert.equal(
    await res.text(),
    '{"ok":false,"error":"invalid_request","field":"level","message":"bad level"}\n',
  );
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
