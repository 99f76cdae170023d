/**
 * Least privilege: each bin's shebang names the only permissions it needs. Running a tool with
 * exactly those flags works; taking one away gives a one-line error and exit 2 — never a prompt,
 * never a stack trace.
 */
import assert from "node:assert/strict";
import { readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import {
  git,
  lines,
  makeTempDir,
  REPO,
  type RunResult,
  runTool,
  skipWithoutDenoFlags,
  type Tool,
  writeTree,
} from "./_helpers.ts";

/** The `--allow-*`/`--no-prompt` flags of `bin/<tool>.ts`'s shebang line. */
function shebangFlags(tool: Tool): string[] {
  const first = readFileSync(join(REPO, "bin", `${tool}.ts`), "utf8").split("\n")[0];
  assert.match(first, /^#!\/usr\/bin\/env -S deno run /, `${tool}: shebang`);
  const flags = first.replace(/^#!\/usr\/bin\/env -S deno run /, "").split(" ");
  assert.ok(
    !flags.includes("-A") && !flags.includes("--allow-all"),
    `${tool}: not least privilege`,
  );
  return flags;
}

function assertOneLineFailure(r: RunResult, code: number, pattern: RegExp): void {
  assert.equal(r.code, code, r.stderr);
  const err = lines(r.stderr);
  assert.equal(err.length, 2, r.stderr);
  assert.match(err[0], pattern);
  assert.equal(err[1], `❌ FAILED EXIT:${code}`);
  assert.doesNotMatch(r.stderr, /^\s+at /m, "no stack trace");
}

Deno.test("shebangs: every bin asks for no prompt and no blanket -A", () => {
  assert.deepEqual(shebangFlags("context-scan"), [
    "--no-prompt",
    "--allow-read",
    "--allow-env",
    "--allow-run=git",
  ]);
  for (const tool of ["text-guard", "context-guard"] as const) {
    assert.deepEqual(shebangFlags(tool), [
      "--no-prompt",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run=git",
    ]);
  }
  assert.deepEqual(shebangFlags("prose"), [
    "--no-prompt",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-net=127.0.0.1,localhost,[::1]",
    "--allow-run=git",
  ]);
});

Deno.test("context-guard: a full cycle runs with its shebang permissions only", () => {
  if (skipWithoutDenoFlags()) return;
  const permissions = shebangFlags("context-guard");
  const home = makeTempDir();
  const project = makeTempDir();
  writeTree(project, { "CLAUDE.md": "Use pnpm 9.1.\n" });
  git(project, "init", "-q");
  const env = { HOME: home, CLAUDE_PROJECT_DIR: project };
  const snap = runTool("context-guard", ["snapshot", "CLAUDE.md"], {
    cwd: project,
    env,
    permissions,
  });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = snap.stdout.match(/^RUN_DIR: (.*)$/m)?.[1];
  assert.ok(runDir);
  writeTree(project, { "CLAUDE.md": "Use pnpm.\n" });
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: project,
    env,
    permissions: shebangFlags("text-guard"),
  });
  assert.equal(cp.code, 0, cp.stderr);
  const verify = runTool("context-guard", ["verify", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: project,
    env,
    permissions,
  });
  assert.equal(verify.code, 1, verify.stderr);
  assert.ok(lines(verify.stdout).includes("  - num:9.1"), verify.stdout);
  assert.match(verify.stdout, /^RUN: FAILED - every file of .* is back at its pre-edit bytes$/m);
  assert.equal(readFileSync(join(project, "CLAUDE.md"), "utf8"), "Use pnpm 9.1.\n");
  assert.equal(lines(verify.stderr).at(-1), "❌ FAILED EXIT:1");
});

Deno.test("context-scan and prose run with their shebang permissions only", () => {
  if (skipWithoutDenoFlags()) return;
  const home = makeTempDir();
  const root = makeTempDir();
  writeTree(root, { "CLAUDE.md": "# x\n" });
  const scan = runTool("context-scan", ["--root", root], {
    env: { HOME: home },
    permissions: shebangFlags("context-scan"),
  });
  assert.equal(scan.code, 0, scan.stderr);
  assert.equal(scan.stderr, "✅ EXIT:0\n");
  const env = { HOME: home, CELLM_DIR: join(home, ".cellm") };
  const permissions = shebangFlags("prose");
  const on = runTool("prose", ["on", "2", "turns"], { env, permissions });
  assert.equal(on.code, 0, on.stderr);
  assert.match(on.stdout, /^PROSE: action=on result=activated/m);
  const status = runTool("prose", ["status"], { env, permissions });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^PROSE: state=active level=full /m);
});

Deno.test("a missing permission is one line and exit 2 for every tool", () => {
  if (skipWithoutDenoFlags()) return;
  const home = makeTempDir();
  const project = makeTempDir();
  writeTree(project, { "CLAUDE.md": "Use pnpm 9.1.\n" });
  const env = { HOME: home, CLAUDE_PROJECT_DIR: project };
  const noWrite = ["--no-prompt", "--allow-read", "--allow-env", "--allow-run=git"];
  const snap = runTool("context-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
    cwd: project,
    env,
    permissions: noWrite,
  });
  assertOneLineFailure(snap, 2, /^❌ missing Deno permission: /);
  const tg = runTool("text-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
    cwd: project,
    env,
    permissions: noWrite,
  });
  assertOneLineFailure(tg, 2, /^❌ missing Deno permission: /);
  const scan = runTool("context-scan", ["--root", project], {
    env,
    permissions: ["--no-prompt", "--allow-env", "--allow-run=git"],
  });
  assertOneLineFailure(scan, 2, /^❌ missing Deno permission: /);
  assert.equal(scan.stdout, "");
  const prose = runTool("prose", ["on"], {
    env: { HOME: home },
    permissions: ["--no-prompt", "--allow-read", "--allow-env"],
  });
  assertOneLineFailure(prose, 2, /^PROSE-ERROR: code=permission /);
});

Deno.test("guards under their shebang grants: a path Deno refuses is named, never --allow-all advice", () => {
  if (skipWithoutDenoFlags()) return;
  const home = makeTempDir();
  const project = makeTempDir();
  writeTree(project, { "CLAUDE.md": "Use pnpm 9.1.\n" });
  symlinkSync("/proc/self/environ", join(project, "env.md"));
  git(project, "init", "-q");
  git(project, "add", "CLAUDE.md");
  git(project, "commit", "-qm", "init");
  const env = { HOME: home, CLAUDE_PROJECT_DIR: project };
  const cases: Array<[Tool, string[], Record<string, string>, RegExp]> = [
    ["context-guard", ["snapshot", "env.md"], {}, /^❌ symbolic-link target: env\.md /m],
    [
      "context-guard",
      ["snapshot", "/proc/self/environ"],
      {},
      /^❌ not a file: \/proc\/self\/environ$/m,
    ],
    [
      "context-guard",
      ["snapshot", "--run-dir", "/proc/self/x", "CLAUDE.md"],
      {},
      /^❌ cannot create \/proc\/self: Operation not permitted \(refused by the Deno sandbox\)$/m,
    ],
    [
      "context-guard",
      ["state", "--check", "--out", "/proc/self/environ"],
      {},
      /^❌ cannot check \/proc\/self\/environ: Operation not permitted \(refused by the Deno sandbox\)$/m,
    ],
    ["context-guard", ["snapshot", "CLAUDE.md"], { CLAUDE_CONFIG_DIR: "/dev/null" }, /^❌ /m],
    ["context-guard", ["list"], { CLAUDE_CONFIG_DIR: "/proc/self" }, /^\| Backup /m],
    [
      "text-guard",
      ["snapshot", "--run-dir", "/proc/self/fd/x", "CLAUDE.md"],
      {},
      /^❌ cannot create \/proc\/self\/fd: Operation not permitted \(refused by the Deno sandbox\)$/m,
    ],
  ];
  for (const [tool, args, extra, line] of cases) {
    const r = runTool(tool, args, {
      cwd: project,
      env: { ...env, ...extra },
      permissions: shebangFlags(tool),
    });
    const what = `${tool} ${args.join(" ")}: ${r.stderr}`;
    assert.match(r.stdout + r.stderr, line, what);
    assert.doesNotMatch(r.stderr, /allow-all|internal error|^\s+at /m, what);
    assert.equal(lines(r.stderr).at(-1), r.code === 0 ? "✅ EXIT:0" : `❌ FAILED EXIT:${r.code}`);
    assert.ok(r.code === 0 || r.code === 2, what);
  }
});
