import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { defaultConfig, type ProseConfig } from "./config.ts";
import { readProseFlag, resolveLevel, writeProseFlag } from "./flag.ts";
import {
  activate,
  consume,
  consumeTurn,
  deactivate,
  endBlock,
  endSession,
  planActivation,
  setLevel,
} from "./ops.ts";
import type { ProseFlag } from "./schema.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const NOW = 1_800_000_000_000;

function root(): string {
  return makeTempDir("prose-ops-");
}

function flagOf(r: string, now = NOW): ProseFlag | null {
  return readProseFlag({ root: r, now }).flag;
}

Deno.test("plan: defaults, session cap, explicit, turn bounds", () => {
  const c = defaultConfig();
  const plan = planActivation({}, c, NOW);
  assert.deepEqual(plan, {
    kind: "flag",
    flag: {
      level: "full",
      ttl: { unit: "block", value: 0 },
      expiresAt: null,
      activatedAt: NOW,
      source: "manual",
    },
  });
  const session = planActivation({ ttl: { unit: "session" } }, c, NOW);
  assert.equal(session.kind === "flag" && session.flag.expiresAt, NOW + 43_200_000);
  const uncapped = planActivation({ ttl: { unit: "session" } }, { ...c, sessionCap: null }, NOW);
  assert.equal(uncapped.kind === "flag" && uncapped.flag.expiresAt, null);
  assert.equal(planActivation({ ttl: { unit: "explicit" }, for: "1h" }, c, NOW).kind, "usage");
  assert.equal(planActivation({ ttl: { unit: "turn", value: 0 } }, c, NOW).kind, "usage");
  assert.equal(planActivation({ ttl: { unit: "turn", value: 1001 } }, c, NOW).kind, "usage");
  assert.equal(planActivation({ for: "31d" }, c, NOW).kind, "usage");
  const turn = planActivation({ ttl: { unit: "turn", value: 3 }, for: "90s" }, c, NOW);
  assert.equal(turn.kind === "flag" && turn.flag.expiresAt, NOW + 90_000);
});

Deno.test("plan: auto-clarity is turn-scoped, capped at 1h and 10 turns, refused when disabled", () => {
  const c = defaultConfig();
  const auto = planActivation({ source: "auto-clarity" }, c, NOW);
  assert.deepEqual(auto.kind === "flag" && [auto.flag.ttl, auto.flag.expiresAt], [
    { unit: "turn", value: 1 },
    NOW + 900_000,
  ]);
  assert.equal(
    planActivation({ source: "auto-clarity", ttl: { unit: "block" } }, c, NOW).kind,
    "usage",
  );
  assert.equal(
    planActivation({ source: "auto-clarity", ttl: { unit: "turn", value: 11 } }, c, NOW).kind,
    "usage",
  );
  assert.equal(planActivation({ source: "auto-clarity", for: "2h" }, c, NOW).kind, "usage");
  const off: ProseConfig = { ...c, autoClarity: { ...c.autoClarity, enabled: false } };
  assert.deepEqual(planActivation({ source: "auto-clarity" }, off, NOW), {
    kind: "refused",
    reason: "auto-clarity-disabled",
  });
});

Deno.test("precedence: manual > config > auto-clarity", () => {
  const r = root();
  const config = defaultConfig();
  assert.equal(
    activate({ source: "auto-clarity" }, { root: r, now: NOW, config }).result,
    "activated",
  );
  assert.equal(activate({ source: "config" }, { root: r, now: NOW, config }).result, "replaced");
  assert.deepEqual(activate({ source: "auto-clarity" }, { root: r, now: NOW, config }), {
    ok: true,
    result: "kept",
    reason: "existing-override",
  });
  assert.equal(activate({ source: "manual" }, { root: r, now: NOW, config }).result, "replaced");
  assert.equal(activate({ source: "config" }, { root: r, now: NOW, config }).result, "kept");
  assert.equal(flagOf(r)?.source, "manual");
});

Deno.test("activate replaces an expired flag and an invalid one (with a warning)", () => {
  const r = root();
  const config = defaultConfig();
  activate({ for: "1s" }, { root: r, now: NOW, config });
  assert.equal(readProseFlag({ root: r, now: NOW + 1000 }).state, "expired");
  assert.equal(
    activate({ source: "auto-clarity" }, { root: r, now: NOW + 1000, config }).result,
    "activated",
  );
  writeFileSync(join(r, "prose", ".active"), "{nope");
  const res = activate({}, { root: r, now: NOW, config });
  assert.deepEqual(res, {
    ok: true,
    result: "replaced",
    warning: "replaced invalid flag (reason=bad-json)",
  });
});

Deno.test("consume counts down and clears; enders keep the other units", () => {
  const r = root();
  const config = defaultConfig();
  activate({ ttl: { unit: "turn", value: 3 } }, { root: r, now: NOW, config });
  assert.deepEqual(consumeTurn({ root: r, now: NOW }), {
    ok: true,
    outcome: "decremented",
    remaining: 2,
  });
  assert.deepEqual(consumeTurn({ root: r, now: NOW }), {
    ok: true,
    outcome: "decremented",
    remaining: 1,
  });
  assert.deepEqual(consumeTurn({ root: r, now: NOW }), {
    ok: true,
    outcome: "cleared",
    remaining: 0,
  });
  assert.equal(existsSync(join(r, "prose", ".active")), false);
  assert.deepEqual(consumeTurn({ root: r, now: NOW }), {
    ok: true,
    outcome: "inactive",
    remaining: null,
  });

  activate({ ttl: { unit: "block" } }, { root: r, now: NOW, config });
  assert.equal(consumeTurn({ root: r, now: NOW }).ok && "not-turn-scoped", "not-turn-scoped");
  assert.equal(endSession({ root: r, now: NOW }).result, "kept");
  assert.equal(endBlock({ root: r, now: NOW }).result, "cleared");
  activate({ ttl: { unit: "turn", value: 2 } }, { root: r, now: NOW, config });
  assert.equal(endBlock({ root: r, now: NOW }).result, "kept");
  assert.equal(endSession({ root: r, now: NOW }).result, "cleared");
  activate({ ttl: { unit: "explicit" } }, { root: r, now: NOW, config });
  assert.equal(endSession({ root: r, now: NOW }).result, "kept");
  assert.equal(endBlock({ root: r, now: NOW }).result, "kept");
  assert.equal(deactivate({ root: r }).result, "cleared");
  assert.equal(deactivate({ root: r }).result, "already-inactive");
  activate({ ttl: { unit: "session" }, for: "1m" }, { root: r, now: NOW, config });
  assert.deepEqual(consumeTurn({ root: r, now: NOW + 60_000 }), {
    ok: true,
    outcome: "expired-cleared",
    remaining: null,
  });
});

Deno.test("setLevel: changes only the level, activates when inactive, off is a no-op", () => {
  const r = root();
  const config = defaultConfig();
  assert.deepEqual(setLevel("off", { root: r, now: NOW, config }), {
    ok: true,
    result: "unchanged",
  });
  assert.equal(existsSync(join(r, "prose")), false);
  assert.equal(setLevel("minimal", { root: r, now: NOW, config }).result, "activated");
  assert.deepEqual(flagOf(r)?.ttl, { unit: "block", value: 0 });
  activate({ ttl: { unit: "turn", value: 4 }, for: "1h" }, { root: r, now: NOW, config });
  const before = flagOf(r)!;
  assert.equal(setLevel("off", { root: r, now: NOW, config }).result, "changed");
  assert.deepEqual(flagOf(r), { ...before, level: "off" });
  assert.equal(resolveLevel(readProseFlag({ root: r, now: NOW })), "off");
  assert.equal(readProseFlag({ root: r, now: NOW }).state, "active");
  assert.equal(setLevel("off", { root: r, now: NOW, config }).result, "unchanged");
  assert.throws(() => setLevel("max" as "off", { root: r }), TypeError);
});

Deno.test("compare-first commands refuse an invalid flag and leave it in place", () => {
  const r = root();
  mkdirSync(join(r, "prose"), { mode: 0o700 });
  writeFileSync(join(r, "prose", ".active"), '{"level":"max"}', { mode: 0o600 });
  assert.deepEqual(consumeTurn({ root: r }).ok, false);
  assert.deepEqual(endBlock({ root: r }), { ok: false, result: "refused", reason: "schema" });
  assert.deepEqual(setLevel("full", { root: r }), {
    ok: false,
    result: "refused",
    reason: "schema",
  });
  assert.equal(readFileSync(join(r, "prose", ".active"), "utf8"), '{"level":"max"}');
  assert.equal(deactivate({ root: r }).result, "cleared");
  assert.equal(
    writeProseFlag({
      level: "full",
      ttl: { unit: "block", value: 0 },
      expiresAt: null,
      activatedAt: NOW,
      source: "manual",
    }, { root: r }).ok,
    true,
  );
});

Deno.test("consumeTurn names the flag and what to check when it refuses", () => {
  const r = root();
  mkdirSync(join(r, "prose"), { mode: 0o700 });
  writeFileSync(join(r, "prose", ".active"), "{", { mode: 0o600 });
  assert.deepEqual(consumeTurn({ root: r }), {
    ok: false,
    reason: "bad-json",
    message: `${join(r, "prose", ".active")}: the flag is not valid JSON; run \`prose off\``,
  });
  assert.deepEqual(consume({ root: r }), { ok: false, result: "refused", reason: "bad-json" });
});

Deno.test("compare-first transitions answer without the lock when nothing changes: a held lock does not block them", () => {
  const r = root();
  const config = defaultConfig();
  activate({ ttl: { unit: "block" } }, { root: r, now: NOW, config });
  const before = readFileSync(join(r, "prose", ".active"));
  // A lock of a live process (this one): a transition taking it would wait, then break it once it
  // is 2 s old; a consume with nothing to change never touches it.
  const lock = join(r, "prose", ".lock");
  writeFileSync(lock, `${Deno.pid} feedfacecafebeef\n`, { mode: 0o600 });
  assert.deepEqual(consume({ root: r, now: NOW }), { ok: true, result: "not-turn-scoped" });
  assert.deepEqual(endSession({ root: r, now: NOW }), { ok: true, result: "kept" });
  assert.deepEqual(setLevel("full", { root: r, now: NOW }), { ok: true, result: "unchanged" });
  assert.deepEqual(readFileSync(join(r, "prose", ".active")), before);
  assert.equal(readFileSync(lock, "utf8"), `${Deno.pid} feedfacecafebeef\n`);
  Deno.removeSync(lock);
  assert.equal(deactivate({ root: r }).result, "cleared");
  writeFileSync(lock, `${Deno.pid} feedfacecafebeef\n`, { mode: 0o600 });
  assert.deepEqual(consume({ root: r, now: NOW }), { ok: true, result: "inactive" });
  assert.equal(readFileSync(lock, "utf8"), `${Deno.pid} feedfacecafebeef\n`);
});
