/**
 * Issue 29, item 14 (`references/reliability.md#atomic-writes`): every directory the guard creates
 * is fsynced into its parent before the line that reports success — the first snapshot's
 * `~/.claude` and `backups/`, the run dir and its subdirectories, text-guard's `.claude/reports/`,
 * `state`'s `.claude/brewtools/context-slim` and the run's `state/`, checkpoint's `draft/`
 * directories and the directories a restore makes again. Observed with `strace` on the real
 * command: each successful `mkdir` must be followed by an `fsync` of its parent directory that
 * completes before the success line is written.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { baseEnv, isolatedCommand, makeTempDir, toolArgv, writeTree } from "./_helpers.ts";
import { snapshottedProject, straceUnavailable } from "./_guard_fixtures.ts";
import { dirname } from "../lib/paths.ts";

interface Trace {
  /** Directories made, with the index of the line that made them. */
  made: { path: string; at: number }[];
  /** Completed fsyncs: the path synced and the index of the line that completed it. */
  synced: { path: string; at: number }[];
  /** The index of the write of each stdout line (by its start). */
  printed: { text: string; at: number }[];
}

/** Decode strace's C-style escapes in a quoted string. */
function unescape(s: string): string {
  return s.replace(/\\(x[0-9a-f]{2}|[0-7]{1,3}|.)/g, (_, e: string) => {
    if (e[0] === "x") return String.fromCharCode(parseInt(e.slice(1), 16));
    if (/^[0-7]+$/.test(e)) return String.fromCharCode(parseInt(e, 8));
    return ({ n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\" } as Record<string, string>)[e] ?? e;
  });
}

/** Parse `strace -f -y -e trace=mkdir,mkdirat,fsync,fdatasync,write` output of a run in `cwd`. */
function parseTrace(log: string, cwd: string): Trace {
  const trace: Trace = { made: [], synced: [], printed: [] };
  const pending = new Map<string, string>(); // pid → the path of an unfinished fsync
  log.split("\n").forEach((line, at) => {
    const m = /^(\d+)\s+(.*)$/.exec(line);
    if (m === null) return;
    const [, pid, call] = m;
    let x = /^mkdir(?:at)?\((?:[^,]*, )?"((?:[^"\\]|\\.)*)", [0-7]+\)\s+= 0/.exec(call);
    if (x !== null) {
      const p = unescape(x[1]);
      trace.made.push({ path: p.startsWith("/") ? p : `${cwd}/${p}`, at });
      return;
    }
    x = /^f(?:data)?sync\(\d+<(.*)>\)\s+= 0/.exec(call);
    if (x !== null) {
      trace.synced.push({ path: x[1], at });
      return;
    }
    x = /^f(?:data)?sync\(\d+<(.*)> <unfinished \.\.\.>/.exec(call);
    if (x !== null) {
      pending.set(pid, x[1]);
      return;
    }
    if (/^<\.\.\. f(?:data)?sync resumed>\)\s+= 0/.test(call) && pending.has(pid)) {
      trace.synced.push({ path: pending.get(pid)!, at });
      pending.delete(pid);
      return;
    }
    x = /^write\(1<[^>]*>, "((?:[^"\\]|\\.)*)"/.exec(call);
    if (x !== null) trace.printed.push({ text: unescape(x[1]), at });
  });
  return trace;
}

/** Run `tool args` under strace; the trace and the run's stdout. */
function traced(
  tool: "context-guard" | "text-guard",
  args: string[],
  cwd: string,
  env: Record<string, string>,
): { trace: Trace; stdout: string; code: number } {
  const log = `${makeTempDir("ctxkit-strace-")}/trace.log`;
  const [program, programArgs] = isolatedCommand({ ...baseEnv(), PWD: cwd, ...env }, [
    "strace",
    "-f",
    "-qq",
    "-y",
    "-e",
    "trace=mkdir,mkdirat,fsync,fdatasync,write",
    "-o",
    log,
    ...toolArgv(tool),
    ...args,
  ]);
  const r = spawnSync(program, programArgs, { cwd, encoding: "utf8" });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  return { trace: parseTrace(readFileSync(log, "utf8"), cwd), stdout: r.stdout, code: r.status };
}

/**
 * Every directory made at or below `scope` was fsynced into its parent (an fsync of the parent that
 * completed after the mkdir) before the first stdout line starting with `success`.
 */
function assertDirsSynced(t: Trace, scope: string, success: string): void {
  const line = t.printed.find((p) => p.text.startsWith(success));
  assert.ok(line !== undefined, `no "${success}" line was written`);
  const made = t.made.filter((m) => m.path === scope || m.path.startsWith(`${scope}/`));
  assert.ok(made.length > 0, `no directory was made below ${scope}`);
  for (const m of made) {
    const parent = dirname(m.path);
    const synced = t.synced.some((s) => s.path === parent && s.at > m.at && s.at < line.at);
    assert.ok(synced, `${m.path} was made but ${parent} was not synced before "${success}"`);
  }
}

Deno.test("item 14: the first snapshot syncs ~/.claude, backups/ and the run's directories into their parents before RUN_DIR:", () => {
  const why = straceUnavailable();
  if (why !== undefined) return console.log(`SKIP: ${why}`);
  const base = makeTempDir("ctxkit-durable-");
  const home = `${base}/home`;
  const proj = `${base}/proj`;
  writeTree(proj, { "CLAUDE.md": "rules NEVER 1\n", "rules/a/b.md": "b 2\n" });
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const r = traced(
    "context-guard",
    ["snapshot", "--allow-dirty", "CLAUDE.md", "rules/a/b.md"],
    proj,
    env,
  );
  assertDirsSynced(r.trace, `${home}/.claude`, "RUN_DIR: ");
  const made = r.trace.made.map((m) => m.path);
  for (const dir of [`${home}/.claude`, `${home}/.claude/backups`]) {
    assert.ok(made.includes(dir), dir);
  }
});

Deno.test("item 14: text-guard's first snapshot syncs .claude/reports/ and the run dir into their parents before RUN_DIR:", () => {
  const why = straceUnavailable();
  if (why !== undefined) return console.log(`SKIP: ${why}`);
  const proj = makeTempDir("ctxkit-durable-");
  writeTree(proj, { "CLAUDE.md": "rules NEVER 1\n" });
  const r = traced("text-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], proj, {
    CLAUDE_PROJECT_DIR: proj,
  });
  assertDirsSynced(r.trace, `${proj}/.claude`, "RUN_DIR: ");
  assert.ok(r.trace.made.some((m) => m.path === `${proj}/.claude`));
});

Deno.test("item 14: state syncs .claude/brewtools/context-slim and the run's state/ into their parents before STATE: written", () => {
  const why = straceUnavailable();
  if (why !== undefined) return console.log(`SKIP: ${why}`);
  const { base, proj, env, runDir } = snapshottedProject({ "CLAUDE.md": "rules NEVER 1\n" });
  const scan = `${base}/scan.json`;
  writeFileSync(scan, '{"scan_issues":[],"files":[],"totals":{"grand":{"tokens":0}}}');
  const r = traced(
    "context-guard",
    ["state", "--mode", "m", "--before", scan, "--after", scan],
    proj,
    env,
  );
  assertDirsSynced(r.trace, `${proj}/.claude`, "STATE: written ");
  assertDirsSynced(r.trace, runDir, "STATE: written ");
  const made = r.trace.made.map((m) => m.path);
  for (const dir of [`${proj}/.claude/brewtools/context-slim`, `${runDir}/state`]) {
    assert.ok(made.includes(dir), dir);
  }
});

Deno.test("item 14: checkpoint syncs the draft/ directories it makes, restore the directories it makes again, before their lines", () => {
  const why = straceUnavailable();
  if (why !== undefined) return console.log(`SKIP: ${why}`);
  const { proj, env, runDir } = snapshottedProject({ "rules/a/b.md": "b 2\n" });
  rmSync(`${proj}/rules`, { recursive: true }); // the optimizer deleted the whole directory
  const cp = traced("text-guard", ["checkpoint", "--run-dir", runDir, "rules/a/b.md"], proj, env);
  assertDirsSynced(cp.trace, runDir, "CHECKPOINT: ");
  const rs = traced("context-guard", ["restore", "--run-dir", runDir], proj, env);
  assertDirsSynced(rs.trace, proj, "RESTORED: ");
});
