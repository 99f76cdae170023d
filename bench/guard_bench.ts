/**
 * Guard cycle cost: snapshot → checkpoint → verify → rollback over 100, 1,000 and 5,000 files of
 * ~1 KB each, in-process through `lib/guard`, then the same cycle of 100 files through the CLI (four
 * processes from source, one warm-up and five measured runs).
 *
 * Prints the time of each phase and the per-file cost. Two ratios show growth is linear: the
 * per-file cost against the first (100-file) run, and the cycle time against an fsync floor
 * measured in the same run right before it (N atomic 1 KB writes through `lib/_fs/write.ts`). The
 * write phases are bound by the disk (every copy, replacement and directory is synced), so on a
 * busy disk the first ratio drifts with the disk while the second stays flat; `verify` (no writes)
 * shows the CPU side alone.
 *
 * Goals (`references/startup.md#guard-cycle`), one PASS/FAIL row each, exit 1 when one fails: the
 * median CLI cycle ≥ 40× faster than the original's recorded figure, and the per-file cost at the
 * largest size ≤ 1.25× that at the smallest. It also prints the CLI cycle against the in-process
 * cycle of the same run.
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

/**
 * The bash original's CLI cycle of 100 files, recorded once (`references/startup.md#guard-cycle`,
 * 2026-12-01: 20 × the 707 ms of main at filing, which the issue measured at 20× the original).
 */
export const ORIGINAL_CLI_CYCLE_MS = 14_140;
/** Goal: the CLI cycle at least this many times faster than the original. */
export const SPEEDUP_GOAL = 40;
/** Goal: the per-file cost at the largest size at most this multiple of the smallest's. */
export const LINEAR_GOAL = 1.25;
/** Measured CLI cycles (after one warm-up); the median is reported. */
const CLI_RUNS = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

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
let largestRatio = 0;
let inProcess100: number | undefined;
for (const n of SIZES) {
  const floor = fsyncFloor(n);
  const p = await cycle(n);
  const total = p.snapshot + p.checkpoint + p.verify + p.rollback;
  const perFile = (total * 1000) / n;
  baseline ??= perFile;
  if (n === 100) inProcess100 = total;
  largestRatio = perFile / baseline;
  console.log(
    `${String(n).padStart(5)} ${fmt(p.snapshot)} ${fmt(p.checkpoint)} ${fmt(p.verify)} ${
      fmt(p.rollback)
    } ${fmt(total)} ${perFile.toFixed(0).padStart(9)} ${
      (perFile / baseline).toFixed(2).padStart(7)
    } ${fmt(floor)} ${(total / floor).toFixed(2).padStart(12)}`,
  );
}

cliCycle(100); // warm-up: the tools' code caches
const clis = Array.from({ length: CLI_RUNS }, () => cliCycle(100));
const cli = median(clis);
const speedup = ORIGINAL_CLI_CYCLE_MS / cli;
const rows: { name: string; figure: string; goal: string; pass: boolean }[] = [
  {
    name: `CLI cycle (4 processes), 100 files, median of ${CLI_RUNS}`,
    figure: `${cli.toFixed(0)} ms (${Math.min(...clis).toFixed(0)}–${
      Math.max(...clis).toFixed(0)
    }) = ${speedup.toFixed(1)}× the original's ${(ORIGINAL_CLI_CYCLE_MS / 1000).toFixed(1)} s`,
    goal: `≥ ${SPEEDUP_GOAL}×`,
    pass: speedup >= SPEEDUP_GOAL,
  },
];
if (SIZES.length > 1) {
  rows.push({
    name: `per-file cost at ${SIZES.at(-1)} files`,
    figure: `${largestRatio.toFixed(2)}× that of ${SIZES[0]} files`,
    goal: `≤ ${LINEAR_GOAL}×`,
    pass: largestRatio <= LINEAR_GOAL,
  });
}
if (inProcess100 !== undefined) {
  console.log(
    `CLI cycle / in-process cycle (100 files, this run): ${(cli / inProcess100).toFixed(2)}×`,
  );
}
for (const r of rows) {
  console.log(
    `${r.name.padEnd(44)} ${r.figure.padEnd(44)} ${r.goal.padEnd(8)} ${r.pass ? "PASS" : "FAIL"}`,
  );
}
const failed = rows.filter((r) => !r.pass).length;
console.log(failed === 0 ? "PASS" : `FAIL (${failed} of ${rows.length} rows)`);
if (failed > 0) Deno.exit(1);
