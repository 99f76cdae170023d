/**
 * Issue 29, "false lines" (items 4–7 and 9): every line the guard prints is true —
 * `verify-deleted` never proves against a damaged copy, an undo always knows about a state file
 * its run may have written, a failing `git status` is named as such, a failed `.gitignore` update
 * names `.gitignore` and leaves no half run, and a working directory or `HOME` Deno cannot name is
 * one line, exit 2 (`references/context-guard.md`).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import {
  baseEnv,
  git,
  isolatedCommand,
  makeTempDir,
  runTool,
  toolArgv,
  writeTree,
} from "./_helpers.ts";
import {
  errLines,
  exampleProject,
  outLines,
  read,
  runDirOf,
  treeState,
} from "./_guard_fixtures.ts";

Deno.test("item 4: verify-deleted refuses a copy that no longer matches its manifest hash: nothing proven, nothing written", () => {
  const p = exampleProject();
  const cg = (args: string[]) => runTool("context-guard", args, { cwd: p.proj, env: p.env });
  const snap = cg(["snapshot", "CLAUDE.md", ".claude/rules/style.md"]);
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  rmSync(`${p.proj}/.claude/rules/style.md`);
  writeFileSync(`${runDir}/orig/.claude/rules/style.md`, ""); // emptied: no token to prove
  const state = () => [...treeState(`${p.home}/.claude`), ...treeState(p.proj)];
  const before = state();
  const r = cg(["verify-deleted", "--survivor", "CLAUDE.md", ".claude/rules/style.md"]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.equal(r.stdout, "");
  assert.deepEqual(errLines(r), [
    "❌ SNAPSHOT CHECKSUM MISMATCH: .claude/rules/style.md",
    `RUN: FAILED - snapshot incomplete or damaged; nothing verified, current bytes preserved (${runDir})`,
  ]);
  assert.deepEqual(state(), before, "nothing written (no draft record either)");
});

/** Two valid context-scan documents. */
function scans(dir: string): { before: string; after: string } {
  const doc = (tokens: number) =>
    JSON.stringify({
      scan_issues: [],
      files: [{ path: "CLAUDE.md", tokens }],
      totals: { grand: { tokens } },
    });
  writeFileSync(`${dir}/before.json`, doc(100));
  writeFileSync(`${dir}/after.json`, doc(60));
  return { before: `${dir}/before.json`, after: `${dir}/after.json` };
}

for (const existed of [false, true]) {
  Deno.test(
    `item 5: state killed at any rename, then a rollback: the state file is as the run found it (${
      existed ? "it existed" : "none before"
    })`,
    () => {
      let kills = 0;
      for (let hit = 1; hit < 10; hit++) {
        const p = exampleProject();
        const cg = (args: string[], env: Record<string, string> = {}) =>
          runTool("context-guard", args, { cwd: p.proj, env: { ...p.env, ...env } });
        const statePath = `${p.proj}/.claude/brewtools/context-slim/state.json`;
        if (existed) writeTree(p.proj, { ".claude/brewtools/context-slim/state.json": "old\n" });
        const snap = cg(["snapshot", "CLAUDE.md"]);
        assert.equal(snap.code, 0, snap.stderr);
        const runDir = runDirOf(snap.stdout);
        const s = scans(p.base);
        const args = ["state", "--mode", "slim", "--before", s.before, "--after", s.after];
        const killed = cg(args, { CTXKIT_FAULT_POINT: `atomic.before-rename:${hit}` });
        if (killed.code === 0) break; // past the last rename: every kill point was tried
        kills++;
        // Killed by the fault point (SIGKILL): runTool reports a signal as 128, no exit line.
        assert.equal(killed.code, 128, `state at rename ${hit}: ${killed.stderr}`);
        const rb = cg(["rollback"]);
        assert.equal(rb.code, 0, rb.stdout + rb.stderr);
        const out = outLines(rb);
        assert.equal(out.at(-1), "ROLLBACK_RESULT: 1 layer(s), ok");
        assert.ok(
          out.includes(`ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`),
          rb.stdout,
        );
        assert.deepEqual(errLines(rb), [], `kill at rename ${hit}`);
        if (existed) {
          assert.equal(read(statePath), "old\n", `kill at rename ${hit}`);
        } else {
          assert.equal(existsSync(statePath), false, `kill at rename ${hit}: ${rb.stdout}`);
        }
        const check = cg(["state", "--check"]);
        assert.deepEqual(outLines(check), [
          `STATE: ${existed ? "present" : "absent"} ${statePath}`,
        ]);
        // A STATE: line is printed exactly when the rollback changed the state file.
        const stateLines = out.filter((l) => l.startsWith("STATE: "));
        assert.ok(stateLines.length <= 1, rb.stdout);
      }
      assert.ok(kills >= 2, `only ${kills} kill points`);
    },
  );
}

Deno.test("item 6: a git status that fails (a full disk) is named as git failing, exit 3, nothing written", () => {
  const base = makeTempDir("ctxkit-fullgit-");
  const home = `${base}/home`;
  const small = `${base}/small`;
  // A private mount namespace with a tiny tmpfs holding the repository; the disk is filled after
  // the index goes stale (so git status must write index.lock).
  const script = `
set -e
mkdir -p "$SMALL"
mount -t tmpfs -o size=400k tmpfs "$SMALL"
cd "$SMALL"
git init -q p && cd p
printf 'rules NEVER 1\\n' > CLAUDE.md
git add CLAUDE.md && git commit -qm init
touch -d '2001-01-01' CLAUDE.md
dd if=/dev/zero of="$SMALL/fill" bs=4k 2>/dev/null || true
exec "$@"
`;
  const env = { ...baseEnv(), HOME: home, SMALL: small, CLAUDE_PROJECT_DIR: `${small}/p` };
  const [program, args] = isolatedCommand(env, [
    "unshare",
    "-m",
    "sh",
    "-c",
    script,
    "sh",
    ...toolArgv("context-guard"),
    "snapshot",
    "CLAUDE.md",
  ]);
  const r = spawnSync(program, args, { cwd: base, encoding: "utf8" });
  if (r.status !== 0 && /unshare|mount/.test(r.stderr) && !r.stderr.includes("EXIT")) {
    console.log(`SKIP: cannot mount a tmpfs in a private mount namespace: ${r.stderr.trim()}`);
    return;
  }
  const result = {
    code: r.status ?? 128,
    stdout: r.stdout,
    stderr: r.stderr,
    stdoutBytes: new Uint8Array(),
  };
  assert.equal(result.code, 3, r.stdout + r.stderr);
  const err = errLines(result);
  assert.equal(err.length, 2, r.stderr);
  assert.match(
    err[0],
    new RegExp(
      `^❌ git cannot answer for ${small}/p: fatal: .*index\\.lock.* - refusing to rewrite in place unchecked\\.$`,
    ),
  );
  assert.equal(
    err[1],
    `   Make git accept the repository (for another user's: git config --global --add safe.directory ${small}/p), or re-run with --allow-dirty.`,
  );
  assert.ok(!existsSync(`${home}/.claude/backups`), "nothing written");
});

Deno.test("item 7: a .gitignore that cannot be updated (immutable) is named, the snapshot's summary printed, and no half run is left", () => {
  const p = exampleProject();
  writeFileSync(`${p.proj}/.gitignore`, "node_modules/\n");
  git(p.proj, "add", ".gitignore");
  git(p.proj, "commit", "-qm", "ignore");
  const chattr = spawnSync("chattr", ["+i", `${p.proj}/.gitignore`], { encoding: "utf8" });
  if (chattr.status !== 0) {
    console.log(`SKIP: chattr +i is not available here: ${chattr.stderr.trim()}`);
    return;
  }
  try {
    const r = runTool("context-guard", ["snapshot", "CLAUDE.md"], { cwd: p.proj, env: p.env });
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.deepEqual(errLines(r), [
      `❌ cannot update ${p.proj}/.gitignore: Operation not permitted`,
      "❌ snapshot failed (text-guard exit 2)",
    ]);
    assert.ok(!r.stdout.includes("RUN_DIR:"), r.stdout);
    const runs = existsSync(p.backups) ? readdirSync(p.backups) : [];
    assert.deepEqual(runs, [], "no half run left in the backup root");
    // text-guard's own snapshot: the same line, no run dir under .claude/reports.
    const tg = runTool("text-guard", ["snapshot", "CLAUDE.md"], { cwd: p.proj, env: p.env });
    assert.equal(tg.code, 2, tg.stdout + tg.stderr);
    assert.deepEqual(errLines(tg), [
      `❌ cannot update ${p.proj}/.gitignore: Operation not permitted`,
    ]);
    const reports = `${p.proj}/.claude/reports`;
    assert.deepEqual(existsSync(reports) ? readdirSync(reports) : [], []);
    assert.deepEqual(readdirSync(p.proj).filter((n) => n.includes("ctxkit-tmp")), []);
    assert.equal(read(`${p.proj}/.gitignore`), "node_modules/\n");
  } finally {
    spawnSync("chattr", ["-i", `${p.proj}/.gitignore`]);
  }
});

/**
 * Run `tool args` with the working directory and/or `HOME` set to a name that is not valid UTF-8
 * (made by the shell: JavaScript strings cannot hold such a name).
 */
function runWithBadNames(
  tool: "context-guard" | "text-guard",
  args: string[],
  opts: { base: string; badCwd: boolean; badHome: boolean; env?: Record<string, string> },
) {
  const env: Record<string, string> = { ...baseEnv(), BASE: opts.base, ...opts.env };
  delete env.PWD;
  const script = `
set -e
bad="$(printf '%s/bad\\377' "$BASE")"
mkdir -p "$bad/.claude/orig"
printf 'rules NEVER 1\\n' > "$bad/CLAUDE.md"
${opts.badHome ? 'export HOME="$bad"' : ""}
${opts.badCwd ? 'cd "$bad"' : 'cd "$BASE"'}
exec "$@"
`;
  const [program, programArgs] = isolatedCommand(env, [
    "sh",
    "-c",
    script,
    "sh",
    ...toolArgv(tool),
    ...args,
  ]);
  const r = spawnSync(program, programArgs, { cwd: opts.base, encoding: "utf8" });
  return {
    code: r.status ?? 128,
    stdout: r.stdout,
    stderr: r.stderr,
    stdoutBytes: new Uint8Array(),
  };
}

Deno.test("item 9: a working directory Deno cannot name (not UTF-8) is one line, exit 2, never an internal error", () => {
  const cwdLine = "❌ cannot use the working directory: its path is not valid UTF-8";
  for (
    const [tool, args] of [
      ["context-guard", ["verify", "CLAUDE.md"]],
      ["context-guard", ["restore"]],
      ["context-guard", ["state", "--check"]],
      ["text-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"]],
      ["text-guard", ["verify", "--run-dir", ".claude", "CLAUDE.md"]],
    ] as const
  ) {
    const base = makeTempDir("ctxkit-badcwd-");
    const r = runWithBadNames(tool, [...args], {
      base,
      badCwd: true,
      badHome: false,
      env: { HOME: `${base}/home` },
    });
    assert.equal(r.code, 2, `${tool} ${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.deepEqual(errLines(r), [cwdLine], `${tool} ${args.join(" ")}`);
  }
});

Deno.test("item 9: a HOME that is not UTF-8 is one line naming HOME, exit 2; with CLAUDE_CONFIG_DIR set it is not needed", () => {
  for (const args of [["verify", "CLAUDE.md"], ["restore"], ["state", "--check"], ["list"]]) {
    const base = makeTempDir("ctxkit-badhome-");
    const r = runWithBadNames("context-guard", args, { base, badCwd: false, badHome: true });
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.deepEqual(errLines(r), ["❌ HOME is not valid UTF-8"], args.join(" "));
  }
  const base = makeTempDir("ctxkit-badhome-");
  const r = runWithBadNames("context-guard", ["state", "--check"], {
    base,
    badCwd: false,
    badHome: true,
    env: { CLAUDE_CONFIG_DIR: `${base}/config`, CLAUDE_PROJECT_DIR: `${base}/proj` },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(outLines(r), [
    `STATE: absent ${base}/proj/.claude/brewtools/context-slim/state.json`,
  ]);
});
