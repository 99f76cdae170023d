import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, removeDir } from "../../tests/_helpers.ts";
import { EnvironmentError } from "../errors.ts";
import { ProseError } from "./errors.ts";
import {
  DEFAULT_PORT,
  defaultDbPath,
  errorReply,
  hostAllowed,
  isJsonContentType,
  originAllowed,
  parsePort,
  readWorkerJson,
  resolvePort,
  route,
  toHttpResponse,
  watchFatal,
} from "./server.ts";

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

Deno.test("isJsonContentType", () => {
  assert.equal(isJsonContentType("application/json"), true);
  assert.equal(isJsonContentType("Application/JSON; charset=UTF-8"), true);
  for (const ct of [null, "text/plain", "application/json; charset=latin1", "application/jsonx"]) {
    assert.equal(isJsonContentType(ct), false, String(ct));
  }
});

Deno.test("toHttpResponse: JSON, no-store, nosniff, no CORS; error bodies in contract order", () => {
  const res = toHttpResponse(errorReply(400, "invalid_request", "bad level", { field: "level" }));
  assert.equal(res.status, 400);
  assert.deepEqual(res.headers, {
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
  assert.equal(
    new TextDecoder().decode(res.body),
    '{"ok":false,"error":"invalid_request","field":"level","message":"bad level"}\n',
  );
  // A terminal-active character in a body is escaped, never sent raw.
  const odd = toHttpResponse({ status: 200, body: { path: "a\u009bb\u202ec" } });
  assert.equal(new TextDecoder().decode(odd.body), '{"path":"a\\u009bb\\u202ec"}\n');
});

Deno.test("parsePort: digits only, 0-65535", () => {
  assert.equal(parsePort("0"), 0);
  assert.equal(parsePort("65535"), 65535);
  for (const bad of ["", "65536", "-1", "1e3", " 80", "80 ", "0x50", "123456"]) {
    assert.equal(parsePort(bad), undefined, bad);
  }
});

Deno.test("resolvePort: --port, then CELLM_WORKER_PORT, then worker.json, then 31415", () => {
  let reads = 0;
  const worker = () => {
    reads++;
    return '{"port": 4000, "pid": 12}';
  };
  assert.deepEqual(resolvePort({ flag: "1", env: "2", workerJson: worker }), { port: 1 });
  assert.deepEqual(resolvePort({ env: "2", workerJson: worker }), { port: 2 });
  assert.equal(reads, 0, "worker.json is read only when it decides");
  assert.deepEqual(resolvePort({ env: "", workerJson: worker }), { port: 4000 });
  assert.deepEqual(resolvePort({ workerJson: () => undefined }), { port: DEFAULT_PORT });
  assert.deepEqual(resolvePort({}), { port: DEFAULT_PORT });
});

Deno.test("resolvePort: a bad flag is usage, a bad env is environment; a bad worker.json only warns", () => {
  assert.throws(
    () => resolvePort({ flag: "http" }),
    (e: unknown) =>
      e instanceof ProseError && e.code === "usage" && e.field === "--port" &&
      e.message === "must be an integer 0-65535" && e.exitCode === 2,
  );
  assert.throws(
    () => resolvePort({ env: "99999" }),
    (e: unknown) => e instanceof EnvironmentError && e.variable === "CELLM_WORKER_PORT",
  );
  for (const text of ["", "{", '{"port":"4000"}', '{"port":0}', "[]"]) {
    assert.deepEqual(resolvePort({ workerJson: () => text }), {
      port: DEFAULT_PORT,
      warning: "worker.json has no usable port; using 31415",
    }, text);
  }
});

Deno.test("readWorkerJson: missing is undefined; unreadable is a failing placeholder", () => {
  const dir = makeTempDir("prose-port-");
  try {
    assert.equal(readWorkerJson(join(dir, "worker.json")), undefined);
    writeFileSync(join(dir, "worker.json"), '{"port":5}');
    assert.equal(readWorkerJson(join(dir, "worker.json")), '{"port":5}');
    writeFileSync(join(dir, "bad.json"), new Uint8Array([0xff]));
    assert.equal(readWorkerJson(join(dir, "bad.json")), "");
    assert.equal(readWorkerJson(dir), "");
  } finally {
    removeDir(dir);
  }
});

Deno.test("defaultDbPath creates R and D (0700) and refuses a linked D", () => {
  const base = makeTempDir("prose-db-");
  try {
    const root = join(base, "cellm");
    const paths = {
      root,
      dir: join(root, "prose"),
      flag: join(root, "prose", ".active"),
      config: join(root, "prose", "config.json"),
      db: join(root, "prose", "prose.db"),
      workerJson: join(root, "worker.json"),
    };
    assert.equal(defaultDbPath(paths), paths.db);
    assert.equal(Deno.statSync(paths.dir).mode! & 0o777, 0o700);
    Deno.removeSync(paths.dir);
    Deno.symlinkSync(base, paths.dir);
    assert.throws(
      () => defaultDbPath(paths),
      (e: unknown) =>
        e instanceof ProseError && e.code === "db" && e.exitCode === 1 &&
        e.message === `${paths.dir} must be a real directory`,
    );
  } finally {
    removeDir(base);
  }
});

Deno.test("watchFatal: an error nothing handled becomes a rejection serve reports (not a crash)", async () => {
  const fatal = watchFatal();
  try {
    // A rejected promise nobody awaits, as a bug in a callback would leave.
    Promise.reject(new Error("unexpected"));
    await assert.rejects(fatal.failed, /unexpected/);
  } finally {
    fatal.cancel();
  }
});

Deno.test("the CLI's toggle deadline exceeds the server's longest answer (issue 23.7)", async () => {
  const { TOGGLE_TIMEOUT_MS } = await import("./backend.ts");
  const { LOCK_WAIT_MS } = await import("./lock.ts");
  const { MIRROR_BUSY_MS } = await import("./server.ts");
  assert.ok(TOGGLE_TIMEOUT_MS > LOCK_WAIT_MS + MIRROR_BUSY_MS + 1000);
});
