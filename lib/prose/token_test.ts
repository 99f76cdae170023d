import assert from "node:assert/strict";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../../tests/_helpers.ts";
import { ProseError } from "./errors.ts";
import {
  authorized,
  backendTarget,
  hmacHex,
  newToken,
  removeServeRecord,
  requestMac,
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

Deno.test("hmacHex is HMAC-SHA-256 (RFC 4231 test cases 1, 2 and a 131-byte key)", async () => {
  assert.equal(
    hmacHex("\x0b".repeat(20), "Hi There"),
    "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
  );
  assert.equal(
    hmacHex("Jefe", "what do ya want for nothing?"),
    "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
  );
  // A key longer than the block, against WebCrypto.
  const key = "k".repeat(131);
  const webKey = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(key),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", webKey, new TextEncoder().encode("message")),
  );
  assert.equal(
    hmacHex(key, "message"),
    [...mac].map((b) => b.toString(16).padStart(2, "0")).join(""),
  );
});

Deno.test("authorized: `Prose <nonce> <mac>` proves the token for one method and path", () => {
  const t = newToken();
  const nonce = "0123456789abcdef0123456789abcdef";
  const mac = requestMac(t, nonce, "POST", "/api/prose/toggle");
  const request = { method: "POST", path: "/api/prose/toggle" };
  assert.equal(authorized(`Prose ${nonce} ${mac}`, t, request), true);
  assert.equal(authorized(`prose ${nonce} ${mac.toUpperCase()}`, t, request), true);
  assert.equal(authorized(`Prose ${nonce} ${mac}`, t), false, "no request to check it against");
  assert.equal(authorized(`Prose ${nonce} ${mac}`, t, { ...request, method: "GET" }), false);
  assert.equal(authorized(`Prose ${nonce} ${mac}`, newToken(), request), false);
  assert.equal(authorized(`Prose ${nonce.replace("0", "1")} ${mac}`, t, request), false);
  assert.equal(authorized(`Prose ${nonce} ${mac.slice(0, 63)}`, t, request), false);
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
