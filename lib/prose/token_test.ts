import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../../tests/_helpers.ts";
import { ProseError } from "./errors.ts";
import {
  authorized,
  backendTarget,
  newToken,
  removeServeRecord,
  writeServeRecord,
} from "./token.ts";

Deno.test("newToken: 256 random bits as 64 hex digits", () => {
  const a = newToken();
  assert.match(a, /^[0-9a-f]{64}$/);
  assert.notEqual(a, newToken());
});

Deno.test("authorized: exactly `Bearer <token>` (any case of the scheme)", () => {
  const t = newToken();
  assert.equal(authorized(`Bearer ${t}`, t), true);
  assert.equal(authorized(`bearer ${t}`, t), true);
  for (const h of [null, "", "Bearer", `Bearer  ${t}`, `Basic ${t}`, `Bearer ${t}x`, t]) {
    assert.equal(authorized(h, t), false, String(h));
  }
  assert.equal(authorized(`Bearer ${t.slice(0, 63)}0`, t), t.endsWith("0"));
});

Deno.test("the record: written 0600 in a 0700 D, read by the CLI only for its own server", () => {
  const root = join(makeTempDir("prose-token-"), "cellm");
  const token = newToken();
  const path = writeServeRecord({ root }, { port: 4242, pid: 7, token });
  assert.equal(path, join(root, "prose", "serve.json"));
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(statSync(join(root, "prose")).mode & 0o777, 0o700);
  assert.deepEqual(JSON.parse(readFileSync(path, "utf8")), { port: 4242, pid: 7, token });
  assert.deepEqual(backendTarget("http://127.0.0.1:4242", { root }), {
    origin: "http://127.0.0.1:4242",
    token,
  });
  // localhost is sent to 127.0.0.1, never to whatever listens on [::1].
  assert.equal(backendTarget("http://localhost:4242", { root }).origin, "http://127.0.0.1:4242");
  for (const url of ["http://127.0.0.1:4243", "http://[::1]:4242"]) {
    const t = backendTarget(url, { root });
    assert.deepEqual([t.origin, t.token], [url, undefined], url);
    assert.match(t.missing ?? "", /serve\.json names the server at http:\/\/127\.0\.0\.1:4242$/);
  }
  removeServeRecord({ root }, "0".repeat(64));
  assert.equal(statSync(path).isFile(), true, "another server's record stays");
  removeServeRecord({ root }, token);
  assert.match(backendTarget("http://127.0.0.1:4242", { root }).missing ?? "", /is missing$/);
});

Deno.test("the record refuses a link at its path and a record that fails its schema", () => {
  const root = join(makeTempDir("prose-token-"), "cellm");
  mkdirSync(join(root, "prose"), { recursive: true, mode: 0o700 });
  const target = join(root, "elsewhere");
  writeFileSync(target, "keep\n");
  symlinkSync(target, join(root, "prose", "serve.json"));
  assert.throws(
    () => writeServeRecord({ root }, { port: 1, pid: 1, token: newToken() }),
    (e: unknown) => e instanceof ProseError && e.code === "token" && e.exitCode === 1,
  );
  assert.equal(readFileSync(target, "utf8"), "keep\n");
  assert.match(backendTarget("http://127.0.0.1:1", { root }).missing ?? "", /unusable/);
  Deno.removeSync(join(root, "prose", "serve.json"));
  writeFileSync(join(root, "prose", "serve.json"), '{"port":1,"pid":1,"token":"short"}');
  assert.match(backendTarget("http://127.0.0.1:1", { root }).missing ?? "", /not a valid record/);
});
