import assert from "node:assert/strict";
import { type HttpRequest, type HttpResponse, serveHttp } from "./http.ts";
import { parseHead } from "./http_wire.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("parseHead: origin-form HTTP/1.x with fields by lowercase name", () => {
  const head = parseHead(enc("POST /api/x?y=1 HTTP/1.1\r\nHost: a:1\r\nX-A: 1\r\nx-a:  2 "));
  assert.deepEqual(head, {
    method: "POST",
    path: "/api/x",
    minor: 1,
    headers: new Map([["host", "a:1"], ["x-a", "1, 2"]]),
  });
  assert.equal(parseHead(enc("GET / HTTP/1.0")).minor, 0);
});

Deno.test("parseHead: anything else is a 400 refusal", () => {
  for (
    const bad of [
      "GET / HTTP/1.1\nHost: a",
      "GET / HTTP/2.0",
      "GET http://a/ HTTP/1.1",
      "GET  / HTTP/1.1",
      "GET / HTTP/1.1\r\n folded",
      "GET / HTTP/1.1\r\nBad Name: x",
      "GET / HTTP/1.1\r\nX: a\x01b",
      "GET / HTTP/1.1\r\nHost: a\r\nHost: b",
      "GET / HTTP/1.1\r\nContent-Length: 1\r\ncontent-length: 1",
    ]
  ) {
    assert.throws(
      () => parseHead(enc(bad)),
      (e: unknown) => (e as { status?: number }).status === 400,
      bad,
    );
  }
});

/** A server on an ephemeral port that echoes what it saw; stopped after `body`. */
async function withServer(
  limits: Parameters<typeof serveHttp>[0]["limits"],
  body: (port: number, seen: HttpRequest[], server: ReturnType<typeof serveHttp>) => Promise<void>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: HttpRequest[] = [];
  const server = serveHttp({
    listener,
    handler: (req): HttpResponse => {
      seen.push(req);
      return { status: 200, headers: { "X-Path": req.path }, body: enc(`${req.body.length}`) };
    },
    protocolError: (status, error) => ({ status, headers: {}, body: enc(error) }),
    limits,
  });
  try {
    await body((listener.addr as Deno.NetAddr).port, seen, server);
  } finally {
    await server.shutdown();
  }
}

/** Read until the peer closes (or `cap` ms pass); the text received. */
async function readAll(conn: Deno.Conn, cap = 30_000): Promise<string> {
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(4096);
  const timer = setTimeout(() => conn.close(), cap);
  try {
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
  } finally {
    clearTimeout(timer);
  }
  return chunks.map(dec).join("");
}

Deno.test("serveHttp: keep-alive, pipelining, chunked bodies, HEAD without a body", async () => {
  await withServer({}, async (port, seen) => {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(enc(
      "GET /a HTTP/1.1\r\nHost: x\r\n\r\n" +
        "POST /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n" +
        "HEAD /c HTTP/1.1\r\nConnection: close\r\n\r\n",
    ));
    const text = await readAll(conn);
    conn.close();
    const answers = text.split("HTTP/1.1 200 OK\r\n").slice(1);
    assert.equal(answers.length, 3, text);
    assert.match(
      answers[0],
      /X-Path: \/a\r\nContent-Length: 1\r\nConnection: keep-alive\r\n\r\n0$/,
    );
    assert.match(answers[1], /\r\n\r\n5$/);
    assert.match(answers[2], /Content-Length: 1\r\nConnection: close\r\n\r\n$/);
    assert.deepEqual(seen.map((r) => [r.method, r.path, dec(r.body)]), [
      ["GET", "/a", ""],
      ["POST", "/b", "abcde"],
      ["HEAD", "/c", ""],
    ]);
  });
});

Deno.test("serveHttp: a body over the cap is not read, flagged, and the connection closes", async () => {
  await withServer({ maxBodyBytes: 8 }, async (port, seen) => {
    for (
      const req of [
        "POST / HTTP/1.1\r\nContent-Length: 9\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\naaaaa\r\n5\r\naaaaa\r\n",
      ]
    ) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(enc(req));
      const text = await readAll(conn);
      conn.close();
      assert.match(text, /Connection: close\r\n\r\n0$/);
      assert.equal(seen.at(-1)?.bodyTooLarge, true);
    }
  });
});

Deno.test("serveHttp: malformed framing and oversized heads get protocol errors", async () => {
  await withServer({ maxHeadBytes: 64 }, async (port) => {
    const cases: [string, string][] = [
      ["POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", "400"],
      ["POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", "501"],
      ["POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "400"],
      [`GET / HTTP/1.1\r\nX: ${"a".repeat(100)}\r\n\r\n`, "431"],
      ["GARBAGE\r\n\r\n", "400"],
    ];
    for (const [req, status] of cases) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      await conn.write(enc(req)).catch(() => 0);
      const text = await readAll(conn);
      conn.close();
      assert.match(text, new RegExp(`^HTTP/1.1 ${status} `), req);
    }
  });
});

Deno.test("serveHttp: half-sent and idle connections are closed at their deadlines", async () => {
  await withServer({ headerTimeoutMs: 200, idleTimeoutMs: 200 }, async (port, seen) => {
    const half = await Deno.connect({ hostname: "127.0.0.1", port });
    await half.write(enc("GET /slow"));
    assert.equal(await readAll(half), "", "closed without an answer");
    half.close();
    const idle = await Deno.connect({ hostname: "127.0.0.1", port });
    await idle.write(enc("GET /once HTTP/1.1\r\n\r\n"));
    assert.match(await readAll(idle), /^HTTP\/1.1 200 OK\r\n/);
    idle.close();
    assert.deepEqual(seen.map((r) => r.path), ["/once"]);
  });
});

Deno.test("serveHttp: past the cap, a newcomer takes the place of the longest-idle connection", async () => {
  await withServer({ maxConnections: 2 }, async (port, _seen, server) => {
    const first = await Deno.connect({ hostname: "127.0.0.1", port });
    await first.write(enc("GET /a"));
    const second = await Deno.connect({ hostname: "127.0.0.1", port });
    await second.write(enc("GET /b"));
    const third = await Deno.connect({ hostname: "127.0.0.1", port });
    await third.write(enc("GET /c HTTP/1.1\r\nConnection: close\r\n\r\n"));
    assert.match(await readAll(third), /^HTTP\/1.1 200 OK/);
    assert.equal(await readAll(first), "", "the oldest half-sent connection was closed");
    assert.ok(server.connections <= 2);
    for (const c of [first, second, third]) c.close();
  });
});

/** Wait until `server` holds `n` connections (a condition; the cap only guards against a hang). */
async function connectionsOpen(server: { readonly connections: number }, n: number) {
  for (const deadline = Date.now() + 30_000; server.connections < n;) {
    if (Date.now() > deadline) throw new Error("connections never opened");
    await new Promise((r) => setTimeout(r, 5));
  }
}

Deno.test("serveHttp: silent connections give their place up oldest first, never before their grace, and a queued request is read (issue 30.2)", async () => {
  await withServer({ maxSilent: 2, silentGraceMs: 300 }, async (port, seen, server) => {
    const opened = Date.now();
    const first = await Deno.connect({ hostname: "127.0.0.1", port });
    const second = await Deno.connect({ hostname: "127.0.0.1", port });
    await connectionsOpen(server, 2);
    // A request already in its socket when it waits in the kernel's queue: answered.
    const real = await Deno.connect({ hostname: "127.0.0.1", port });
    await real.write(enc("GET /r HTTP/1.1\r\nConnection: close\r\n\r\n"));
    assert.match(await readAll(real), /^HTTP\/1.1 200 OK/);
    // The oldest silent connection made room, and only once it had been open for its grace.
    assert.equal(await readAll(first), "", "the oldest silent connection was closed");
    assert.ok(Date.now() - opened >= 300, "a silent connection lost its place before its grace");
    assert.deepEqual(seen.map((r) => r.path), ["/r"]);
    for (const c of [first, second, real]) c.close();
  });
});

Deno.test("serveHttp: an untrusted request never gets its body; untrusted connections lose their place first (issue 23.4)", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const seen: HttpRequest[] = [];
  const server = serveHttp({
    listener,
    handler: (req): HttpResponse => {
      seen.push(req);
      return { status: 200, headers: {}, body: enc(`${req.body.length}`) };
    },
    protocolError: (status, error) => ({ status, headers: {}, body: enc(error) }),
    admit: (head) =>
      head.path === "/refuse"
        ? { trusted: false, response: { status: 401, headers: {}, body: enc("no") } }
        : { trusted: head.headers.get("x-trust") === "1" },
    limits: { maxConnections: 2 },
  });
  const port = (listener.addr as Deno.NetAddr).port;
  try {
    // Refused from the head: answered at once, the announced body never awaited.
    const refused = await Deno.connect({ hostname: "127.0.0.1", port });
    await refused.write(enc("POST /refuse HTTP/1.1\r\nContent-Length: 100\r\n\r\n"));
    assert.match(await readAll(refused), /^HTTP\/1.1 401 .*Connection: close\r\n\r\nno$/s);
    refused.close();
    // Admitted but untrusted: answered without its body, then closed.
    const open = await Deno.connect({ hostname: "127.0.0.1", port });
    await open.write(enc("GET /health HTTP/1.1\r\nContent-Length: 100\r\n\r\nxx"));
    assert.match(await readAll(open), /Connection: close\r\n\r\n0$/);
    open.close();
    // A trusted request busy with its body, and an untrusted half-sent head: a newcomer takes the
    // untrusted one's place, never the trusted one's.
    const trusted = await Deno.connect({ hostname: "127.0.0.1", port });
    await trusted.write(
      enc("POST /t HTTP/1.1\r\nX-Trust: 1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"),
    );
    // 100 Continue: the server has judged the head and waits for the body.
    const buf = new Uint8Array(4096);
    const got = await trusted.read(buf);
    assert.match(dec(buf.subarray(0, got ?? 0)), /^HTTP\/1.1 100 Continue\r\n\r\n$/);
    await trusted.write(enc("ab"));
    const half = await Deno.connect({ hostname: "127.0.0.1", port });
    await half.write(enc("GET /hal"));
    await connectionsOpen(server, 2);
    const newcomer = await Deno.connect({ hostname: "127.0.0.1", port });
    await newcomer.write(enc("GET /n HTTP/1.1\r\nConnection: close\r\n\r\n"));
    assert.match(await readAll(newcomer), /^HTTP\/1.1 200 OK/);
    assert.equal(await readAll(half), "", "the untrusted connection was closed");
    await trusted.write(enc("cd"));
    const n = await trusted.read(buf);
    assert.match(dec(buf.subarray(0, n ?? 0)), /\r\n\r\n4$/);
    for (const c of [trusted, half, newcomer]) c.close();
    assert.deepEqual(seen.map((r) => [r.path, r.body.length, r.admitted]), [
      ["/health", 0, true],
      ["/n", 0, true],
      ["/t", 4, true],
    ]);
  } finally {
    await server.shutdown();
  }
});
