/**
 * `prose serve` under load (issue 14): one local process holding connections open must never take
 * the backend down. The server runs in a child process under `ulimit -n 512`; 600 half-open
 * connections are held against it while a fresh client still gets answers, and SIGTERM still
 * ends it with its exit line. Every wait is on a condition, with a generous cap.
 */
import assert from "node:assert/strict";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { lines, makeTempDir, removeDir, runToolAsync } from "./_helpers.ts";
import { spawnServe } from "./_prose_fixtures.ts";

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
