/**
 * `prose serve` under the second attack (issue 23): the server never blocks its event loop while a
 * toggle waits for the flag's lock, an unbreakable lock never freezes it, connections that have not
 * authenticated never hold a slot a real client needs, the CLI trusts only the server that wrote
 * `serve.json`, and a slow mirror never turns into a second, local transition
 * (`references/prose.md#concurrency`, `#limits`, `#authentication`, `#cli-delegation`,
 * `#threat-model`). Every wait is on a condition, with a generous cap.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lines, makeTempDir, removeDir } from "./_helpers.ts";
import { spawnServe } from "./_prose_fixtures.ts";
import { startProseServer } from "../lib/prose/server.ts";

/** A fresh `CELLM_DIR` with an owner-only `prose/` directory. */
function freshRoot(): { root: string; dir: string } {
  const root = makeTempDir("prose-hard-");
  const dir = join(root, "prose");
  mkdirSync(dir, { mode: 0o700 });
  return { root, dir };
}

/** The bearer token of the server that wrote `D/serve.json`. */
function tokenOf(dir: string): string {
  return JSON.parse(readFileSync(join(dir, "serve.json"), "utf8")).token;
}

/** A toggle with the server's token. */
function toggle(url: string, token: string, body: unknown): Promise<Response> {
  return fetch(`${url}/api/prose/toggle`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** Hold `D/.lock` as a live holder (this process), its file refreshed so it never looks stale. */
function holdLock(dir: string): () => void {
  const lock = join(dir, ".lock");
  writeFileSync(lock, `${Deno.pid} 0123456789abcdef\n`, { mode: 0o600 });
  let n = 0;
  const fresh = setInterval(() => {
    const t = new Date(Date.now() + (n++ % 2) * 1000);
    Deno.utimeSync(lock, t, t);
  }, 100);
  return () => {
    clearInterval(fresh);
    rmSync(lock, { force: true });
  };
}

Deno.test("a toggle waiting for the lock does not stall /health or status; it goes through once the lock is free (issue 23.3)", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  const release = holdLock(dir);
  try {
    const token = tokenOf(dir);
    const order: string[] = [];
    const waiting = toggle(child.url, token, { action: "on" }).then(async (res) => {
      order.push("toggle");
      return { status: res.status, body: await res.json() };
    });
    // Readers never wait: both answer while the toggle is still waiting for the lock.
    const health = await fetch(`${child.url}/health`);
    assert.deepEqual(await health.json(), { ok: true });
    const status = await fetch(`${child.url}/api/prose/status`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    assert.equal((await status.json()).state, "absent");
    order.push("readers");
    release();
    const done = await waiting;
    assert.deepEqual(order, ["readers", "toggle"]);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.result, "activated");
    assert.equal(existsSync(join(dir, ".active")), true);
  } finally {
    release();
    await child.stop("SIGTERM");
    removeDir(root);
  }
});

Deno.test("an unbreakable lock (a directory at D/.lock): the toggle ends 409 busy and SIGTERM still stops serve (issue 23.2)", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  mkdirSync(join(dir, ".lock", "left-behind"), { recursive: true });
  const cap = setTimeout(() => Deno.kill(child.pid, "SIGKILL"), 60_000);
  try {
    const token = tokenOf(dir);
    const res = await toggle(child.url, token, { action: "on" });
    const body = await res.json();
    assert.equal(res.status, 409, JSON.stringify(body));
    assert.deepEqual([body.error, body.reason], ["refused", "busy"]);
    // Another toggle waits, and a SIGTERM meanwhile still ends the server cleanly.
    const pending = toggle(child.url, token, { action: "off" }).then((r) => r.status, () => 0);
    const health = await fetch(`${child.url}/health`);
    assert.equal(health.status, 200);
    const done = await child.stop("SIGTERM");
    assert.equal(done.code, 0, done.stderr);
    assert.equal(lines(done.stdout).at(-1), "PROSE: serve stopped signal=SIGTERM");
    assert.equal(lines(done.stderr).at(-1), "✅ EXIT:0");
    assert.ok([409, 0].includes(await pending));
    assert.equal(existsSync(join(dir, "serve.json")), false);
  } finally {
    clearTimeout(cap);
    removeDir(root);
  }
});

// --- connections that have not authenticated (issue 23.4) ---------------------------------------

/** One request on a fresh connection (`Connection: close`); the whole answer, or "" when closed. */
async function rawRequest(
  port: number,
  request: string,
  onFirstBytes: () => void = () => {},
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const timer = setTimeout(() => conn.close(), 20_000);
  try {
    await conn.write(new TextEncoder().encode(request));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(8192);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      if (chunks.length === 0) onFirstBytes();
      chunks.push(buf.slice(0, n));
    }
    return chunks.map((c) => new TextDecoder().decode(c)).join("");
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

Deno.test("64 unauthenticated connections with a full head and a body that never finishes hold no slot a real client needs (issue 23.4)", async () => {
  const { root, dir } = freshRoot();
  const server = await startProseServer({
    port: 0,
    dbPath: join(dir, "prose.db"),
    opts: { root },
  });
  const port = server.port;
  const host = `Host: 127.0.0.1:${port}\r\n`;
  // `Expect: 100-continue` makes the server say when it has the head and waits for the body.
  const expect = "Expect: 100-continue\r\n";
  const heads = [
    // A toggle without the token, and /health (open to all) with a body: neither is ever finished.
    `POST /api/prose/toggle HTTP/1.1\r\n${host}${expect}Content-Type: application/json\r\nContent-Length: 4000\r\n\r\n`,
    `GET /health HTTP/1.1\r\n${host}${expect}Content-Length: 4000\r\n\r\n`,
    `POST /api/prose/toggle HTTP/1.1\r\n${host}${expect}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  ];
  let attacking = true;
  let attempts = 0;
  const engaged = new Set<number>();
  // 64 attackers, each reconnecting as soon as its connection is closed.
  const attackers = Array.from({ length: 64 }, async (_, i) => {
    while (attacking) {
      attempts++;
      await rawRequest(port, heads[i % heads.length], () => engaged.add(i)).catch(() => "");
    }
  });
  // Every attacker has had its head read by the server (an answer, or 100 Continue).
  for (const deadline = Date.now() + 30_000; engaged.size < 64;) {
    if (Date.now() > deadline) throw new Error("the attackers never got through");
    await new Promise((r) => setTimeout(r, 10));
  }
  try {
    const answered: string[] = [];
    for (let i = 0; i < 20; i++) {
      const text = await rawRequest(
        port,
        `GET /api/prose/status HTTP/1.1\r\n${host}Authorization: Bearer ${server.token}\r\nConnection: close\r\n\r\n`,
      );
      answered.push(text.split("\r\n")[0]);
    }
    assert.deepEqual(answered, Array(20).fill("HTTP/1.1 200 OK"));
    assert.ok(attempts >= 64);
    assert.ok(server.connections <= 64);
  } finally {
    attacking = false;
    await server.shutdown();
    await Promise.all(attackers);
    removeDir(root);
  }
});
