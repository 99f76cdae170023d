/**
 * Guard cycle cost: snapshot → checkpoint → verify → rollback over 100, 1,000 and 5,000 files of
 * ~1 KB each, in-process through `lib/guard` (plus one CLI cycle over 100 files for the process
 * start-up floor).
 *
 * Prints the time of each phase and the per-file cost. Two ratios show growth is linear: the
 * per-file cost against the first (100-file) run, and the cycle time against an fsync floor
 * measured in the same run right before it (N atomic 1 KB writes through `lib/_fs/write.ts`). The
 * write phases are fsync-bound (every copy, draft record and restored file is synced), so on a busy
 * disk the first ratio drifts with the disk while the second stays flat; `verify` (no writes)
 * shows the CPU side alone.
 *
 * Run: `./node_modules/.bin/deno run -A bench/guard_bench.ts [N...]`
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { realpathSync } from "node:fs";
import { snapshot } from "../lib/guard/commands/snapshot.ts";
import { verify } from "../lib/guard/commands/verify.ts";
import { rollback } from "../lib/guard/commands/restore.ts";
import { checkpoint } from "../lib/guard/stage/checkpoint.ts";
import { silentReporter } from "../lib/guard/report.ts";
import { writeFileAtomic } from "../lib/_fs/write.ts";
import type { GuardRoots } from "../lib/guard/roots.ts";

const SIZES = Deno.args.length > 0 ? Deno.args.map(Number) : [100, 1000, 5000];

/** ~1 KB of prose with numbers, paths and keywords, different per file. */
function content(i: number): string {
  const line = (k: number) =>
    `Rule ${i}.${k}: ALWAYS run scripts/check-${k}.sh with --level=${k} before v${i}.${k}; ` +
    `NEVER skip it.\n`;
  let text = `# File ${i}\n\n`;
  for (let k = 0; text.length < 1000; k++) text += line(k);
  return text;
}

interface Phases {
  snapshot: number;
  checkpoint: number;
  verify: number;
  rollback: number;
}

async function time(fn: () => void | Promise<void>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function fixture(n: number): { base: string; roots: GuardRoots; files: string[] } {
  const base = realpathSync(mkdtempSync(`${tmpdir()}/ctxkit-guard-bench-`));
  const project = `${base}/proj`;
  const files: string[] = [];
  for (let i = 0; i < n; i++) {
    const dir = `${project}/rules/d${i % 50}`;
    mkdirSync(dir, { recursive: true });
    const path = `${dir}/f${i}.md`;
    writeFileSync(path, content(i));
    files.push(path);
  }
  const global = `${base}/home/.claude`;
  return { base, roots: { project, global, backups: `${global}/backups` }, files };
}

async function cycle(n: number): Promise<Phases> {
  const { base, roots, files } = fixture(n);
  const phases: Phases = { snapshot: 0, checkpoint: 0, verify: 0, rollback: 0 };
  let runDir = "";
  phases.snapshot = await time(async () => {
    runDir = (await snapshot({ roots, files, scriptPath: "/bench" }, silentReporter)).runDir;
  });
  // The optimizer's rewrite: every token kept, a line appended.
  for (const f of files) writeFileSync(f, readFileSync(f, "utf8") + "Keep it short.\n");
  phases.checkpoint = await time(async () => {
    await checkpoint({ projectDir: roots.project, runDir, files }, silentReporter);
  });
  phases.verify = await time(async () => {
    const r = await verify({ roots, runDir, files }, silentReporter);
    if (!r.passed) throw new Error("verify failed");
  });
  phases.rollback = await time(async () => {
    const r = await rollback({ roots, runDirs: [runDir] }, silentReporter);
    if (!r.ok) throw new Error("rollback failed");
  });
  rmSync(base, { recursive: true, force: true });
  return phases;
}

/** The disk's floor: `n` atomic (fsynced) 1 KB writes spread over 50 directories. */
function fsyncFloor(n: number): number {
  const base = realpathSync(mkdtempSync(`${tmpdir()}/ctxkit-guard-floor-`));
  for (let i = 0; i < 50; i++) mkdirSync(`${base}/d${i}`);
  const bytes = new TextEncoder().encode("x".repeat(1000));
  const start = performance.now();
  for (let i = 0; i < n; i++) writeFileAtomic(`${base}/d${i % 50}/f${i}`, bytes);
  const ms = performance.now() - start;
  rmSync(base, { recursive: true, force: true });
  return ms;
}

function cliCycle(n: number): number {
  const { base, roots, files } = fixture(n);
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: `${base}/home`,
    CTXKIT_EXIT_LINE: "0",
  };
  const bin = new URL("../bin/", import.meta.url).pathname;
  const run = (tool: string, args: string[], extra: Record<string, string> = {}) => {
    const r = spawnSync(Deno.execPath(), ["run", "-A", `${bin}${tool}.ts`, ...args], {
      cwd: roots.project,
      env: { ...env, CLAUDE_PROJECT_DIR: roots.project, PWD: roots.project, ...extra },
      encoding: "utf8",
      maxBuffer: 1 << 30,
    });
    if (r.status !== 0) throw new Error(`${tool} ${args[0]} exited ${r.status}: ${r.stderr}`);
    return r.stdout;
  };
  const start = performance.now();
  const out = run("context-guard", ["snapshot", ...files]);
  const runDir = /^RUN_DIR: (.*)$/m.exec(out)![1];
  for (const f of files) writeFileSync(f, readFileSync(f, "utf8") + "Keep it short.\n");
  run("text-guard", ["checkpoint", "--run-dir", runDir, ...files]);
  run("context-guard", ["verify", "--run-dir", runDir, ...files]);
  run("context-guard", ["rollback", "--run-dir", runDir]);
  const total = performance.now() - start;
  rmSync(base, { recursive: true, force: true });
  return total;
}

const fmt = (ms: number) => `${ms.toFixed(1).padStart(9)} ms`;
console.log("guard cycle, in-process (lib/guard), files of ~1 KB");
console.log(
  "files    snapshot   checkpoint       verify     rollback        total   µs/file   ratio" +
    "   fsync floor  total/floor",
);
await cycle(20); // warm-up: JIT and module initialisation out of the baseline
let baseline: number | undefined;
for (const n of SIZES) {
  const floor = fsyncFloor(n);
  const p = await cycle(n);
  const total = p.snapshot + p.checkpoint + p.verify + p.rollback;
  const perFile = (total * 1000) / n;
  baseline ??= perFile;
  console.log(
    `${String(n).padStart(5)} ${fmt(p.snapshot)} ${fmt(p.checkpoint)} ${fmt(p.verify)} ${
      fmt(p.rollback)
    } ${fmt(total)} ${perFile.toFixed(0).padStart(9)} ${
      (perFile / baseline).toFixed(2).padStart(7)
    } ${fmt(floor)} ${(total / floor).toFixed(2).padStart(12)}`,
  );
}
const cli = cliCycle(100);
console.log(`CLI cycle (4 processes), 100 files: ${cli.toFixed(0)} ms`);
