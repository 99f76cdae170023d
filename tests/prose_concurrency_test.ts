/**
 * Concurrency and write failures (spec §10, §11.24–25): concurrent writers leave exactly one
 * writer's payload and no temp file; readers only ever see a whole flag; a failed write keeps the
 * old flag.
 */
import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  IS_ROOT,
  lines,
  makeSharedTempDir,
  runToolAsUser,
  runToolAsync,
  UNPRIVILEGED_ID,
} from "./_helpers.ts";
import { flagPath, freshRoot, NOW, prose } from "./_prose_fixtures.ts";
import { readProseFlag } from "../lib/prose/mod.ts";

const WRITERS = 20;

function payload(n: number): string {
  return `{"level":"full","ttl":{"unit":"turn","value":${n}},"expiresAt":null,"activatedAt":${NOW},"source":"manual"}\n`;
}

Deno.test("§11.24 20 concurrent `on` runs plus a read loop: whole flags only, one writer's payload, no temp files", async () => {
  const root = freshRoot();
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  let done = false;
  const states = new Set<string>();
  let reads = 0;
  const reader = (async () => {
    while (!done) {
      const read = readProseFlag({ root, now: NOW });
      states.add(read.state);
      if (read.state === "active") assert.equal(read.flag?.source, "manual");
      reads++;
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  })();
  const runs = await Promise.all(
    Array.from(
      { length: WRITERS },
      (_, i) => runToolAsync("prose", ["on", String(i + 1), "turns", "--local"], { env }),
    ),
  );
  done = true;
  await reader;
  for (const r of runs) {
    assert.equal(r.code, 0, r.stderr);
    assert.equal(lines(r.stderr).at(-1), "✅ EXIT:0");
    assert.match(lines(r.stdout)[0], /^PROSE: action=on result=(activated|replaced)$/);
  }
  assert.ok(reads > 0);
  for (const s of states) assert.ok(s === "active" || s === "absent", `reader saw ${s}`);
  const final = readFileSync(flagPath(root), "utf8");
  const payloads = Array.from({ length: WRITERS }, (_, i) => payload(i + 1));
  assert.ok(payloads.includes(final), final);
  assert.deepEqual(readdirSync(join(root, "prose")), [".active"]);
});

Deno.test("§11.25 read-only D → io-error (rc 1), no temp file, old flag intact", () => {
  const shared = makeSharedTempDir("prose-ro-");
  const root = join(shared, "cellm");
  const dir = join(root, "prose");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const old = payload(7);
  writeFileSync(join(dir, ".active"), old, { mode: 0o600 });
  if (IS_ROOT) {
    for (const p of [root, dir, join(dir, ".active")]) {
      chownSync(p, UNPRIVILEGED_ID, UNPRIVILEGED_ID);
    }
  }
  chmodSync(dir, 0o500);
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  const status = runToolAsUser("prose", ["status", "--local"], { env });
  assert.equal(status.code, 0, status.stderr);
  assert.match(lines(status.stdout)[0], /^PROSE: state=active .* ttl=turn:7 /);
  for (const args of [["on", "block"], ["off"], ["consume"], ["level", "minimal"]]) {
    const r = runToolAsUser("prose", [...args, "--local"], { env });
    assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(lines(r.stdout)[0], `PROSE: action=${args[0]} result=refused reason=io-error`);
    assert.match(lines(r.stderr)[0], /^PROSE-ERROR: code=io-error /);
    assert.equal(lines(r.stderr).at(-1), "❌ FAILED EXIT:1");
    assert.deepEqual(readdirSync(dir), [".active"]);
    assert.equal(readFileSync(join(dir, ".active"), "utf8"), old);
  }
});

// Needs root to build a fixture owned by someone else; not one of the §11 acceptance lines.
Deno.test({
  name: "a flag directory owned by another user is unsafe (foreign-owner) for readers",
  ignore: !IS_ROOT,
}, () => {
  const shared = makeSharedTempDir("prose-owner-");
  const root = join(shared, "cellm");
  const dir = join(root, "prose");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, ".active"), payload(2), { mode: 0o600 });
  chmodSync(dir, 0o755);
  chmodSync(root, 0o755);
  chmodSync(join(dir, ".active"), 0o644);
  // Owned by root, read as uid 65534: the directory itself is foreign.
  const r = runToolAsUser("prose", ["status", "--local"], { env: { CELLM_DIR: root } });
  assert.equal(r.code, 1, r.stderr);
  assert.match(lines(r.stdout)[0], /^PROSE: state=unsafe .* reason=foreign-owner$/);
});

// Needs root to chown the fixture; not one of the §11 acceptance lines.
Deno.test({
  name: "without --allow-sys, a flag owned by someone else than its directory is foreign-owner",
  ignore: !IS_ROOT,
}, () => {
  const root = freshRoot();
  const dir = join(root, "prose");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, ".active"), payload(2), { mode: 0o600 });
  chownSync(join(dir, ".active"), UNPRIVILEGED_ID, UNPRIVILEGED_ID);
  const permissions = ["--allow-read", "--allow-write", "--allow-env"];
  const r = prose(root, ["status"], { permissions });
  assert.equal(r.code, 1, r.stderr);
  assert.match(lines(r.stdout)[0], /^PROSE: state=unsafe .* reason=foreign-owner$/);
  const withSys = prose(root, ["status"]);
  assert.match(lines(withSys.stdout)[0], /^PROSE: state=unsafe .* reason=foreign-owner$/);
});
