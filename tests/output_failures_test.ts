/**
 * Write failures are failures (`references/output.md#write-failures`): for every tool, a stdout on a
 * full device (`/dev/full`) exits 74 with one error line, a reader that is gone (broken pipe) exits
 * 141 like any shell tool, and a failed exit line on stderr turns a success into 74. Discarded
 * output is not a failure (`references/output.md#discarded-output`): a stdout on `/dev/null`,
 * however it was opened — a shell's `>/dev/null`, Node's `stdio: "ignore"`, Python's
 * `subprocess.DEVNULL`, a closed descriptor the runtime replaced — exits 0. A command that changed
 * files and then could not report leaves them as it would have reported them, so a rerun recovers.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { shellCommand } from "../lib/shell.ts";
import {
  baseEnv,
  git,
  isolatedCommand,
  lines,
  makeTempDir,
  type RunResult,
  runTool,
  type Tool,
  toolArgv,
  writeTree,
} from "./_helpers.ts";

interface Fixture {
  cwd: string;
  env: Record<string, string>;
}

/** A git project with two tracked files, its own HOME and Claude config dir. */
function project(): Fixture {
  const base = makeTempDir("ctxkit-out-");
  const cwd = join(base, "proj");
  writeTree(cwd, {
    "CLAUDE.md": "Use pnpm 9.1 and NEVER push to main.\n",
    "notes.md": "Timeout is 30 seconds.\n",
  });
  git(cwd, "init", "-q");
  git(cwd, "add", "-A");
  git(cwd, "commit", "-qm", "init");
  return {
    cwd,
    env: {
      ...baseEnv(),
      HOME: base,
      CLAUDE_CONFIG_DIR: join(base, ".claude"),
      CLAUDE_PROJECT_DIR: cwd,
      CELLM_DIR: join(base, "cellm"),
      PWD: cwd,
    },
  };
}

/**
 * Run `tool args` under bash with `redirect` applied to the tool alone (e.g. `>/dev/full`, `>&-`).
 * `brokenPipe` instead connects stdout to a pipe whose reader has already gone: the reader closes
 * its end first and only then releases the tool (through a FIFO), so the failure is certain.
 */
function runShell(
  f: Fixture,
  tool: Tool,
  args: string[],
  redirect: string | "brokenPipe",
): RunResult {
  const [program, programArgs] = isolatedCommand(f.env, [
    ...toolArgv(tool),
    ...args,
  ]);
  const command = shellCommand([program, ...programArgs]);
  const fifo = join(makeTempDir("ctxkit-fifo-"), "go");
  const script = redirect === "brokenPipe"
    ? `mkfifo ${shellCommand([fifo])}
{ read -r _ < ${shellCommand([fifo])}; ${command}; echo "rc=$?" >&2; } | { exec 0<&-; echo go > ${
      shellCommand([fifo])
    }; }`
    : `${command} ${redirect}; echo "rc=$?" >&2`;
  const out = new Deno.Command("bash", {
    args: ["-c", script],
    cwd: f.cwd,
    clearEnv: true,
    env: { PATH: f.env.PATH },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  const stderr = lines(dec.decode(out.stderr));
  const rc = stderr.pop()?.match(/^rc=(\d+)$/)?.[1];
  ok(rc !== undefined, `no rc from: ${script}`);
  return {
    code: Number(rc),
    stdout: dec.decode(out.stdout),
    stderr: stderr.map((l) => `${l}\n`).join(""),
    stdoutBytes: out.stdout,
  };
}

/**
 * Node's `stdio: "ignore"` and Python's `subprocess.DEVNULL` give a child a `/dev/null` opened
 * read-write (what a hook runner or CI harness written in either does). The harness makes two runs,
 * each `{ cwd, argv }`: the first with everything discarded, the second with stdout discarded and
 * stderr captured.
 */
const HARNESS = {
  node: `const { spawnSync } = require("node:child_process");
const [a, o] = JSON.parse(process.argv[1]);
const all = spawnSync(a.argv[0], a.argv.slice(1), { cwd: a.cwd, stdio: "ignore" });
const out = spawnSync(o.argv[0], o.argv.slice(1), { cwd: o.cwd, stdio: ["ignore", "ignore", "pipe"] });
const exitLine = out.stderr.toString("utf8").trimEnd().split("\\n").at(-1);
process.stdout.write(JSON.stringify({ discarded: all.status, stdoutOnly: out.status, exitLine }));`,
  python3: `import json, subprocess, sys
a, o = json.loads(sys.argv[1])
d = subprocess.DEVNULL
ra = subprocess.run(a["argv"], cwd=a["cwd"], stdin=d, stdout=d, stderr=d)
ro = subprocess.run(o["argv"], cwd=o["cwd"], stdin=d, stdout=d, stderr=subprocess.PIPE)
line = ro.stderr.decode("utf-8").rstrip("\\n").split("\\n")[-1]
print(json.dumps({"discarded": ra.returncode, "stdoutOnly": ro.returncode, "exitLine": line}))`,
} as const;

/**
 * What the harness saw running `tool` with `args(fixture)` in two fresh fixtures, or `undefined`
 * (after a `SKIP:` line) when its runtime is not installed.
 */
function spawnFrom(
  runtime: keyof typeof HARNESS,
  tool: Tool,
  args: (f: Fixture) => string[],
): { discarded: number; stdoutOnly: number; exitLine: string } | undefined {
  const runs = [project(), project()].map((f) => {
    const [program, programArgs] = isolatedCommand(f.env, [...toolArgv(tool), ...args(f)]);
    return { cwd: f.cwd, argv: [program, ...programArgs] };
  });
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command(runtime, {
      args: [runtime === "node" ? "-e" : "-c", HARNESS[runtime], JSON.stringify(runs)],
      clearEnv: true,
      env: { PATH: baseEnv().PATH, HOME: baseEnv().HOME },
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    console.log(`SKIP: no ${runtime} on PATH to spawn the tool from`);
    return undefined;
  }
  const dec = new TextDecoder();
  strictEqual(out.code, 0, dec.decode(out.stderr));
  return JSON.parse(dec.decode(out.stdout));
}

/** One stdout-printing command per tool. */
const COMMANDS: Array<{ tool: Tool; args: (f: Fixture) => string[] }> = [
  { tool: "context-scan", args: (f) => ["--root", f.cwd] },
  { tool: "context-guard", args: () => ["snapshot", "CLAUDE.md"] },
  { tool: "context-guard", args: () => ["list"] },
  {
    tool: "text-guard",
    args: (f) => ["snapshot", "--run-dir", join(f.cwd, "..", "run"), "notes.md"],
  },
  { tool: "prose", args: () => ["status", "--local"] },
];

for (const { tool, args } of COMMANDS) {
  const name = `${tool} ${args(project()).join(" ").replace(/\/\S+/g, "…")}`;

  Deno.test(`${name}: stdout on /dev/full exits 74 with one error line`, () => {
    const r = runShell(project(), tool, args(project()), ">/dev/full");
    strictEqual(r.code, 74, r.stderr);
    deepStrictEqual(lines(r.stderr), [
      "❌ cannot write stdout: No space left on device",
      "❌ FAILED EXIT:74",
    ]);
  });

  Deno.test(`${name}: a shell's >/dev/null and a closed stdout discard the output, exit 0`, () => {
    // A stdout closed at start-up is /dev/null by the time the tool runs: the runtime put one in
    // its place, and nothing the tool can see tells it from a parent's own /dev/null.
    for (const redirect of [">/dev/null", "1<>/dev/null", ">&-"]) {
      const r = runShell(project(), tool, args(project()), redirect);
      strictEqual(r.code, 0, `${redirect}: ${r.stderr}`);
      deepStrictEqual(lines(r.stderr).at(-1), "✅ EXIT:0", redirect);
    }
  });

  Deno.test(`${name}: spawned from Node with stdio "ignore" → exit 0`, () => {
    const r = spawnFrom("node", tool, args);
    if (r === undefined) return;
    deepStrictEqual(r, { discarded: 0, stdoutOnly: 0, exitLine: "✅ EXIT:0" });
  });

  Deno.test(`${name}: spawned from Python with subprocess.DEVNULL → exit 0`, () => {
    const r = spawnFrom("python3", tool, args);
    if (r === undefined) return;
    deepStrictEqual(r, { discarded: 0, stdoutOnly: 0, exitLine: "✅ EXIT:0" });
  });

  Deno.test(`${name}: a broken pipe exits 141 quietly`, () => {
    const f = project();
    const r = runShell(f, tool, args(f), "brokenPipe");
    strictEqual(r.code, 141, r.stderr);
    deepStrictEqual(lines(r.stderr), ["❌ FAILED EXIT:141"]);
  });

  Deno.test(`${name}: stderr on /dev/full turns success into exit 74`, () => {
    const f = project();
    const r = runShell(f, tool, args(f), "2>/dev/full");
    strictEqual(r.code, 74);
  });
}

function guard(f: Fixture, tool: Tool, args: string[]): RunResult {
  return runTool(tool, args, { cwd: f.cwd, env: f.env });
}

Deno.test("context-guard snapshot > /dev/full writes no run; the rerun snapshots as usual", () => {
  const f = project();
  strictEqual(runShell(f, "context-guard", ["snapshot", "CLAUDE.md"], ">/dev/full").code, 74);
  deepStrictEqual(lines(guard(f, "context-guard", ["list"]).stdout).length, 2, "header only");
  const again = guard(f, "context-guard", ["snapshot", "CLAUDE.md"]);
  strictEqual(again.code, 0, again.stderr);
  strictEqual(lines(guard(f, "context-guard", ["list"]).stdout).length, 3);
});

Deno.test("context-guard restore > /dev/full leaves every file whole; the rerun finishes it", () => {
  const f = project();
  const original = {
    "CLAUDE.md": readFileSync(join(f.cwd, "CLAUDE.md"), "utf8"),
    "notes.md": readFileSync(join(f.cwd, "notes.md"), "utf8"),
  };
  const snap = guard(f, "context-guard", ["snapshot", "CLAUDE.md", "notes.md"]);
  strictEqual(snap.code, 0, snap.stderr);
  const runDir = snap.stdout.match(/^RUN_DIR: (.*)$/m)![1];
  const drafts = { "CLAUDE.md": "Use pnpm.\n", "notes.md": "Timeout.\n" };
  for (const [rel, body] of Object.entries(drafts)) writeFileSync(join(f.cwd, rel), body);
  strictEqual(
    guard(f, "text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md", "notes.md"]).code,
    0,
  );

  const failed = runShell(f, "context-guard", ["restore", "last"], ">/dev/full");
  strictEqual(failed.code, 74, failed.stderr);
  for (const rel of ["CLAUDE.md", "notes.md"] as const) {
    const now = readFileSync(join(f.cwd, rel), "utf8");
    ok(now === original[rel] || now === drafts[rel], `${rel} is whole: ${JSON.stringify(now)}`);
  }
  ok(guard(f, "context-guard", ["list"]).stdout.includes(runDir.split("/").at(-1)!), "run kept");

  const rerun = guard(f, "context-guard", ["restore", "last"]);
  strictEqual(rerun.code, 0, rerun.stderr);
  ok(/^RESTORE_VERIFIED: /m.test(rerun.stdout), rerun.stdout);
  for (const rel of ["CLAUDE.md", "notes.md"] as const) {
    strictEqual(readFileSync(join(f.cwd, rel), "utf8"), original[rel]);
  }
});

Deno.test("prose on > /dev/full: the flag it could not report is on; status shows it", () => {
  const f = project();
  strictEqual(runShell(f, "prose", ["on", "--local"], ">/dev/full").code, 74);
  const status = runTool("prose", ["status", "--local"], { cwd: f.cwd, env: f.env });
  strictEqual(status.code, 0, status.stderr);
  ok(/^PROSE: state=active /m.test(status.stdout), status.stdout);
});
