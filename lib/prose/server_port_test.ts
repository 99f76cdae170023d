import assert from "node:assert/strict";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { makeTempDir, removeDir } from "../../tests/_helpers.ts";
import { DEFAULT_PORT, parsePort, readWorkerJson, resolvePort } from "./server_port.ts";

Deno.test("parsePort: digits only, 0-65535", () => {
  assert.equal(parsePort("0"), 0);
  assert.equal(parsePort("65535"), 65535);
  for (const bad of ["", "65536", "-1", "1e3", " 80", "80 ", "0x50", "123456"]) {
    assert.equal(parsePort(bad), undefined, bad);
  }
});

Deno.test("resolvePort: --port, then CELLM_WORKER_PORT, then worker.json, then 31415", () => {
  const worker = '{"port": 4000, "pid": 12}';
  assert.deepEqual(resolvePort({ flag: "1", env: "2", workerJson: worker }), {
    ok: true,
    port: 1,
    source: "--port",
  });
  assert.deepEqual(resolvePort({ env: "2", workerJson: worker }), {
    ok: true,
    port: 2,
    source: "CELLM_WORKER_PORT",
  });
  assert.deepEqual(resolvePort({ env: "", workerJson: worker }), {
    ok: true,
    port: 4000,
    source: "worker.json",
  });
  assert.deepEqual(resolvePort({}), { ok: true, port: DEFAULT_PORT, source: "default" });
});

Deno.test("resolvePort: bad flag or env is an error; a bad worker.json only warns", () => {
  assert.deepEqual(resolvePort({ flag: "http" }), {
    ok: false,
    field: "--port",
    message: "must be an integer 0-65535",
  });
  assert.equal(resolvePort({ env: "99999" }).ok, false);
  for (const text of ["", "{", '{"port":"4000"}', '{"port":0}', "[]"]) {
    const r = resolvePort({ workerJson: text });
    assert.ok(r.ok && r.port === DEFAULT_PORT && r.warning !== undefined, text);
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
