import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import * as z from "../_zod.ts";
import {
  backendCall,
  callStatus,
  callToggle,
  decodeJson,
  fallbackForStatus,
  rejectionExitCode,
} from "./backend.ts";
import { readCapped } from "../streams.ts";
import type { StatusDocument } from "./schema.ts";
import { requestMac, responseProof } from "./token.ts";
import { statusDocument } from "./status.ts";

const HealthBodySchema = z.strictObject({ ok: z.literal(true) });

Deno.test("exit codes and fallback reasons by status", () => {
  assert.equal(rejectionExitCode(403), 1);
  assert.equal(rejectionExitCode(409), 1);
  for (const s of [400, 413, 415]) assert.equal(rejectionExitCode(s), 2);
  assert.equal(fallbackForStatus(404), "not-found");
  assert.equal(fallbackForStatus(500), "server-error");
  assert.equal(fallbackForStatus(503), "server-error");
  assert.equal(fallbackForStatus(302), "bad-response");
  assert.equal(fallbackForStatus(405), "bad-response");
});

/** Serve `handler` on an ephemeral loopback port for the duration of `body`. */
async function withServer(
  handler: (req: Request) => Response | Promise<Response>,
  body: (url: string) => Promise<void>,
): Promise<void> {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  try {
    await body(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    await server.shutdown();
  }
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

Deno.test("backendCall: 200 + schema is ok; the request carries JSON and the method", async () => {
  const seen: string[] = [];
  await withServer(async (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("content-type")}`);
    if (req.method === "POST") seen.push(await req.text());
    return json(200, { ok: true });
  }, async (url) => {
    assert.deepEqual(
      await backendCall(url, { method: "GET", path: "/health" }, HealthBodySchema),
      { kind: "ok", status: 200, body: { ok: true } },
    );
    const posted = await backendCall(
      url,
      { method: "POST", path: "/api/prose/toggle", body: { action: "off" } },
      HealthBodySchema,
    );
    assert.equal(posted.kind, "ok");
  });
  assert.deepEqual(seen, [
    "GET /health null",
    "POST /api/prose/toggle application/json",
    '{"action":"off"}',
  ]);
});

Deno.test("backendCall: 404, 5xx, redirects and bad bodies fall back", async () => {
  const answers: Response[] = [];
  await withServer(() => answers.shift()!, async (url) => {
    const call = () => backendCall(url, { method: "GET", path: "/health" }, HealthBodySchema);
    answers.push(json(404, { ok: false }));
    assert.deepEqual(await call(), { kind: "fallback", reason: "not-found" });
    answers.push(json(502, { ok: false }));
    assert.deepEqual(await call(), { kind: "fallback", reason: "server-error" });
    answers.push(new Response(null, { status: 302, headers: { location: "http://10.0.0.5/" } }));
    assert.deepEqual(await call(), { kind: "fallback", reason: "bad-response" });
    answers.push(json(200, { ok: "yes" }));
    assert.deepEqual(await call(), { kind: "fallback", reason: "bad-response" });
    answers.push(new Response("{", { status: 200 }));
    assert.deepEqual(await call(), { kind: "fallback", reason: "bad-response" });
    answers.push(new Response("x".repeat(70000), { status: 200 }));
    assert.deepEqual(await call(), { kind: "fallback", reason: "bad-response" });
  });
});

Deno.test("backendCall: rejections keep the error body; unparsable ones stay rejections", async () => {
  const answers: Response[] = [];
  await withServer(() => answers.shift()!, async (url) => {
    const call = () =>
      backendCall(url, { method: "POST", path: "/x", body: {} }, z.strictObject({}));
    answers.push(json(409, { ok: false, error: "conflict", reason: "symlink-file", message: "m" }));
    assert.deepEqual(await call(), {
      kind: "rejected",
      status: 409,
      error: "conflict",
      reason: "symlink-file",
      message: "m",
    });
    answers.push(new Response("<html>", { status: 403 }));
    assert.deepEqual(await call(), {
      kind: "rejected",
      status: 403,
      error: "unknown",
      message: "HTTP 403",
    });
  });
});

Deno.test("backendCall: a closed port is a connection error", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  assert.deepEqual(
    await backendCall(`http://127.0.0.1:${port}`, { method: "GET", path: "/health" }, z.unknown()),
    { kind: "fallback", reason: "connection" },
  );
});

Deno.test("backendCall: a server that never answers times out", async () => {
  const sockets: Socket[] = [];
  const server: Server = createServer((s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  try {
    const started = performance.now();
    assert.deepEqual(
      await backendCall(
        `http://127.0.0.1:${port}`,
        { method: "GET", path: "/health", timeoutMs: 200 },
        z.unknown(),
      ),
      { kind: "fallback", reason: "timeout" },
    );
    assert.ok(performance.now() - started < 5000);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

Deno.test("readCapped: stops a stream past the cap, keeping the first cap bytes", async () => {
  const stream = (sizes: number[]) =>
    new ReadableStream<Uint8Array>({
      start(c) {
        for (const n of sizes) c.enqueue(new Uint8Array(n).fill(0x20));
        c.close();
      },
    });
  const over = await readCapped(stream([4000, 97]), 4096);
  assert.deepEqual([over.truncated, over.bytes.length], [true, 4096]);
  const ok = await readCapped(stream([4000, 96]), 4096);
  assert.deepEqual([ok.truncated, ok.bytes.length], [false, 4096]);
  assert.deepEqual(await readCapped(null, 4096), { bytes: new Uint8Array(), truncated: false });
});

Deno.test("decodeJson: strict UTF-8 then JSON", () => {
  const enc = new TextEncoder();
  assert.deepEqual(decodeJson(enc.encode('{"action":"off"}')), { value: { action: "off" } });
  assert.equal(decodeJson(enc.encode("{")), undefined);
  assert.equal(decodeJson(new Uint8Array([0x7b, 0xff, 0x7d])), undefined);
  assert.equal(decodeJson(new Uint8Array()), undefined);
});

// A conforming document whose strings carry escapes, as a hostile backend could send.
const HOSTILE: StatusDocument = {
  ...statusDocument(
    { state: "invalid", flag: null, reason: null, field: null, path: "/tmp/x/.active", raw: null },
    "backend",
    1,
    null,
  ),
  flagPath: "/tmp/\u001b[31mx/.active",
  reason: "schema\u0007",
  mirror: {
    CELLM_PROSE_ACTIVE: "\u001b]0;t\u0007true",
    CELLM_PROSE_LEVEL: null,
    CELLM_PROSE_EXPIRES_AT: null,
  },
};

Deno.test("callStatus and callToggle: the endpoints, the token proved (never sent), documents kept exact", async () => {
  const token = "ab".repeat(32);
  const seen: string[] = [];
  await withServer(async (req) => {
    const path = new URL(req.url).pathname;
    const auth = req.headers.get("authorization") ?? "-";
    seen.push(`${req.method} ${path} ${auth.split(" ")[0]}`);
    // The token's holder: checks the request's MAC, proves its answer.
    const m = /^Prose ([0-9a-f]{32}) ([0-9a-f]{64})$/.exec(auth);
    const proved = m !== null && m[2] === requestMac(token, m[1], req.method, path);
    assert.equal(auth.includes(token), false, "the token itself never travels");
    const body = new TextEncoder().encode(JSON.stringify(
      req.method === "GET"
        ? HOSTILE
        : { ok: true, action: "off", result: "cleared", status: HOSTILE, mirror: { ok: true } },
    ));
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (proved) headers["Prose-Proof"] = responseProof(token, m[1], 200, body);
    await req.body?.cancel();
    return new Response(body, { status: 200, headers });
  }, async (url) => {
    const status = await callStatus(url, token);
    assert.equal(status.kind, "ok");
    const toggle = await callToggle(url, { action: "off" }, token);
    assert.equal(toggle.kind, "ok");
    // The strings are the server's, unchanged: the CLI escapes them where it prints them.
    for (
      const doc of [status.kind === "ok" && status.body, toggle.kind === "ok" && toggle.body.status]
    ) {
      assert.ok(doc);
      assert.equal(doc.flagPath, HOSTILE.flagPath);
      assert.equal(doc.mirror?.CELLM_PROSE_ACTIVE, HOSTILE.mirror?.CELLM_PROSE_ACTIVE);
    }
    // Without the token nothing is proved; with another token the answer is not believed.
    assert.equal((await callToggle(url, { action: "off" })).kind, "ok");
    assert.deepEqual(await callStatus(url, "cd".repeat(32)), {
      kind: "fallback",
      reason: "unverified",
    });
  });
  assert.deepEqual(seen, [
    "GET /api/prose/status Prose",
    "POST /api/prose/toggle Prose",
    "POST /api/prose/toggle -",
    "GET /api/prose/status Prose",
  ]);
});

Deno.test("backendCall: with the token, an answer without the server's proof is unverified, whatever its status", async () => {
  for (const status of [200, 401, 409, 404, 500]) {
    await withServer(
      () => json(status, { ok: false, error: "refused", reason: "busy", message: "m" }),
      async (url) => {
        assert.deepEqual(await callToggle(url, { action: "off" }, "ab".repeat(32)), {
          kind: "fallback",
          reason: "unverified",
        });
      },
    );
  }
});

Deno.test("backendCall: 401 is a final rejection (rc 1), never a fallback", async () => {
  await withServer(
    () => json(401, { ok: false, error: "unauthorized", message: "unauthorized" }),
    async (url) => {
      assert.deepEqual(await callStatus(url), {
        kind: "rejected",
        status: 401,
        error: "unauthorized",
        message: "unauthorized",
      });
    },
  );
  assert.equal(rejectionExitCode(401), 1);
});
