/**
 * Issue 29, items 13 and 8 (`references/context-guard.md#no-write-through-a-link`,
 * `#the-token-gate`): a FIFO put at a target between the guard's last look at it and its open never
 * blocks `verify`, and a rename-save landing there is gated or named in one line. The window is
 * opened on purpose, not raced for: a first run under `strace` counts the looks (`statx` by path)
 * before the target's open; a second run is stopped by `strace` right after the last of them
 * (SIGSTOP injected into that call), the test swaps a FIFO in while it is stopped, then lets it go
 * on. An open that waits for a writer never ends (the test's deadline is a failure bound, never a
 * wait).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import {
  baseEnv,
  type BoundedRun,
  isolatedCommand,
  makeTempDir,
  outputWithin,
  toolArgv,
} from "./_helpers.ts";
import {
  assertGatedOrChangedWhileReading,
  errLines,
  snapshottedProject,
  straceUnavailable,
  until,
} from "./_guard_fixtures.ts";

/** The rules every version of CLAUDE.md here holds. */
const RULES = "# Rules\nUse Node 20.11; NEVER skip review.\n";

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

/**
 * Run `context-guard verify` of a snapshotted CLAUDE.md, stopped by `strace` right after its last
 * look at the target; make `change` there while it is stopped, then let it go on. `undefined`
 * (after a SKIP line) where strace cannot trace.
 */
async function changedAfterLastLook(
  change: (target: string) => void,
): Promise<BoundedRun | undefined> {
  const why = straceUnavailable();
  if (why !== undefined) return void console.log(`SKIP: ${why}`);
  const p = snapshottedProject({ "CLAUDE.md": RULES });
  const target = `${p.proj}/CLAUDE.md`;
  const env = { ...baseEnv(), PWD: p.proj, ...p.env };
  const verify = [...toolArgv("context-guard"), "verify", "--run-dir", p.runDir, "CLAUDE.md"];
  const logs = makeTempDir("ctxkit-window-");

  // 1. How many looks come before the open (whatever the implementation does).
  const [program, args] = isolatedCommand(env, [...straceOn(target, `${logs}/count`), ...verify]);
  const counted = spawnSync(program, args, { cwd: p.proj, encoding: "utf8" });
  assert.equal(counted.status, 0, counted.stdout + counted.stderr);
  const looks = looksBeforeOpen(`${logs}/count`, target);
  assert.ok(looks > 0, "verify opened the target without a look: no window to test");

  // 2. Stopped right after the last look; the change is made; it goes on.
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
  const stopped = () => existsSync(log) && readFileSync(log, "utf8").includes("stopped by SIGSTOP");
  await until(stopped, "it was stopped after its last look", child);
  const verifier = Number(/^(\d+) /.exec(readFileSync(log, "utf8"))![1]);
  change(target);
  Deno.kill(verifier, "SIGCONT");

  return await outputWithin(child, DEADLINE_MS, [verifier]);
}

Deno.test("item 13: a FIFO put at the target between verify's last look and its open is refused in one line, never waited on", async () => {
  const r = await changedAfterLastLook((target) => {
    renameSync(target, `${target}.saved`);
    assert.equal(spawnSync("mkfifo", [target]).status, 0, "mkfifo");
  });
  if (r === undefined) return;
  assert.ok(!r.timedOut, "verify waited on the FIFO for a writer (killed at the deadline)");
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.deepEqual(errLines(r), ["❌ cannot read CLAUDE.md: not a regular file"]);
});

Deno.test("item 8: a rename-save between verify's last look and its open: a gate result or one line naming the file, never an internal error", async () => {
  const r = await changedAfterLastLook((target) => {
    writeFileSync(`${target}.swp`, RULES);
    renameSync(`${target}.swp`, target);
  });
  if (r === undefined) return;
  assert.ok(!r.timedOut, "verify did not end");
  assertGatedOrChangedWhileReading(r);
});
