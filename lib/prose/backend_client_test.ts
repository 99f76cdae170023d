import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { z } from "zod";
import {
  backendCall,
  delegateStatus,
  delegateSync,
  delegateToggle,
  FALLBACK_WARNING,
  fallbackForStatus,
  rejectionExitCode,
  sanitizeStatusDocument,
} from "./backend_client.ts";
import { HealthBodySchema } from "./server_protocol.ts";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeDir } from "../../tests/_helpers.ts";
import { startProseServer } from "./serve.ts";
import { readProseFlag } from "./flag_io.ts";
import type { StatusDocument } from "./status.ts";

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

// --- delegation against a real backend -------------------------------------------------------

async function withBackend(body: (url: string, root: string) => Promise<void>): Promise<void> {
  const root = makeTempDir("prose-delegate-");
  mkdirSync(join(root, "prose"), { mode: 0o700 });
  const server = await startProseServer({
    port: 0,
    dbPath: join(root, "prose", "prose.db"),
    opts: { root },
  });
  try {
    await body(server.url, root);
  } finally {
    await server.shutdown();
    removeDir(root);
  }
}

Deno.test("delegateToggle: via line, action line and status line from the backend", async () => {
  await withBackend(async (url, root) => {
    const d = await delegateToggle(url, "on", {
      action: "on",
      level: "minimal",
      ttl: { unit: "turn", value: 2 },
    });
    assert.equal(d.kind, "done");
    if (d.kind !== "done") return;
    assert.equal(d.rc, 0);
    assert.deepEqual(d.err, []);
    assert.equal(d.out[0], `PROSE: via=backend url=${url}`);
    assert.equal(d.out[1], "PROSE: action=on result=activated");
    assert.match(
      d.out[2],
      /^PROSE: state=active level=minimal effective=minimal ttl=turn:2 expiresAt=never activatedAt=\S+ source=manual$/,
    );
    assert.equal(readProseFlag({ root }).flag?.level, "minimal");
    const kept = await delegateToggle(url, "on", { action: "on", source: "config" });
    assert.equal(kept.out[1], "PROSE: action=on result=kept reason=existing-override");
  });
});

Deno.test("delegateToggle: 409 is reported (rc 1), 400 is rc 2, never retried locally", async () => {
  await withBackend(async (url, root) => {
    const target = join(root, "elsewhere");
    writeFileSync(target, "x");
    symlinkSync(target, join(root, "prose", ".active"));
    const refused = await delegateToggle(url, "off", { action: "off" });
    assert.deepEqual(refused.kind === "done" && refused.rc, 1);
    assert.deepEqual(refused.out, [
      `PROSE: via=backend url=${url}`,
      "PROSE: action=off result=refused reason=symlink-file",
    ]);
    assert.match(refused.err[0], /^PROSE-ERROR: code=symlink-file \S/);
    // A body the CLI would never build, to see a 400 come back as rc 2.
    const bad = await delegateToggle(url, "level", { action: "level", level: "max" } as never);
    assert.equal(bad.kind === "done" && bad.rc, 2);
    assert.match(bad.err[0], /^PROSE-ERROR: code=invalid_request field=level backend rejected/);
  });
});

Deno.test("delegateStatus: human lines with drift; --json keeps stdout one document", async () => {
  await withBackend(async (url) => {
    const human = await delegateStatus(url, false);
    assert.equal(human.kind === "done" && human.rc, 0);
    assert.deepEqual(human.out, [
      `PROSE: via=backend url=${url}`,
      "PROSE: state=absent level=- effective=off ttl=- expiresAt=- activatedAt=- source=-",
      "PROSE: mirror drift=false driftKeys=-",
      "No prose override: default quantization applies.",
    ]);
    await delegateToggle(url, "on", { action: "on" });
    const json = await delegateStatus(url, true);
    assert.equal(json.out.length, 1);
    const doc = JSON.parse(json.out[0]);
    assert.equal(doc.via, "backend");
    assert.equal(doc.state, "active");
    assert.equal(doc.drift, false);
    assert.deepEqual(json.err, [`PROSE: via=backend url=${url}`]);
  });
});

Deno.test("delegation falls back with the via=filesystem line and the warning", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const url = `http://127.0.0.1:${(probe.addr as Deno.NetAddr).port}`;
  probe.close();
  const d = await delegateToggle(url, "on", { action: "on" });
  assert.deepEqual(d, {
    kind: "fallback",
    out: [`PROSE: via=filesystem backend=unreachable url=${url} reason=connection`],
    err: [FALLBACK_WARNING],
  });
  const j = await delegateStatus(url, true);
  assert.deepEqual(j.out, []);
  assert.equal(j.err.length, 2);
  // A server that is not ours (404 everywhere) is not-found.
  await withServer(() => json(404, {}), async (other) => {
    const s = await delegateStatus(other, false);
    assert.equal(s.kind, "fallback");
    assert.match(s.out[0], / reason=not-found$/);
  });
});

Deno.test("delegateSync: rc 1 without a backend or when it is unreachable; synced otherwise", async () => {
  const none = await delegateSync(null);
  assert.equal(none.rc, 1);
  assert.deepEqual(none.out, ["PROSE: action=sync result=refused reason=no-backend"]);
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const closed = `http://127.0.0.1:${(probe.addr as Deno.NetAddr).port}`;
  probe.close();
  const down = await delegateSync(closed);
  assert.equal(down.rc, 1);
  assert.match(down.out[0], /backend=unreachable .*reason=connection$/);
  await withBackend(async (url) => {
    const ok = await delegateSync(url);
    assert.equal(ok.rc, 0);
    assert.equal(ok.out[1], "PROSE: action=sync result=synced");
  });
});

Deno.test("sanitizeStatusDocument strips escapes from every network string", () => {
  const doc: StatusDocument = {
    schema: "ctxkit.prose.status/1",
    via: "backend",
    now: 1,
    flagPath: "/tmp/\u001b[31mx/.active",
    state: "invalid",
    reason: "schema\u0007",
    field: "(extra-key)",
    effectiveLevel: "off",
    flag: null,
    mirror: {
      CELLM_PROSE_ACTIVE: "\u001b]0;title\u0007true",
      CELLM_PROSE_LEVEL: null,
      CELLM_PROSE_EXPIRES_AT: "null",
    },
    expected: {
      CELLM_PROSE_ACTIVE: "false",
      CELLM_PROSE_LEVEL: "off",
      CELLM_PROSE_EXPIRES_AT: "null",
    },
    drift: true,
    driftKeys: ["CELLM_PROSE_ACTIVE"],
  };
  const clean = sanitizeStatusDocument(doc);
  assert.equal(clean.flagPath, "/tmp/x/.active");
  assert.equal(clean.reason, "schema");
  assert.equal(clean.mirror?.CELLM_PROSE_ACTIVE, "true");
  assert.ok(!JSON.stringify(clean).includes("\u001b"));
});
