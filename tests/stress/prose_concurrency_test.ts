/**
 * Concurrency and write failures (`references/prose.md#concurrency`, `#flag-io`): concurrent writers leave exactly one
 * writer's payload and no temp file; readers only ever see a whole flag; a failed write keeps the
 * old flag.
 */
import assert from "node:assert/strict";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  baseEnv,
  IS_ROOT,
  lines,
  makeSharedTempDir,
  makeTempDir,
  runToolAsUser,
  runToolAsync,
  runToolWithin,
  skipWithoutUnprivilegedUser,
  TARGET_TAKES_DENO_FLAGS,
  toolArgv,
  UNPRIVILEGED_ID,
} from "../_helpers.ts";
import { flagPath, freshRoot, NOW, out, prose } from "../_prose_fixtures.ts";
import { readProseFlag } from "../../lib/prose/mod.ts";

const WRITERS = 20;

function payload(n: number): string {
  return `{"level":"full","ttl":{"unit":"turn","value":${n}},"expiresAt":null,"activatedAt":${NOW},"source":"manual"}\n`;
}

/**
 * `prose <args>` run until it is not refused `busy`, as the contract tells a caller to
 * (`references/prose.md#concurrency`): the lock's wait is a deadline on the clock, and on a loaded
 * machine N processes taking turns can outlast it. What is asserted is how the turns were taken.
 */
async function takingTurns(args: string[], env: Record<string, string>) {
  for (let attempt = 1;; attempt++) {
    const r = await runToolAsync("prose", args, { env });
    if (
      !/^PROSE: action=\S+ result=refused reason=busy$/.test(lines(r.stdout)[0]) || attempt === 20
    ) {
      return r;
    }
  }
}

Deno.test("20 concurrent `on` runs plus a read loop: whole flags only, one writer's payload, no temp files", async () => {
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
      (_, i) => takingTurns(["on", String(i + 1), "turns", "--local"], env),
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

Deno.test("read-only D → io-error (rc 1), no temp file, old flag intact", () => {
  if (skipWithoutUnprivilegedUser()) return;
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

// Needs root to build a fixture owned by someone else.
Deno.test({
  name: "a flag directory owned by another user is unsafe (foreign-owner) for readers",
  ignore: !IS_ROOT,
}, () => {
  if (skipWithoutUnprivilegedUser()) return;
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

// Needs root to chown the fixture.
Deno.test({
  name: "without --allow-sys, a flag owned by someone else than its directory is foreign-owner",
  ignore: !IS_ROOT || !TARGET_TAKES_DENO_FLAGS,
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

// --- the write lock (issue 14, point 5) ----------------------------------------------------------

Deno.test("15 concurrent consume calls on a 20-turn flag take exactly 15 turns, each reporting its own", async () => {
  const root = freshRoot();
  assert.equal(prose(root, ["on", "20", "turns"]).code, 0);
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  const runs = await Promise.all(
    Array.from({ length: 15 }, () => takingTurns(["consume", "--local"], env)),
  );
  const remaining: number[] = [];
  for (const r of runs) {
    assert.equal(r.code, 0, r.stderr);
    const m = /^PROSE: action=consume result=decremented remaining=([0-9]+)$/.exec(
      lines(r.stdout)[0],
    );
    assert.ok(m, r.stdout);
    remaining.push(Number(m[1]));
  }
  // Every run took its own turn: remaining 19, 18, …, 5, once each.
  assert.deepEqual(remaining.sort((a, b) => b - a), Array.from({ length: 15 }, (_, i) => 19 - i));
  assert.deepEqual(JSON.parse(readFileSync(flagPath(root), "utf8")).ttl, {
    unit: "turn",
    value: 5,
  });
  assert.deepEqual(readdirSync(join(root, "prose")), [".active"], "the lock is gone");
});

Deno.test("a lock left by a writer killed with SIGKILL never blocks the flag", async () => {
  const root = freshRoot();
  assert.equal(prose(root, ["on", "4", "turns"]).code, 0);
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  // Killed while it holds the lock (just before the rename of its write).
  const killed = await runToolAsync("prose", ["consume", "--local"], {
    env: { ...env, CTXKIT_FAULT_POINT: "prose.flag.before-rename" },
  });
  assert.notEqual(killed.code, 0);
  const lock = join(root, "prose", ".lock");
  assert.equal(existsSync(lock), true, "the killed writer left its lock");
  // -A: the holder's pid is gone, so the next writer breaks the lock at once.
  const next = prose(root, ["consume"]);
  assert.equal(next.code, 0, next.stderr);
  assert.equal(out(next)[0], "PROSE: action=consume result=decremented remaining=3");
  assert.equal(existsSync(lock), false);
  // The shebang's grants cannot see /proc: a lock older than 2 s is stale whoever holds it.
  if (!TARGET_TAKES_DENO_FLAGS) return; // a binary runs with -A only
  writeFileSync(lock, `${Deno.pid} 00\n`, { mode: 0o600 });
  const old = new Date(Date.now() - 10_000);
  Deno.utimeSync(lock, old, old);
  const narrow = prose(root, ["consume"], {
    permissions: ["--allow-read", "--allow-write", "--allow-env"],
  });
  assert.equal(narrow.code, 0, narrow.stderr);
  assert.equal(out(narrow)[0], "PROSE: action=consume result=decremented remaining=2");
  assert.equal(existsSync(lock), false);
});

Deno.test("a lock held by a live process: writers give up with code=busy (rc 1), readers never wait", async () => {
  const root = freshRoot();
  assert.equal(prose(root, ["on", "4", "turns"]).code, 0);
  const before = readFileSync(flagPath(root), "utf8");
  const lock = join(root, "prose", ".lock");
  // This test process holds the lock (alive, and the file kept fresh) while the writer waits.
  writeFileSync(lock, `${Deno.pid} 0123456789abcdef\n`, { mode: 0o600 });
  const fresh = setInterval(() => {
    const soon = new Date(Date.now() + 1000); // fresh even if this loop stalls for 3 s
    Deno.utimeSync(lock, soon, soon);
  }, 100);
  try {
    const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
    const writer = runToolAsync("prose", ["consume", "--local"], { env });
    const status = await runToolAsync("prose", ["status", "--local"], { env });
    assert.equal(status.code, 0, status.stderr);
    assert.match(out(status)[0], /^PROSE: state=active .* ttl=turn:4 /);
    const r = await writer;
    assert.equal(r.code, 1, r.stderr);
    assert.equal(lines(r.stdout)[0], "PROSE: action=consume result=refused reason=busy");
    assert.match(
      lines(r.stderr)[0],
      new RegExp(
        `^PROSE-ERROR: code=busy ${lock}: another prose command holds the flag's lock; .* \\(held by pid ${Deno.pid}\\)$`,
      ),
    );
    assert.equal(readFileSync(flagPath(root), "utf8"), before);
  } finally {
    clearInterval(fresh);
  }
});

// --- issue 23: locks that cannot be broken, and a file system whose clock is not ours -----------

/** Run `prose args` as a child that is killed after `capMs` (a cap: a hang fails the test). */
async function proseCapped(
  args: string[],
  env: Record<string, string>,
  capMs = 60_000,
): Promise<{ code: number; stdout: string; stderr: string; killed: boolean }> {
  const r = await runToolWithin(
    "prose",
    args,
    { cwd: makeTempDir("ctxkit-prose-cwd-"), env },
    capMs,
  );
  return { code: r.code, stdout: r.stdout, stderr: r.stderr, killed: r.timedOut };
}

Deno.test("a stale lock that cannot be removed (a directory at D/.lock) ends `refused reason=busy`, not a spin (issue 23.2)", async () => {
  const root = freshRoot();
  assert.equal(prose(root, ["on", "4", "turns"]).code, 0);
  const before = readFileSync(flagPath(root), "utf8");
  const lock = join(root, "prose", ".lock");
  mkdirSync(join(lock, "left-behind"), { recursive: true });
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  for (const args of [["consume"], ["on", "block"]]) {
    const r = await proseCapped([...args, "--local"], env);
    assert.equal(r.killed, false, `${args.join(" ")} hung behind the lock`);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(lines(r.stdout)[0], `PROSE: action=${args[0]} result=refused reason=busy`);
    assert.match(lines(r.stderr)[0], new RegExp(`^PROSE-ERROR: code=busy ${lock}: `));
    assert.equal(lines(r.stderr).at(-1), "❌ FAILED EXIT:1");
  }
  assert.equal(readFileSync(flagPath(root), "utf8"), before);
  assert.equal(existsSync(join(lock, "left-behind")), true, "the directory is left alone");
});

Deno.test("a killed command's lock in a read-only D ends `refused reason=busy` (issue 23.2)", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const shared = makeSharedTempDir("prose-ro-lock-");
  const root = join(shared, "cellm");
  const dir = join(root, "prose");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const old = payload(3);
  writeFileSync(join(dir, ".active"), old, { mode: 0o600 });
  // The lock of a command killed with SIGKILL: its pid is gone.
  writeFileSync(join(dir, ".lock"), "4194305 0123456789abcdef\n", { mode: 0o600 });
  if (IS_ROOT) {
    for (const p of [root, dir, join(dir, ".active"), join(dir, ".lock")]) {
      chownSync(p, UNPRIVILEGED_ID, UNPRIVILEGED_ID);
    }
  }
  chmodSync(dir, 0o500);
  const r = runToolAsUser("prose", ["consume", "--local"], {
    env: { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) },
  });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(lines(r.stdout)[0], "PROSE: action=consume result=refused reason=busy");
  assert.equal(lines(r.stderr).at(-1), "❌ FAILED EXIT:1");
  assert.equal(readFileSync(join(dir, ".active"), "utf8"), old);
});

Deno.test("30 concurrent consumes while the file system stamps every lock 60 s ahead: 30 turns, no conflict (issue 23.9)", async () => {
  const root = freshRoot();
  assert.equal(prose(root, ["on", "40", "turns"]).code, 0);
  const lock = join(root, "prose", ".lock");
  const stop = join(makeTempDir("prose-skew-"), "stop");
  // A separate process plays the NFS server whose clock is 60 s ahead: each new lock file gets
  // a modification time in the future the moment it appears.
  const skewer = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `let last = -1, stamped = 0;
       while (true) {
         try { Deno.statSync(${JSON.stringify(stop)}); break; } catch { /* go on */ }
         try {
           const st = Deno.lstatSync(${JSON.stringify(lock)});
           if (st.ino !== last) {
             const t = new Date(Date.now() + 60_000);
             Deno.utimeSync(${JSON.stringify(lock)}, t, t);
             last = st.ino; stamped++;
           }
         } catch { /* no lock now */ }
       }
       console.log(stamped);`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  let runs;
  try {
    runs = await Promise.all(
      Array.from({ length: 30 }, () => takingTurns(["consume", "--local"], env)),
    );
  } finally {
    writeFileSync(stop, "");
  }
  const stamped = Number(new TextDecoder().decode((await skewer.output()).stdout).trim());
  assert.ok(stamped > 0, "the skewer stamped no lock: the test proved nothing");
  const results = runs.map((r) => lines(r.stdout)[0]);
  assert.deepEqual(
    results.filter((l) => !/^PROSE: action=consume result=decremented remaining=[0-9]+$/.test(l)),
    [],
  );
  assert.equal(JSON.parse(readFileSync(flagPath(root), "utf8")).ttl.value, 10);
});

// --- issue 30: a killed holder's lock is broken at once; a stalled holder's never -----------------

/** The state letter of process `pid` (`T` when stopped), from /proc. */
function processState(pid: number): string {
  return Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1][0];
}

/** Start `prose args` stopped with SIGSTOP at `point`; resolves once it is stopped there. */
async function stoppedAt(
  point: string,
  args: string[],
  env: Record<string, string>,
): Promise<Deno.ChildProcess> {
  const [program, ...argv] = toolArgv("prose");
  const child = new Deno.Command(program, {
    args: [...argv, ...args],
    clearEnv: true,
    env: { ...baseEnv(), ...env, CTXKIT_FAULT_POINT: point, CTXKIT_FAULT_SIGNAL: "SIGSTOP" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  for (const deadline = Date.now() + 60_000; processState(child.pid) !== "T";) {
    if (Date.now() > deadline) throw new Error(`prose ${args.join(" ")} never reached ${point}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return child;
}

Deno.test({
  name:
    "a consume stalled between its check and its rename keeps its lock: no other consume takes the same turn (issue 30.4)",
  ignore: !existsSync("/proc/self"),
}, async () => {
  const root = freshRoot();
  assert.equal(prose(root, ["on", "10", "turns"]).code, 0);
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  // A has read the flag, written its temp file and compared: it stops right before the rename,
  // as a process stalled by swap, a slow NFS server or SIGSTOP does.
  const a = await stoppedAt("prose.flag.before-rename", ["consume", "--local"], env);
  // B runs to its end while A stays stalled, far longer than any age could make A's lock stale.
  const b = await proseCapped(["consume", "--local"], env);
  Deno.kill(a.pid, "SIGCONT");
  const ar = await a.output();
  const dec = new TextDecoder();
  assert.equal(ar.code, 0, dec.decode(ar.stderr));
  assert.equal(
    lines(dec.decode(ar.stdout))[0],
    "PROSE: action=consume result=decremented remaining=9",
  );
  // B never took A's turn: it waited for the live holder and gave up, taking nothing.
  assert.equal(b.code, 1, b.stdout + b.stderr);
  assert.equal(lines(b.stdout)[0], "PROSE: action=consume result=refused reason=busy");
  assert.equal(JSON.parse(readFileSync(flagPath(root), "utf8")).ttl.value, 9);
  // A stall that ends while the other consume still waits: both take their own turn.
  const a2 = await stoppedAt("prose.flag.before-rename", ["consume", "--local"], env);
  const b2 = runToolAsync("prose", ["consume", "--local"], { env });
  Deno.kill(a2.pid, "SIGCONT");
  const a2r = await a2.output();
  const b2r = await b2;
  const got = [lines(dec.decode(a2r.stdout))[0], lines(b2r.stdout)[0]].sort();
  assert.deepEqual(got, [
    "PROSE: action=consume result=decremented remaining=7",
    "PROSE: action=consume result=decremented remaining=8",
  ]);
  assert.equal(JSON.parse(readFileSync(flagPath(root), "utf8")).ttl.value, 7);
  assert.deepEqual(readdirSync(join(root, "prose")), [".active"], "no lock, no temp file left");
});

Deno.test("a killed command's lock never holds session-end, under the shebang's grants (issue 30.1)", async () => {
  if (!TARGET_TAKES_DENO_FLAGS) return; // a binary runs with -A only
  const root = freshRoot();
  assert.equal(prose(root, ["on", "session"]).code, 0);
  const env = { CELLM_DIR: root, CTXKIT_NOW_MS: String(NOW) };
  // Killed with SIGKILL while it holds the lock (just before the rename of its write).
  const killed = await runToolAsync("prose", ["level", "minimal", "--local"], {
    env: { ...env, CTXKIT_FAULT_POINT: "prose.flag.before-rename" },
  });
  assert.notEqual(killed.code, 0);
  const lock = join(root, "prose", ".lock");
  assert.equal(existsSync(lock), true, "the killed command left its lock");
  // The lock is kept looking fresh, as a live holder's would: only the holder being gone can
  // break it (no /proc under these grants, and no age).
  const fresh = setInterval(() => {
    const t = new Date(Date.now() + 1000);
    try {
      Deno.utimeSync(lock, t, t);
    } catch { /* broken */ }
  }, 50);
  try {
    // Asynchronous: the interval above keeps running while session-end waits.
    const r = await runToolAsync("prose", ["session-end", "--local"], {
      env,
      permissions: ["--allow-read", "--allow-write", "--allow-env"],
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(out(r)[0], "PROSE: action=session-end result=cleared");
  } finally {
    clearInterval(fresh);
  }
  assert.equal(existsSync(flagPath(root)), false);
  assert.equal(existsSync(lock), false);
});
