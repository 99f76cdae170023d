/**
 * `prose serve` under load (issue 14, issue 30): one local process holding connections open must
 * never take the backend down, and another user flooding it must never cost the user an answer
 * (`references/prose.md#limits`). The server runs in a child process; 600 half-open connections
 * (under `ulimit -n 512`), or a second uid's flood of silent connections, are held against it
 * while a fresh client still gets answers, and SIGTERM still ends it with its exit line. Every
 * wait is on a condition, with a generous cap.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  denoAsUser,
  lines,
  makeSharedTempDir,
  makeTempDir,
  removeDir,
  runToolAsync,
} from "../_helpers.ts";
import { spawnServe, startAsUser, type UserProcess } from "../_prose_fixtures.ts";

/** Poll `attempt` until it gives a value, at most `capMs` (a cap, not an expectation). */
async function until<T>(attempt: () => Promise<T | undefined>, capMs: number): Promise<T> {
  const deadline = Date.now() + capMs;
  for (;;) {
    const got = await attempt().catch(() => undefined);
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`no answer within ${capMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("600 half-open connections against a server with ulimit -n 512: it keeps answering, then stops cleanly", async () => {
  const root = makeTempDir("prose-flood-");
  mkdirSync(join(root, "prose"), { mode: 0o700 });
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root }, { fdLimit: 512 });
  const port = Number(new URL(child.url).port);
  const held: Deno.Conn[] = [];
  try {
    // Connect and send part of a request line, then keep the connection open.
    const partial = new TextEncoder().encode("GET /hea");
    for (let batch = 0; batch < 6; batch++) {
      const conns = await Promise.all(
        Array.from({ length: 100 }, () => Deno.connect({ hostname: "127.0.0.1", port })),
      );
      await Promise.all(conns.map((c) => c.write(partial).catch(() => 0)));
      held.push(...conns);
    }
    assert.equal(held.length, 600);

    // A fresh client gets answers: health, and an authenticated CLI round trip.
    const health = await until(async () => {
      const res = await fetch(`${child.url}/health`, { signal: AbortSignal.timeout(2000) });
      return res.status === 200 ? await res.json() : undefined;
    }, 30_000);
    assert.deepEqual(health, { ok: true });
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: child.url };
    const on = await until(async () => {
      const r = await runToolAsync("prose", ["on", "3", "turns"], { env });
      return lines(r.stdout)[0] === `PROSE: via=backend url=${child.url}` ? r : undefined;
    }, 60_000);
    assert.equal(on.code, 0, on.stderr);
    assert.equal(lines(on.stdout)[1], "PROSE: action=on result=activated");

    // The server holds at most its cap of connections: far below its descriptor limit.
    const fds = readdirSync(`/proc/${child.pid}/fd`).length;
    assert.ok(fds < 200, `server has ${fds} descriptors open`);
  } finally {
    for (const c of held) {
      try {
        c.close();
      } catch { /* closed by the server */ }
    }
    const done = await child.stop("SIGTERM");
    assert.equal(done.code, 0, done.stderr);
    assert.equal(lines(done.stdout).at(-1), "PROSE: serve stopped signal=SIGTERM");
    assert.equal(lines(done.stderr).at(-1), "✅ EXIT:0");
    assert.doesNotMatch(done.stderr, /Uncaught|Too many open files/);
    removeDir(root);
  }
});

/**
 * Another user's flood: connections that open and send nothing, each reopened as soon as the
 * server closes it. It prints `crowding` once the server has closed `min` of them (it is at its
 * cap and choosing whom to drop), then keeps going until killed.
 */
const SILENT_FLOOD = `
const [port, workers, min] = Deno.args.map(Number);
let closed = 0;
let told = false;
const worker = async () => {
  for (;;) {
    try {
      const c = await Deno.connect({ hostname: "127.0.0.1", port });
      await c.read(new Uint8Array(16)).catch(() => null);
      try { c.close(); } catch { /* gone */ }
      if (++closed >= min && !told) {
        told = true;
        console.log("crowding");
      }
    } catch {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
};
await Promise.all(Array.from({ length: workers }, worker));
`;

/**
 * The user's client, in a process of its own as each CLI run is: `count` authenticated status
 * requests, each on a fresh connection, the request written as soon as it connects; prints the
 * status line of each answer (or that the connection was closed unanswered) as one JSON line.
 */
const STATUS_CLIENT = `
const [port, token, count] = Deno.args;
const request = new TextEncoder().encode(
  "GET /api/prose/status HTTP/1.1\\r\\nHost: 127.0.0.1:" + port + "\\r\\nAuthorization: Bearer " +
    token + "\\r\\nConnection: close\\r\\n\\r\\n",
);
const lines = [];
for (let i = 0; i < Number(count); i++) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  await conn.write(request);
  let text = "";
  const buf = new Uint8Array(4096);
  for (;;) {
    const n = await conn.read(buf).catch(() => null);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  try { conn.close(); } catch { /* closed */ }
  lines.push(text.split("\\r\\n")[0] || "(closed unanswered)");
}
console.log(JSON.stringify(lines));
`;

Deno.test("another uid flooding the port with silent connections never costs the user an answer (issue 30.2)", async () => {
  const shared = makeSharedTempDir("prose-crowd-");
  const script = join(shared, "flood.ts");
  writeFileSync(script, SILENT_FLOOD);
  const run = denoAsUser(["run", "-A", script]);
  if (run === undefined) return removeDir(shared);
  const root = makeTempDir("prose-crowded-");
  mkdirSync(join(root, "prose"), { mode: 0o700 });
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  const port = Number(new URL(child.url).port);
  const token = JSON.parse(readFileSync(join(root, "prose", "serve.json"), "utf8")).token;
  // More silent connections than the server keeps: it must drop some, and choose which.
  let flood: UserProcess | undefined;
  try {
    flood = await startAsUser(run, [String(port), "400", "1000"], /crowding/);
    const client = join(shared, "client.ts");
    writeFileSync(client, STATUS_CLIENT);
    const asked = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net=127.0.0.1", client, String(port), token, "60"],
      stdout: "piped",
      stderr: "inherit",
      // A cap, not an expectation: only a hang reaches it.
      signal: AbortSignal.timeout(300_000),
    }).output();
    assert.equal(asked.code, 0);
    const answered: string[] = JSON.parse(new TextDecoder().decode(asked.stdout));
    assert.deepEqual(answered, Array(60).fill("HTTP/1.1 200 OK"));
    // The CLI's toggles reach the backend: none falls back to the file.
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: child.url };
    for (const level of ["minimal", "full", "minimal", "full", "minimal", "full"]) {
      const r = await runToolAsync("prose", ["level", level], { env });
      assert.equal(lines(r.stdout)[0], `PROSE: via=backend url=${child.url}`, r.stdout + r.stderr);
      assert.equal(r.code, 0, r.stderr);
    }
  } finally {
    await flood?.stop();
    const done = await child.stop("SIGTERM");
    assert.equal(done.code, 0, done.stderr);
    removeDir(root);
    removeDir(shared);
  }
});
