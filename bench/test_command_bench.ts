/**
 * How long the README's test command takes a newcomer: the second line of the README's quick start
 * (`npx deno task test`), run as printed in a fresh clone of `HEAD` (its `npm ci` done first and
 * not counted), with a fresh HOME and none of the `CTXKIT_*` variables a developer may have set. It
 * prints the wall time against the goal of 5 minutes on a 2-core machine, the CPU time the run
 * used (spread over the cores: the least wall time the machine would need alone) and the load
 * average before and after (a busy machine shows in both), and the suite's own summary line; exit
 * 1 when the goal is missed or the suite fails.
 *
 * `deno run -A bench/test_command_bench.ts` (`deno task bench test_command`). The Deno cache is the
 * caller's (type-checked modules and `deno bundle`'s esbuild are reused, as on a second run);
 * `--cold` gives the run an empty one instead, as on a machine that never ran Deno (it then fetches
 * esbuild from the npm registry).
 *
 * @module
 */

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callerDenoDir } from "./_common.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
/** The goal: the README's test command finishes within 5 minutes on the 2-core machine. */
const GOAL_SECONDS = 5 * 60;

/** The README's quick-start recipe, its two lines: set-up + first command, and the test command. */
function quickStart(): [string, string] {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const block = /<!-- recipe: quick-start -->\s*```sh\n([^]*?)```/.exec(readme);
  if (block === null) throw new Error("README.md has no quick-start recipe");
  const [setUp, test] = block[1].split("\n").filter((l) => l.trim() !== "");
  return [setUp, test];
}

/** A command's words without its trailing `# comment`. */
function withoutComment(line: string): string {
  return line.replace(/\s+#.*$/, "").trim();
}

/** CPU seconds (user + system) of this process's waited-for children, from `/proc/self/stat`. */
function childrenCpuSeconds(): number | undefined {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields 16 and 17 of proc(5) (cutime, cstime), counted from the state field (3).
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return undefined;
  }
}

function minutes(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds - m * 60);
  return m > 0 ? `${m} min ${String(s).padStart(2, "0")} s` : `${s} s`;
}

function run(line: string, cwd: string, env: Record<string, string>) {
  const out = new Deno.Command("sh", {
    args: ["-c", line],
    cwd,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const cold = Deno.args.includes("--cold");
const [setUp, test] = quickStart();
const base = mkdtempSync(join(tmpdir(), "ctxkit-test-command-bench-"));
try {
  const clone = join(base, "ctxkit");
  const home = join(base, "home");
  Deno.mkdirSync(home);
  const git = run(`git clone -q ${JSON.stringify(REPO)} ${JSON.stringify(clone)}`, base, {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
  });
  if (git.code !== 0) throw new Error(`git clone failed: ${git.stderr}`);
  const head = run("git rev-parse --short HEAD", clone, { PATH: Deno.env.get("PATH") ?? "" });
  // The user's environment, but a fresh HOME and nothing a ctxkit developer sets.
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (!k.startsWith("CTXKIT_")) env[k] = v;
  }
  env.HOME = home;
  env.DENO_DIR = cold ? join(base, "deno-cache") : callerDenoDir();
  env.npm_config_cache = join(Deno.env.get("HOME") ?? home, ".npm");
  env.npm_config_update_notifier = "false";
  // Only the set-up (npm ci), not the first command: the figure is the test command's.
  const setUpOnly = withoutComment(setUp).split("&&")[0].trim();
  const prepared = run(setUpOnly, clone, env);
  if (prepared.code !== 0 || !existsSync(join(clone, "node_modules", ".bin", "deno"))) {
    throw new Error(`${setUpOnly} failed: ${prepared.stderr.slice(-2000)}`);
  }

  const command = withoutComment(test);
  const cpuBefore = childrenCpuSeconds();
  const loadBefore = Deno.loadavg()[0];
  const started = performance.now();
  const r = run(command, clone, env);
  const seconds = (performance.now() - started) / 1000;
  const loadAfter = Deno.loadavg()[0];
  const cpuAfter = childrenCpuSeconds();
  // deno-lint-ignore no-control-regex -- Deno's colour codes, stripped before reading its summary
  const plain = r.stdout.replace(/\x1b\[[0-9;]*m/g, "");
  const summary = plain.match(/^(ok|FAILED) \| \d+ passed.*$/m)?.[0] ?? "(no summary line)";
  const pass = r.code === 0 && seconds <= GOAL_SECONDS;
  const cores = navigator.hardwareConcurrency;
  console.log(
    `README test command: ${command} (fresh clone of ${head.stdout.trim()}, ${
      cold ? "empty" : "warm"
    } Deno cache, ${cores} cores)`,
  );
  console.log(
    `  ${pass ? "PASS" : "FAIL"}  wall ${minutes(seconds)}  goal ${minutes(GOAL_SECONDS)}  ratio ${
      (seconds / GOAL_SECONDS).toFixed(2)
    }`,
  );
  // The CPU the suite used, spread over every core, is the least wall time an idle machine needs:
  // on a shared machine it says what the wall time would approach alone.
  const cpuSeconds = cpuBefore !== undefined && cpuAfter !== undefined
    ? cpuAfter - cpuBefore
    : undefined;
  const cpu = cpuSeconds !== undefined
    ? `${Math.round(cpuSeconds)} s of CPU (${
      (cpuSeconds / seconds / cores * 100).toFixed(0)
    }% of the machine; alone, at least ${minutes(cpuSeconds / cores)})`
    : "CPU time unknown";
  console.log(
    `  ${cpu}; load average (1 min) ${loadBefore.toFixed(1)} before, ${loadAfter.toFixed(1)} after`,
  );
  console.log(`  suite: ${summary}`);
  if (r.code !== 0) console.log(plain.slice(-3000) + r.stderr.slice(-2000));
  Deno.exitCode = pass ? 0 : 1;
} finally {
  rmSync(base, { recursive: true, force: true });
}
