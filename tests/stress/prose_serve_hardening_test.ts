/**
 * `prose serve` under the second attack (issue 23): the server never blocks its event loop while a
 * toggle waits for the flag's lock, an unbreakable lock never freezes it, connections that have not
 * authenticated never hold a slot a real client needs, the CLI trusts only the server that wrote
 * `serve.json`, and a slow mirror never turns into a second, local transition
 * (`references/prose.md#concurrency`, `#limits`, `#authentication`, `#cli-delegation`,
 * `#threat-model`). Every wait is on a condition, with a generous cap.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  denoAsUser,
  lines,
  makeSharedTempDir,
  makeTempDir,
  removeDir,
  runTool,
  runToolAsync,
} from "../_helpers.ts";
import { prose, spawnServe, startAsUser, type UserProcess } from "../_prose_fixtures.ts";
import { startProseServer } from "../../lib/prose/server.ts";

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

// --- the CLI trusts only the server that wrote serve.json (issue 23.6) ----------------------------

/** A status document and a toggle answer that claim what the flag file does not say. */
function forgedAnswers(root: string): { status: unknown; toggle: unknown } {
  const real = JSON.parse(
    runTool("prose", ["status", "--json", "--local"], { env: { CELLM_DIR: root } }).stdout,
  );
  const flag = { level: "full", ttl: { unit: "explicit", value: 0 }, expiresAt: null };
  const status = {
    ...real,
    via: "backend",
    state: "active",
    reason: null,
    field: null,
    effectiveLevel: "full",
    flag: { ...flag, activatedAt: 1_800_000_000_000, source: "manual" },
    mirror: null,
    drift: true,
    driftKeys: [],
  };
  const absent = { ...real, via: "backend", state: "absent", effectiveLevel: "off", flag: null };
  const toggle = {
    ok: true,
    action: "off",
    result: "cleared",
    status: { ...absent, mirror: null, drift: true, driftKeys: [] },
    mirror: { ok: true },
  };
  return { status, toggle };
}

/** The impostor: answers every request with the forged documents and logs each Authorization. */
const IMPOSTOR = `
const [port, answers, log] = Deno.args;
const forged = JSON.parse(Deno.readTextFileSync(answers));
for (let i = 0; ; i++) {
  try {
    Deno.serve({ hostname: "127.0.0.1", port: Number(port), onListen: () => console.log("listening") }, (req) => {
      Deno.writeTextFileSync(log, (req.headers.get("authorization") ?? "-") + "\\n", { append: true });
      const path = new URL(req.url).pathname;
      return Response.json(path === "/api/prose/status" ? forged.status : forged.toggle);
    });
    break;
  } catch (e) {
    if (i > 200) throw e;
    await new Promise((r) => setTimeout(r, 50));
  }
}
`;

/** Check what the CLI printed against the flag file, and that the impostor never saw `token`. */
async function assertNotFooled(root: string, url: string, log: string, token: string | null) {
  const env = { CELLM_DIR: root, CELLM_WORKER_URL: url };
  assert.equal(prose(root, ["on", "explicit", "--level", "minimal"]).code, 0);
  const status = await runToolAsync("prose", ["status", "--json"], { env });
  const doc = JSON.parse(status.stdout);
  assert.equal(
    doc.effectiveLevel,
    "minimal",
    `a forged effectiveLevel was handed out: ${status.stderr}`,
  );
  const off = await runToolAsync("prose", ["off"], { env });
  const flagLeft = existsSync(join(root, "prose", ".active"));
  if (off.stdout.includes("result=cleared")) {
    assert.equal(flagLeft, false, `\`cleared\` printed while the flag stays active: ${off.stdout}`);
  }
  assert.equal(flagLeft, false, `off did not clear the flag: ${off.stdout}${off.stderr}`);
  assert.match(
    off.stdout,
    /^PROSE: via=filesystem backend=unreachable url=\S+ reason=unverified$/m,
  );
  assert.match(off.stdout, /^PROSE: action=off result=cleared$/m);
  const seen = existsSync(log) ? readFileSync(log, "utf8") : "";
  assert.ok(seen.length > 0, "the impostor was never asked: the test proved nothing");
  if (token !== null) {
    assert.equal(seen.includes(token), false, "the token was sent to the impostor");
  }
}

Deno.test("another uid on the recorded port after kill -9 of the real server: no false `cleared`, no forged level, no token (issue 23.6)", async () => {
  const shared = makeSharedTempDir("prose-impostor-");
  const root = join(shared, "cellm");
  const dir = join(root, "prose");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const script = join(shared, "impostor.ts");
  writeFileSync(script, IMPOSTOR);
  const answers = join(shared, "answers.json");
  writeFileSync(answers, JSON.stringify(forgedAnswers(root)));
  const log = join(shared, "seen.log");
  writeFileSync(log, "");
  chmodSync(log, 0o666);
  const run = denoAsUser(["run", "-A", script]);
  if (run === undefined) return;
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  const port = new URL(child.url).port;
  const token = tokenOf(dir);
  await child.stop("SIGKILL");
  assert.equal(existsSync(join(dir, "serve.json")), true, "a killed server leaves its record");
  let impostor: UserProcess | undefined;
  try {
    impostor = await startAsUser(run, [port, answers, log], /listening/);
    await assertNotFooled(root, child.url, log, token);
  } finally {
    await impostor?.stop();
    removeDir(shared);
  }
});

Deno.test("with no serve.json, whatever answers on the backend port is not believed (issue 23.6)", async () => {
  const { root, dir } = freshRoot();
  const forged = forgedAnswers(root);
  const log = join(dir, "..", "seen.log");
  const trap = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    writeFileSync(log, (req.headers.get("authorization") ?? "-") + "\n", { flag: "a" });
    const path = new URL(req.url).pathname;
    return Response.json(path === "/api/prose/status" ? forged.status : forged.toggle);
  });
  try {
    await assertNotFooled(root, `http://127.0.0.1:${trap.addr.port}`, log, null);
  } finally {
    await trap.shutdown();
    removeDir(root);
  }
});

Deno.test("SIGHUP ends serve cleanly and removes serve.json, like SIGTERM (issue 23.6)", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  assert.equal(existsSync(join(dir, "serve.json")), true);
  const done = await child.stop("SIGHUP");
  assert.equal(done.code, 0, done.stderr);
  assert.equal(lines(done.stdout).at(-1), "PROSE: serve stopped signal=SIGHUP");
  assert.equal(lines(done.stderr).at(-1), "✅ EXIT:0");
  assert.equal(existsSync(join(dir, "serve.json")), false);
  removeDir(root);
});

// --- a slow answer never turns into a second, local transition (issue 23.7) ---------------------

Deno.test("a mirror write stuck behind another program's transaction: the CLI waits for the server's answer (issue 23.7)", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  const env = { CELLM_DIR: root, CELLM_WORKER_URL: child.url };
  const other = new DatabaseSync(join(dir, "prose.db"));
  try {
    const on = await runToolAsync("prose", ["on", "explicit"], { env });
    assert.equal(lines(on.stdout)[1], "PROSE: action=on result=activated", on.stderr);
    // Another program holds the write lock for longer than the server's busy timeout.
    other.exec("BEGIN IMMEDIATE");
    const off = await runToolAsync("prose", ["off"], { env });
    other.exec("ROLLBACK");
    assert.equal(off.code, 0, off.stderr);
    assert.deepEqual(lines(off.stdout).slice(0, 2), [
      `PROSE: via=backend url=${child.url}`,
      "PROSE: action=off result=cleared",
    ]);
    assert.doesNotMatch(off.stderr, /backend unreachable/);
    assert.equal(existsSync(join(dir, ".active")), false);
    // The mirror missed that write: status says so.
    const status = await runToolAsync("prose", ["status"], { env });
    assert.match(status.stdout, /^PROSE: mirror drift=true /m);
  } finally {
    other.close();
    await child.stop("SIGTERM");
    removeDir(root);
  }
});

Deno.test("a toggle the server holds for the lock's whole wait: the CLI reports the server's busy, never re-runs it (issue 23.7)", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  const release = holdLock(dir);
  try {
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: child.url };
    const on = await runToolAsync("prose", ["on"], { env });
    assert.equal(on.code, 1, on.stderr);
    assert.deepEqual(lines(on.stdout), [
      `PROSE: via=backend url=${child.url}`,
      "PROSE: action=on result=refused reason=busy",
    ]);
    assert.match(on.stderr, /^PROSE-ERROR: code=busy /m);
    assert.equal(existsSync(join(dir, ".active")), false);
  } finally {
    release();
    await child.stop("SIGTERM");
    removeDir(root);
  }
});

Deno.test("the recorded server takes the toggle and never answers: rc 1, nothing run locally (issue 23.7)", async () => {
  const { root, dir } = freshRoot();
  const sockets: Deno.Conn[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const conn of listener) sockets.push(conn);
  })();
  const port = (listener.addr as Deno.NetAddr).port;
  writeFileSync(
    join(dir, "serve.json"),
    JSON.stringify({ port, pid: Deno.pid, token: "ab".repeat(32) }) + "\n",
    { mode: 0o600 },
  );
  try {
    const url = `http://127.0.0.1:${port}`;
    const r = await runToolAsync("prose", ["on"], {
      env: { CELLM_DIR: root, CELLM_WORKER_URL: url },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.deepEqual(lines(r.stdout), [`PROSE: via=backend url=${url}`]);
    assert.match(
      lines(r.stderr)[0],
      /^PROSE-ERROR: code=timeout the backend did not answer within 8000 ms; the flag may have changed \(run prose status\); nothing was run locally$/,
    );
    assert.equal(existsSync(join(dir, ".active")), false, "a second, local transition");
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const s of sockets) s.close();
    removeDir(root);
  }
});

Deno.test("a mirror write waiting behind another program's transaction does not stall /health (issue 23.3)", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  const other = new DatabaseSync(join(dir, "prose.db"));
  try {
    const token = tokenOf(dir);
    other.exec("BEGIN IMMEDIATE");
    const order: string[] = [];
    const waiting = toggle(child.url, token, { action: "on" }).then(async (res) => {
      order.push("toggle");
      return await res.json();
    });
    // The flag is written before the mirror: once it is there, the mirror write is under way.
    for (const deadline = Date.now() + 30_000; !existsSync(join(dir, ".active"));) {
      if (Date.now() > deadline) throw new Error("the toggle never wrote the flag");
      await new Promise((r) => setTimeout(r, 5));
    }
    const health = await fetch(`${child.url}/health`);
    assert.deepEqual(await health.json(), { ok: true });
    order.push("health");
    // Released while the server still retries: the write goes through after all.
    other.exec("ROLLBACK");
    const done = await waiting;
    assert.equal(order[0], "health", `the toggle's mirror write blocked the server: ${order}`);
    assert.equal(done.result, "activated");
    assert.deepEqual(done.mirror, { ok: true }, "the write was retried once the lock was free");
  } finally {
    other.close();
    await child.stop("SIGTERM");
    removeDir(root);
  }
});
