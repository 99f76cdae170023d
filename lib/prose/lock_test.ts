import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../../tests/_helpers.ts";
import { LockBusy, withFlagLock } from "./lock.ts";

Deno.test("withFlagLock: runs the function holding D/.lock, then removes it", () => {
  const dir = makeTempDir("prose-lock-");
  const inside = withFlagLock(dir, () => readdirSync(dir));
  assert.deepEqual(inside, [".lock"]);
  assert.deepEqual(readdirSync(dir), []);
  // Re-entrant: a transition that calls another one does not wait for itself.
  assert.equal(withFlagLock(dir, () => withFlagLock(dir, () => 7)), 7);
  assert.throws(() =>
    withFlagLock(dir, () => {
      throw new Error("boom");
    }), /boom/);
  assert.deepEqual(readdirSync(dir), [], "released after a throw too");
});

Deno.test("withFlagLock: a fresh lock of a live process is busy; a stale one is broken", () => {
  const dir = makeTempDir("prose-lock-");
  const lock = join(dir, ".lock");
  writeFileSync(lock, `${Deno.pid} abcd\n`);
  // This very process is alive and the file is fresh (another process would see it so).
  const busy = withFlagLock(dir, () => "ran", { waitMs: 50, staleMs: 60_000 });
  assert.ok(busy instanceof LockBusy);
  assert.deepEqual([busy.path, busy.pid], [lock, Deno.pid]);
  assert.equal(existsSync(lock), true, "a busy lock is left alone");
  // Seen unchanged for staleMs by the waiter: stale (the file's age is never asked).
  assert.equal(withFlagLock(dir, () => "ran", { waitMs: 5000, staleMs: 100 }), "ran");
  assert.equal(existsSync(lock), false);
});

Deno.test({
  name: "withFlagLock: the lock of a process that is gone is broken at once (Linux /proc)",
  ignore: !existsSync("/proc/self"),
}, () => {
  const dir = makeTempDir("prose-lock-");
  // A pid that does not exist (the highest Linux allows, plus one, is never a live process).
  writeFileSync(join(dir, ".lock"), "4194305 ab\n");
  assert.equal(withFlagLock(dir, () => "ran", { waitMs: 0, staleMs: 60_000 }), "ran");
});

Deno.test("withFlagLock: a directory it cannot write is not locked (the guarded write fails alike)", () => {
  assert.equal(withFlagLock("/nonexistent-dir-for-lock", () => "ran"), "ran");
});

// --- issue 23: locks that cannot be broken, and clocks that disagree -----------------------------

Deno.test("withFlagLock: a stale lock that cannot be removed ends busy at the deadline, never a spin (issue 23.2)", () => {
  const dir = makeTempDir("prose-lock-");
  // A directory at the lock's path: not removable (it is not empty), and it has no pid.
  mkdirSync(join(dir, ".lock", "inside"), { recursive: true });
  const old = new Date(Date.now() - 120_000);
  Deno.utimeSync(join(dir, ".lock"), old, old);
  const busy = withFlagLock(dir, () => "ran", { waitMs: 300, staleMs: 50 });
  assert.ok(busy instanceof LockBusy, "busy, not run and not a hang");
  assert.deepEqual([busy.path, busy.pid], [join(dir, ".lock"), null]);
  assert.equal(existsSync(join(dir, ".lock", "inside")), true, "left as it was");
});

Deno.test("withFlagLock: a live holder's lock stamped by a clock far from ours is not stale (issue 23.9)", () => {
  const dir = makeTempDir("prose-lock-");
  const lock = join(dir, ".lock");
  writeFileSync(lock, `${Deno.pid} abcd\n`);
  // The file system's clock 30 s ahead of ours (an NFS home), then 30 s behind.
  for (const skew of [30_000, -30_000]) {
    const stamp = new Date(Date.now() + skew);
    Deno.utimeSync(lock, stamp, stamp);
    const busy = withFlagLock(dir, () => "ran", { waitMs: 50, staleMs: 2000 });
    assert.ok(busy instanceof LockBusy, `skew ${skew}: a live lock was broken`);
    assert.equal(existsSync(lock), true);
  }
  // Seen unchanged for staleMs on the waiter's own clock, whatever its stamp: stale.
  assert.equal(withFlagLock(dir, () => "ran", { waitMs: 5000, staleMs: 100 }), "ran");
  assert.equal(existsSync(lock), false);
});

// --- issue 30: the holder's OS lock tells a live holder from a dead one --------------------------

Deno.test({
  name:
    "withFlagLock: a live holder's lock is never stale, however long it is held; a killed holder's is broken at once (issue 30.1, 30.4)",
  ignore: Deno.build.os === "windows",
}, async () => {
  const dir = makeTempDir("prose-lock-");
  const lockModule = new URL("./lock.ts", import.meta.url).href;
  // A holder in another process: it takes the lock and stays inside it until killed.
  const holder = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { withFlagLock } from ${JSON.stringify(lockModule)};
       withFlagLock(${JSON.stringify(dir)}, () => {
         console.log("held");
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
       });`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = holder.stdout.getReader();
  assert.match(new TextDecoder().decode((await reader.read()).value), /held/);
  reader.releaseLock();
  const lock = join(dir, ".lock");
  assert.match(Deno.readTextFileSync(lock), new RegExp(`^${holder.pid} [0-9a-f]+ flock\\n$`));
  // Alive: seen unchanged far longer than staleMs, and still not broken.
  const busy = withFlagLock(dir, () => "ran", { waitMs: 300, staleMs: 10 });
  assert.ok(busy instanceof LockBusy, "a live holder's lock was broken");
  assert.equal(busy.pid, holder.pid);
  holder.kill("SIGKILL");
  await holder.status;
  await holder.stdout.cancel().catch(() => {});
  // Gone: broken at once, without waiting for any age.
  assert.equal(withFlagLock(dir, () => "ran", { waitMs: 0, staleMs: 60_000 }), "ran");
  assert.equal(existsSync(lock), false);
});
