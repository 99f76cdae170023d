/**
 * `prose serve` and the CLI under attack (issue 14, and prose's share of issue 13): the per-server
 * token through the CLI (a caller without it cannot change the flag), `--db` never damaging a
 * user's file, the shebang's grants reaching every loopback form, and unusable state roots
 * reported in one line. Runs against the sources or, with `CTXKIT_TEST_TARGET=bundle`, the bundle.
 */
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  IS_ROOT,
  lines,
  makeSharedTempDir,
  makeTempDir,
  removeDir,
  REPO,
  runTool,
  runToolAsUser,
  runToolAsync,
  skipWithoutDenoFlags,
  skipWithoutUnprivilegedUser,
} from "./_helpers.ts";
import { NOW, spawnServe } from "./_prose_fixtures.ts";

/** The `--allow-*` flags of the bin's shebang. */
function shebangPermissions(): string[] {
  const first = readFileSync(join(REPO, "bin", "prose.ts"), "utf8").split("\n")[0];
  return first.replace(/^#!\/usr\/bin\/env -S deno run /, "").split(" ");
}

function freshRoot(shared = false): { root: string; dir: string } {
  const root = join(shared ? makeSharedTempDir("prose-sec-") : makeTempDir("prose-sec-"), "cellm");
  const dir = join(root, "prose");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { root, dir };
}

Deno.test("through the CLI: 200 with the token of serve.json, 401 (rc 1, flag untouched) without it", async () => {
  const { root, dir } = freshRoot();
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  try {
    const env = { CELLM_DIR: root, CELLM_WORKER_URL: child.url, CTXKIT_NOW_MS: String(NOW) };
    const on = await runToolAsync("prose", ["on", "2", "turns"], { env });
    assert.equal(on.code, 0, on.stderr);
    assert.deepEqual(lines(on.stdout).slice(0, 2), [
      `PROSE: via=backend url=${child.url}`,
      "PROSE: action=on result=activated",
    ]);
    const flag = readFileSync(join(dir, ".active"), "utf8");

    // Another state root has no token for this server: the answer is 401, reported, and final.
    const other = freshRoot().root;
    for (const args of [["off"], ["level", "minimal"], ["status"], ["sync"]]) {
      const r = await runToolAsync("prose", args, { env: { ...env, CELLM_DIR: other } });
      assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
      assert.deepEqual(lines(r.stdout), [`PROSE: via=backend url=${child.url}`]);
      assert.match(
        lines(r.stderr)[0],
        /^PROSE-ERROR: code=unauthorized backend rejected the request \(HTTP 401\): unauthorized; no token for this backend: \S+serve\.json is missing$/,
      );
      assert.equal(lines(r.stderr).at(-1), "❌ FAILED EXIT:1");
      assert.equal(existsSync(join(other, "prose", ".active")), false, "never a local fallback");
    }
    assert.equal(readFileSync(join(dir, ".active"), "utf8"), flag);

    // A token that is not this server's (a stale record) is refused the same way.
    const record = JSON.parse(readFileSync(join(dir, "serve.json"), "utf8"));
    const staleRoot = freshRoot();
    writeFileSync(
      join(staleRoot.dir, "serve.json"),
      JSON.stringify({ ...record, token: "0".repeat(64) }),
      { mode: 0o600 },
    );
    // A record whose server is gone (another server has the port): the answer does not prove
    // that record's token, so it is not believed and the flag file of that root is used
    // (references/prose.md#authentication).
    const stale = await runToolAsync("prose", ["off"], {
      env: { ...env, CELLM_DIR: staleRoot.root },
    });
    assert.equal(stale.code, 0, stale.stderr);
    assert.deepEqual(lines(stale.stdout).slice(0, 2), [
      `PROSE: via=filesystem backend=unreachable url=${child.url} reason=unverified`,
      "PROSE: action=off result=already-inactive",
    ]);
    assert.equal(readFileSync(join(dir, ".active"), "utf8"), flag);
  } finally {
    const done = await child.stop("SIGTERM");
    assert.equal(done.code, 0, done.stderr);
    // The token file goes with the server.
    assert.equal(existsSync(join(dir, "serve.json")), false);
    removeDir(root);
  }
});

Deno.test("another user cannot read the token, so cannot change the flag (401 as uid 65534)", async () => {
  if (!IS_ROOT || skipWithoutUnprivilegedUser()) return;
  const { root, dir } = freshRoot(true);
  chmodSync(join(root, ".."), 0o755);
  chmodSync(root, 0o755);
  const child = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  try {
    // `level` (not `on`, which needs the config that uid 65534 cannot read either).
    const r = runToolAsUser("prose", ["level", "full"], {
      env: { CELLM_DIR: root, CELLM_WORKER_URL: child.url },
    });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^PROSE-ERROR: code=unauthorized .*\(HTTP 401\)/m);
    assert.equal(existsSync(join(dir, ".active")), false);
  } finally {
    await child.stop("SIGTERM");
    removeDir(root);
  }
});

Deno.test("the token is only ever sent to the port serve.json names, on 127.0.0.1", async () => {
  const { root, dir } = freshRoot();
  const seen: (string | null)[] = [];
  const trap = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(req.headers.get("authorization"));
    return new Response("{}", { status: 503 });
  });
  try {
    writeFileSync(
      join(dir, "serve.json"),
      JSON.stringify({ port: trap.addr.port === 1 ? 2 : 1, pid: 1, token: "a".repeat(64) }),
      { mode: 0o600 },
    );
    const url = `http://127.0.0.1:${trap.addr.port}`;
    const r = await runToolAsync("prose", ["on"], {
      env: { CELLM_DIR: root, CELLM_WORKER_URL: url },
    });
    assert.equal(r.code, 0, r.stderr);
    // The trap answers 503; on a loaded machine the answer may come after the client's 1 s.
    assert.match(r.stdout, /reason=(server-error|timeout)$/m);
    for (let waited = 0; seen.length === 0 && waited < 600; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 50)); // until the trap has read it
    }
    assert.deepEqual(seen, [null]);
  } finally {
    await trap.shutdown();
    removeDir(root);
  }
});

// --- --db (issue 14, point 3) ----------------------------------------------------------------

Deno.test("serve --db refuses what is not a mirror of ours, leaving mode and bytes untouched", () => {
  const { root, dir } = freshRoot();
  const foreign = join(root, "other.sqlite");
  const db = new DatabaseSync(foreign);
  db.exec("CREATE TABLE notes (body TEXT)");
  db.close();
  const cases: [string, string | null, number][] = [
    ["script.sh", "#!/bin/sh\necho hi\n", 0o755],
    ["notes.txt", "dear diary\n", 0o644],
    ["empty.db", "", 0o644],
    ["other.sqlite", null, 0o640],
  ];
  for (const [name, content, mode] of cases) {
    const path = join(root, name);
    if (content !== null) writeFileSync(path, content);
    chmodSync(path, mode);
    const before = readFileSync(path);
    const r = runTool("prose", ["serve", "--port", "0", "--db", path], {
      env: { CELLM_DIR: root },
    });
    assert.equal(r.code, 1, `${name}: ${r.stderr}`);
    assert.match(lines(r.stderr)[0], /^PROSE-ERROR: code=db cannot open database /, name);
    assert.equal(lines(r.stderr).at(-1), "❌ FAILED EXIT:1");
    assert.equal(statSync(path).mode & 0o777, mode, `${name}: mode changed`);
    assert.deepEqual(readFileSync(path), before, `${name}: bytes changed`);
  }
  assert.match(
    runTool("prose", ["serve", "--port", "0", "--db", join(root, "empty.db")], {
      env: { CELLM_DIR: root },
    }).stderr,
    /empty\.db: the file is empty; remove it, or name a path that does not exist$/m,
  );
  // No SQLite side files, no token file and no temp file were left anywhere.
  assert.deepEqual(readdirSync(root).sort(), [
    "empty.db",
    "notes.txt",
    "other.sqlite",
    "prose",
    "script.sh",
  ]);
  assert.deepEqual(readdirSync(dir), []);
});

Deno.test("serve --db creates a new path 0600 and reopens its own mirror (forcing 0600)", async () => {
  const { root } = freshRoot();
  const path = join(root, "new.db");
  const first = await spawnServe(["--port", "0", "--db", path], { CELLM_DIR: root });
  assert.equal((await first.stop("SIGTERM")).code, 0);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  chmodSync(path, 0o644);
  const second = await spawnServe(["--port", "0", "--db", path], { CELLM_DIR: root });
  assert.equal((await second.stop("SIGTERM")).code, 0);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(root).sort(), ["new.db", "prose"]);
  removeDir(root);
});

// --- issue 13: the shebang's grants ------------------------------------------------------------

Deno.test("under the shebang's grants, an [::1] backend URL is reached (no code=permission)", async () => {
  if (skipWithoutDenoFlags()) return;
  const { root } = freshRoot();
  const doc = JSON.parse(
    runTool("prose", ["status", "--json", "--local"], { env: { CELLM_DIR: root } }).stdout,
  );
  let listener: Deno.HttpServer<Deno.NetAddr>;
  try {
    listener = Deno.serve(
      { hostname: "::1", port: 0, onListen: () => {} },
      () => Response.json({ ...doc, via: "backend", mirror: null, drift: true, driftKeys: [] }),
    );
  } catch {
    console.log("SKIP: no IPv6 loopback here");
    return;
  }
  try {
    const url = `http://[::1]:${listener.addr.port}`;
    const r = await runToolAsync("prose", ["status"], {
      env: { CELLM_DIR: root, CELLM_WORKER_URL: url },
      permissions: shebangPermissions(),
    });
    assert.equal(r.code, 0, r.stderr);
    // Reached and answered (with no serve.json, an answer cannot be believed: issue 23.6).
    assert.equal(
      lines(r.stdout)[0],
      `PROSE: via=filesystem backend=unreachable url=${url} reason=unverified`,
    );
    assert.doesNotMatch(r.stderr, /code=permission/);
  } finally {
    await listener.shutdown();
    removeDir(root);
  }
});

Deno.test("CELLM_DIR=/dev/null or /proc/self under the shebang's grants: one PROSE-ERROR line naming it", () => {
  if (skipWithoutDenoFlags()) return;
  for (const dir of ["/dev/null", "/proc/self"]) {
    for (const args of [["status"], ["on"], ["consume"], ["serve", "--port", "0"]]) {
      const r = runTool("prose", args, {
        env: { CELLM_DIR: dir },
        permissions: shebangPermissions(),
      });
      const what = `${dir} ${args.join(" ")}`;
      assert.equal(r.code, 2, `${what}: ${r.stderr}`);
      assert.deepEqual(lines(r.stderr).length, 2, `${what}: ${r.stderr}`);
      assert.match(
        lines(r.stderr)[0],
        new RegExp(
          `^PROSE-ERROR: code=env field=CELLM_DIR ${dir}: .*the prose state needs a directory$`,
        ),
        what,
      );
      assert.doesNotMatch(r.stderr, /allow-all/, what);
      assert.equal(r.stdout, "", what);
    }
  }
});
