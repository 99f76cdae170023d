/**
 * `prose serve` and CLI delegation as a user runs them (`references/prose.md#backend-api`, `#cli-delegation`): the server
 * in a child process (listening line, signals, startup failures) and the CLI talking to a real
 * backend on an ephemeral loopback port, falling back when it is stopped. Runs against the sources
 * or, with `CTXKIT_TEST_TARGET=bundle`, the bundles.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  baseEnv,
  lines,
  makeTempDir,
  removeDir,
  runTool,
  runToolAsync,
  skipWithoutDenoFlags,
  toolArgv,
} from "./_helpers.ts";
import { spawnServe } from "./_prose_fixtures.ts";
import { type RunningServer, startProseServer } from "../lib/prose/server.ts";

const EXIT_LINE = /^(✅ EXIT:0|❌ FAILED EXIT:[12])$/;

function lastErr(stderr: string): string {
  return lines(stderr).at(-1) ?? "";
}

/** A fresh `CELLM_DIR` with an owner-only `prose/` directory. */
function freshRoot(): { root: string; dir: string } {
  const root = makeTempDir("prose-cli-");
  const dir = join(root, "prose");
  mkdirSync(dir, { mode: 0o700 });
  return { root, dir };
}

/** A port nobody listens on (bound, then released). */
function closedPort(): number {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  return port;
}

function mirrorRows(db: string): Record<string, string> {
  const conn = new DatabaseSync(db);
  try {
    const rows = conn.prepare("SELECT key, value FROM settings ORDER BY key").all();
    return Object.fromEntries(rows.map((r) => [String(r.key), String(r.value)]));
  } finally {
    conn.close();
  }
}

Deno.test("serve: listening line, 0600 WAL mirror, health, clean SIGTERM and SIGINT", async () => {
  const { root, dir } = freshRoot();
  try {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
      try {
        assert.equal(
          lines(child.stdout())[0],
          `PROSE: serve listening=${child.url} db=${join(dir, "prose.db")} token=${
            join(dir, "serve.json")
          }`,
        );
        assert.equal(Deno.statSync(join(dir, "serve.json")).mode! & 0o777, 0o600);
        const res = await fetch(`${child.url}/health`);
        assert.deepEqual(await res.json(), { ok: true });
        assert.equal(Deno.statSync(join(dir, "prose.db")).mode! & 0o777, 0o600);
      } finally {
        const done = await child.stop(signal);
        assert.equal(done.code, 0, done.stderr);
        assert.equal(lastErr(done.stderr), "✅ EXIT:0");
        assert.equal(lines(done.stdout).at(-1), `PROSE: serve stopped signal=${signal}`);
      }
    }
    // The mirror and the directory only: no temp files, WAL checkpointed on close.
    assert.deepEqual(readdirSync(dir).sort(), ["prose.db"]);
  } finally {
    removeDir(root);
  }
});

Deno.test("serve: port resolution --port > CELLM_WORKER_PORT > worker.json", async () => {
  const { root } = freshRoot();
  try {
    const port = closedPort();
    writeFileSync(join(root, "worker.json"), JSON.stringify({ port, pid: 1 }));
    const fromWorker = await spawnServe(["--db", join(root, "w.db")], { CELLM_DIR: root });
    assert.equal(fromWorker.url, `http://127.0.0.1:${port}`);
    assert.equal((await fromWorker.stop("SIGTERM")).code, 0);

    const envPort = closedPort();
    const fromEnv = await spawnServe(["--db", join(root, "e.db")], {
      CELLM_DIR: root,
      CELLM_WORKER_PORT: String(envPort),
    });
    assert.equal(fromEnv.url, `http://127.0.0.1:${envPort}`);
    assert.equal((await fromEnv.stop("SIGTERM")).code, 0);

    const bad = runTool("prose", ["serve", "--port", "http"], { env: { CELLM_DIR: root } });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^PROSE-ERROR: code=usage field=--port /m);
    const badEnv = runTool("prose", ["serve"], {
      env: { CELLM_DIR: root, CELLM_WORKER_PORT: "70000" },
    });
    assert.equal(badEnv.code, 2);
    assert.match(badEnv.stderr, /^PROSE-ERROR: code=env field=CELLM_WORKER_PORT /m);
    assert.equal(lastErr(badEnv.stderr), "❌ FAILED EXIT:2");
  } finally {
    removeDir(root);
  }
});

Deno.test("serve: busy port → rc 1 code=port-in-use; bad database → rc 1 code=db; bad config → rc 2", () => {
  const { root, dir } = freshRoot();
  const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (busy.addr as Deno.NetAddr).port;
    const r = runTool("prose", ["serve", "--port", String(port)], { env: { CELLM_DIR: root } });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`^PROSE-ERROR: code=port-in-use 127\\.0\\.0\\.1:${port} `, "m"),
    );
    assert.equal(lastErr(r.stderr), "❌ FAILED EXIT:1");
    assert.equal(r.stdout, "");

    const junk = join(root, "junk.db");
    writeFileSync(junk, "not a database, just some text that is long enough to be read\n");
    const db = runTool("prose", ["serve", "--port", "0", "--db", junk], {
      env: { CELLM_DIR: root },
    });
    assert.equal(db.code, 1);
    assert.match(db.stderr, /^PROSE-ERROR: code=db cannot open database /m);
    const dirDb = runTool("prose", ["serve", "--port", "0", "--db", dir], {
      env: { CELLM_DIR: root },
    });
    assert.equal(dirDb.code, 1);
    assert.match(dirDb.stderr, /^PROSE-ERROR: code=db /m);

    writeFileSync(join(dir, "config.json"), '{"levle": "full"}');
    const cfg = runTool("prose", ["serve", "--port", "0"], { env: { CELLM_DIR: root } });
    assert.equal(cfg.code, 2);
    assert.match(cfg.stderr, /^PROSE-ERROR: code=config field=levle /m);
    assert.equal(existsSync(join(dir, "prose.db")), false);

    const usage = runTool("prose", ["serve", "--bind", "0.0.0.0"], { env: { CELLM_DIR: root } });
    assert.equal(usage.code, 2);
    for (const run of [r, db, dirDb, cfg, usage]) {
      assert.match(lastErr(run.stderr), EXIT_LINE);
      assert.doesNotMatch(run.stderr, /\n\s+at /);
    }
  } finally {
    busy.close();
    removeDir(root);
  }
});

Deno.test("serve refuses a state directory every reader refuses (code=token, rc 1), writing nothing there (issue 30.6)", async () => {
  const { root, dir } = freshRoot();
  Deno.chmodSync(dir, 0o770); // insecure-dir for every reader of serve.json
  const private_ = makeTempDir("prose-db-");
  try {
    // Bounded: a server that starts anyway is killed after a minute, and the test fails.
    const [program, ...argv] = toolArgv("prose");
    const out = await new Deno.Command(program, {
      args: [...argv, "serve", "--port", "0", "--db", join(private_, "m.db")],
      clearEnv: true,
      env: { ...baseEnv(), CELLM_DIR: root },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(60_000),
    }).output();
    const r = {
      code: out.code,
      stdout: new TextDecoder().decode(out.stdout),
      stderr: new TextDecoder().decode(out.stderr),
    };
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stdout, "");
    assert.equal(
      lines(r.stderr)[0],
      `PROSE-ERROR: code=token cannot write the token file ${join(dir, "serve.json")}: ${dir}: ` +
        "the prose directory is group- or world-writable; chmod 700 it",
    );
    assert.equal(lastErr(r.stderr), "❌ FAILED EXIT:1");
    assert.deepEqual(readdirSync(dir), [], "no serve.json (nor anything else) was written");
  } finally {
    removeDir(root);
    removeDir(private_);
  }
});

Deno.test("a clean shutdown removes serve.json even when D became unreadable to readers meanwhile (issue 30.6)", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  assert.equal(existsSync(join(dir, "serve.json")), true);
  Deno.chmodSync(dir, 0o770);
  try {
    const done = await child.stop("SIGTERM");
    assert.equal(done.code, 0, done.stderr);
    assert.equal(lines(done.stdout).at(-1), "PROSE: serve stopped signal=SIGTERM");
    assert.equal(existsSync(join(dir, "serve.json")), false, "serve.json was left behind");
  } finally {
    removeDir(root);
  }
});

// --- delegation --------------------------------------------------------------------------------

/** An in-process backend over `root` (the CLI runs as a child, so the test loop stays free). */
async function backend(root: string): Promise<RunningServer> {
  return await startProseServer({
    port: 0,
    dbPath: join(root, "prose", "prose.db"),
    opts: { root },
  });
}

Deno.test("delegation: on/status/consume/sync through the backend; drift after a local consume", async () => {
  const { root, dir } = freshRoot();
  const server = await backend(root);
  try {
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: server.url };
    const on = await runToolAsync("prose", ["on", "1", "turn", "--level", "minimal"], { env });
    assert.equal(on.code, 0, on.stderr);
    assert.deepEqual(lines(on.stdout).slice(0, 2), [
      `PROSE: via=backend url=${server.url}`,
      "PROSE: action=on result=activated",
    ]);
    assert.match(lines(on.stdout)[2], /^PROSE: state=active level=minimal .*ttl=turn:1 /);
    assert.equal(lastErr(on.stderr), "✅ EXIT:0");
    assert.deepEqual(mirrorRows(join(dir, "prose.db")), {
      CELLM_PROSE_ACTIVE: "true",
      CELLM_PROSE_EXPIRES_AT: "null",
      CELLM_PROSE_LEVEL: "minimal",
    });

    const status = await runToolAsync("prose", ["status", "--json"], { env });
    assert.equal(status.code, 0);
    const doc = JSON.parse(status.stdout);
    assert.equal(doc.via, "backend");
    assert.equal(doc.drift, false);

    // consume never touches the network: it works on the flag file even with a backend set.
    const consume = await runToolAsync("prose", ["consume"], { env });
    assert.equal(consume.code, 0);
    assert.match(consume.stdout, /^PROSE: action=consume result=cleared remaining=0$/m);
    assert.doesNotMatch(consume.stdout, /via=/);

    const drifted = await runToolAsync("prose", ["status"], { env });
    assert.equal(drifted.code, 0);
    assert.deepEqual(lines(drifted.stdout).slice(0, 3), [
      `PROSE: via=backend url=${server.url}`,
      "PROSE: state=absent level=- effective=off ttl=- expiresAt=- activatedAt=- source=-",
      "PROSE: mirror drift=true driftKeys=CELLM_PROSE_ACTIVE,CELLM_PROSE_LEVEL",
    ]);

    const sync = await runToolAsync("prose", ["sync"], { env });
    assert.equal(sync.code, 0, sync.stderr);
    assert.equal(lines(sync.stdout)[1], "PROSE: action=sync result=synced");
    const after = JSON.parse((await runToolAsync("prose", ["status", "--json"], { env })).stdout);
    assert.equal(after.drift, false);

    // level and off are delegated too.
    const level = await runToolAsync("prose", ["level", "full"], { env });
    assert.equal(lines(level.stdout)[1], "PROSE: action=level result=activated");
    const off = await runToolAsync("prose", ["off"], { env });
    assert.equal(lines(off.stdout)[1], "PROSE: action=off result=cleared");
    assert.equal(mirrorRows(join(dir, "prose.db")).CELLM_PROSE_ACTIVE, "false");

    // --local skips the backend.
    const local = await runToolAsync("prose", ["status", "--local"], { env });
    assert.doesNotMatch(local.stdout, /via=/);
    assert.deepEqual(readdirSync(dir).filter((n) => n.includes(".tmp-")), []);
  } finally {
    await server.shutdown();
    removeDir(root);
  }
});

Deno.test("delegation: a backend rejection is reported and never retried locally", async () => {
  const { root, dir } = freshRoot();
  const server = await backend(root);
  try {
    const target = join(root, "target");
    writeFileSync(target, "keep\n");
    Deno.symlinkSync(target, join(dir, ".active"));
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: server.url };
    const on = await runToolAsync("prose", ["on"], { env });
    assert.equal(on.code, 1);
    assert.deepEqual(lines(on.stdout), [
      `PROSE: via=backend url=${server.url}`,
      "PROSE: action=on result=refused reason=symlink-file",
    ]);
    assert.match(on.stderr, /^PROSE-ERROR: code=symlink-file /m);
    assert.equal(lastErr(on.stderr), "❌ FAILED EXIT:1");
    assert.equal(readFileSync(target, "utf8"), "keep\n");

    // status through the backend: rc 1 for an unsafe flag, drift never changes that.
    const status = await runToolAsync("prose", ["status"], { env });
    assert.equal(status.code, 1);
    assert.match(lines(status.stdout)[1], /^PROSE: state=unsafe .* reason=symlink-file$/);
    assert.match(
      status.stderr,
      /^PROSE-ERROR: code=symlink-file \S+\.active: the flag is unsafe$/m,
    );
    assert.equal(lastErr(status.stderr), "❌ FAILED EXIT:1");
  } finally {
    await server.shutdown();
    removeDir(root);
  }
});

Deno.test("delegation falls back to the flag file when the server is stopped mid-test", async () => {
  const { root, dir } = freshRoot();
  const server = await backend(root);
  const url = server.url;
  try {
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: url };
    const first = await runToolAsync("prose", ["on", "--level", "minimal"], { env });
    assert.equal(lines(first.stdout)[0], `PROSE: via=backend url=${url}`);
    await server.shutdown();

    const on = await runToolAsync("prose", ["on", "--level", "full"], { env });
    assert.equal(on.code, 0, on.stderr);
    assert.deepEqual(lines(on.stdout).slice(0, 2), [
      `PROSE: via=filesystem backend=unreachable url=${url} reason=connection`,
      "PROSE: action=on result=replaced",
    ]);
    assert.match(
      on.stderr,
      /^PROSE-WARN: backend unreachable; flag file used directly \(mirror not updated\)$/m,
    );
    assert.equal(JSON.parse(readFileSync(join(dir, ".active"), "utf8")).level, "full");
    assert.equal(lastErr(on.stderr), "✅ EXIT:0");
    // The mirror was not updated: it still says minimal.
    assert.equal(mirrorRows(join(dir, "prose.db")).CELLM_PROSE_LEVEL, "minimal");

    const status = await runToolAsync("prose", ["status"], { env });
    assert.equal(status.code, 0);
    assert.match(
      lines(status.stdout)[0],
      /^PROSE: via=filesystem backend=unreachable .*connection$/,
    );
    assert.match(lines(status.stdout)[1], /^PROSE: state=active level=full /);

    const sync = await runToolAsync("prose", ["sync"], { env });
    assert.equal(sync.code, 1);
    assert.equal(lastErr(sync.stderr), "❌ FAILED EXIT:1");
  } finally {
    await server.shutdown();
    removeDir(root);
  }
});

Deno.test("delegation: 404 and 5xx answers fall back; consume/block-end/session-end send nothing", async () => {
  const { root } = freshRoot();
  const seen: string[] = [];
  let answer = 404;
  const trap = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname}`);
    return new Response("{}", { status: answer });
  });
  try {
    const url = `http://127.0.0.1:${trap.addr.port}`;
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: url };
    const on = await runToolAsync("prose", ["on", "2", "turns"], { env });
    assert.equal(on.code, 0, on.stderr);
    assert.match(on.stdout, /^PROSE: via=filesystem backend=unreachable .* reason=not-found$/m);
    answer = 503;
    const level = await runToolAsync("prose", ["level", "minimal"], { env });
    assert.match(level.stdout, / reason=server-error$/m);
    assert.match(level.stdout, /^PROSE: action=level result=changed$/m);
    answer = 200; // "{}" is not a status document
    const status = await runToolAsync("prose", ["status"], { env });
    assert.equal(status.code, 0);
    assert.match(lines(status.stdout)[0], / reason=bad-response$/);
    assert.match(lines(status.stdout)[1], /^PROSE: state=active level=minimal /);
    seen.length = 0;
    for (const cmd of ["consume", "block-end", "session-end"]) {
      const r = await runToolAsync("prose", [cmd], { env });
      assert.equal(r.code, 0, `${cmd}: ${r.stderr}`);
      assert.doesNotMatch(r.stdout, /via=/);
    }
    assert.deepEqual(seen, []);
  } finally {
    await trap.shutdown();
    removeDir(root);
  }
});

Deno.test("delegation: a backend that accepts but never answers times out after 1 s", async () => {
  const { root, dir } = freshRoot();
  const sockets: Deno.Conn[] = [];
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepting = (async () => {
    for await (const conn of listener) sockets.push(conn);
  })();
  try {
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`;
    const started = performance.now();
    const r = await runToolAsync("prose", ["off"], {
      env: { CELLM_DIR: root, CELLM_WORKER_URL: url },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout).slice(0, 2), [
      `PROSE: via=filesystem backend=unreachable url=${url} reason=timeout`,
      "PROSE: action=off result=already-inactive",
    ]);
    assert.ok(performance.now() - started < 20_000);
    assert.equal(existsSync(join(dir, ".active")), false);
  } finally {
    listener.close();
    await accepting.catch(() => {});
    for (const s of sockets) s.close();
    removeDir(root);
  }
});

Deno.test("delegation without a network grant is a permission error (rc 2), not a fallback", async () => {
  if (skipWithoutDenoFlags()) return;
  const { root, dir } = freshRoot();
  try {
    const r = await runToolAsync("prose", ["on"], {
      env: { CELLM_DIR: root, CELLM_WORKER_URL: `http://127.0.0.1:${closedPort()}` },
      permissions: ["--allow-read", "--allow-write", "--allow-env"],
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^PROSE-ERROR: code=permission /m);
    assert.equal(lastErr(r.stderr), "❌ FAILED EXIT:2");
    assert.equal(existsSync(join(dir, ".active")), false);
  } finally {
    removeDir(root);
  }
});

Deno.test("delegation: a non-loopback backend URL is rc 2 and nothing is sent", async () => {
  const { root, dir } = freshRoot();
  try {
    const r = await runToolAsync("prose", ["on"], {
      env: { CELLM_DIR: root, CELLM_WORKER_URL: "http://10.0.0.5:31415" },
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^PROSE-ERROR: code=env field=CELLM_WORKER_URL /m);
    assert.equal(existsSync(join(dir, ".active")), false);
    writeFileSync(join(dir, "config.json"), '{"backend": {"url": "http://example.com"}}');
    const cfg = await runToolAsync("prose", ["on"], { env: { CELLM_DIR: root } });
    assert.equal(cfg.code, 2);
    assert.match(cfg.stderr, /field=backend\.url/);
  } finally {
    removeDir(root);
  }
});
