/**
 * Issue 29, item 13 (`references/context-guard.md#no-write-through-a-link`): a FIFO put at a
 * target between the guard's last look at it and its open never blocks `verify`. The window is
 * opened on purpose, not raced for: a first run under `strace` counts the looks (`statx` by path)
 * before the target's open; a second run is stopped by `strace` right after the last of them
 * (SIGSTOP injected into that call), the test swaps a FIFO in while it is stopped, then lets it go
 * on. An open that waits for a writer never ends (the test's deadline is a failure bound, never a
 * wait); the guard must refuse the FIFO in one line.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync } from "node:fs";
import { baseEnv, isolatedCommand, makeTempDir, toolArgv } from "./_helpers.ts";
import { snapshottedProject, straceUnavailable, until } from "./_guard_fixtures.ts";

/** Far above what a verify of a two-line file takes on a busy machine; a blocked open never ends. */
const DEADLINE_MS = 120_000;

/** The `strace` words that trace only the calls naming `path`, logged to `log`. */
const straceOn = (path: string, log: string, ...more: string[]) => [
  "strace",
  "-f",
  "-qq",
  "-P",
  path,
  "-e",
  "trace=statx,openat",
  ...more,
  "-o",
  log,
];

/** The looks (`statx` by path) at `path` before its first open, as `strace` logged them. */
function looksBeforeOpen(log: string, path: string): number {
  let looks = 0;
  for (const line of readFileSync(log, "utf8").split("\n")) {
    if (line.includes(`openat(AT_FDCWD, ${JSON.stringify(path)}`)) return looks;
    if (line.includes(`statx(AT_FDCWD, ${JSON.stringify(path)}`)) looks++;
  }
  throw new Error(`${path} was never opened:\n${readFileSync(log, "utf8")}`);
}

Deno.test("item 13: a FIFO put at the target between verify's last look and its open is refused in one line, never waited on", async () => {
  const why = straceUnavailable();
  if (why !== undefined) return console.log(`SKIP: ${why}`);
  const p = snapshottedProject({ "CLAUDE.md": "# Rules\nUse Node 20.11; NEVER skip review.\n" });
  const target = `${p.proj}/CLAUDE.md`;
  const env = { ...baseEnv(), PWD: p.proj, ...p.env };
  const verify = [...toolArgv("context-guard"), "verify", "--run-dir", p.runDir, "CLAUDE.md"];
  const logs = makeTempDir("ctxkit-fifo-");

  // 1. How many looks come before the open (whatever the implementation does).
  const [program, args] = isolatedCommand(env, [...straceOn(target, `${logs}/count`), ...verify]);
  const counted = spawnSync(program, args, { cwd: p.proj, encoding: "utf8" });
  assert.equal(counted.status, 0, counted.stdout + counted.stderr);
  const looks = looksBeforeOpen(`${logs}/count`, target);
  assert.ok(looks > 0, "verify opened the target without a look: no window to test");

  // 2. Stopped right after the last look; a FIFO is put there; it goes on.
  const log = `${logs}/stopped`;
  const inject = ["-e", `inject=statx:signal=SIGSTOP:when=${looks}`];
  const [program2, args2] = isolatedCommand(env, [...straceOn(target, log, ...inject), ...verify]);
  const child = new Deno.Command(program2, {
    args: args2,
    cwd: p.proj,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  const stopped = () => existsSync(log) && readFileSync(log, "utf8").includes("stopped by SIGSTOP");
  await until(stopped, "it was stopped after its last look", child);
  const verifier = Number(/^(\d+) /.exec(readFileSync(log, "utf8"))![1]);
  renameSync(target, `${target}.saved`);
  assert.equal(spawnSync("mkfifo", [target]).status, 0, "mkfifo");
  Deno.kill(verifier, "SIGCONT");

  let blocked = false;
  const timer = setTimeout(() => {
    blocked = true;
    for (const pid of [verifier, child.pid]) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
  }, DEADLINE_MS);
  const r = await output;
  clearTimeout(timer);
  assert.ok(!blocked, "verify waited on the FIFO for a writer (killed at the deadline)");
  const decoder = new TextDecoder();
  const stderr = decoder.decode(r.stderr);
  assert.equal(r.code, 2, stderr);
  assert.equal(decoder.decode(r.stdout), "");
  assert.deepEqual(stderr.trimEnd().split("\n"), [
    "❌ cannot read CLAUDE.md: not a regular file",
    "❌ FAILED EXIT:2",
  ]);
});
