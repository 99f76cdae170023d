/**
 * Start-up benchmark: what one short command costs as a whole process, against a Deno hello-world
 * measured in the same run. Each command runs in alternating pairs (hello, command, hello, command…;
 * {@linkcode PAIRS} pairs after one unmeasured round over every command and one warm-up of each), so
 * drift on a busy machine hits both sides alike; a row reports both medians and the median of the
 * per-pair ratios. Commands: the prose hook path (`status`, `consume`, `match --hook-input`),
 * `context-guard list`, `text-guard status`, a one-file `text-guard checkpoint` (what a skill runs
 * per rewritten file; printed as INFO, no goal of its own) and `context-scan --root <empty dir>`,
 * each from source (`deno run -A bin/<tool>.ts`) and from the
 * bundle (`deno run -A --no-config dist/<tool>.js`, built first with `deno task bundle` unless
 * `--no-build`). Also the peak RSS of each hook-path command (`/usr/bin/time -f %M`; skipped, not
 * failed, where GNU time is missing) and each bundle's size.
 *
 * With `--binaries <dir>` (a `dist/bin/<target>` of compiled binaries, e.g. in
 * `.github/workflows/binaries.yml`) every command also runs as `<dir>/<tool>`, in INFO rows: the
 * issue set no goal for binaries. Stand-ins (`deno task compile:stand-in`, scripts that run the
 * bundle) are refused, since they would only measure the bundle again.
 *
 * Goals: source ≤ 2.0× hello, bundle ≤ 1.5×, bundle file ≤ 150 KiB, hook-path RSS ≤ 60 MiB. One row
 * per figure with PASS/FAIL; exits 1 when any fails. Fixtures live in a temp dir, with HOME,
 * CLAUDE_CONFIG_DIR and CELLM_DIR pointing into it; DENO_DIR stays the caller's, so the code caches
 * are as warm as a user's.
 *
 * `deno run -A bench/startup_bench.ts [--no-build] [--binaries <dir>]` (or `deno task bench startup`).
 *
 * @module
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync } from "node:fs";
import { rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callerDenoDir, median } from "./_common.ts";
import { binaryFileName, standInBundle } from "../scripts/compile.ts";
import { type Tool, TOOLS } from "../scripts/tools.ts";

/** Measured pairs per command (odd, so the median is one pair's figure). */
export const PAIRS = 9;
/** Goal for a command run from source: at most this many times the hello-world. */
export const SOURCE_RATIO_GOAL = 2.0;
/** Goal for a command run from its bundle: at most this many times the hello-world. */
export const BUNDLE_RATIO_GOAL = 1.5;
/** Goal for each `dist/<tool>.js`, in bytes (150 KiB). */
export const BUNDLE_BYTES_GOAL = 150 * 1024;
/** Goal for the peak RSS of a hook-path command, in KiB (60 MiB). */
export const RSS_KIB_GOAL = 60 * 1024;

const REPO = realpathSync(fileURLToPath(new URL("..", import.meta.url)));
const DENO = Deno.execPath();
type Form = "source" | "bundle" | "binary";

/** One command of the benchmark: the tool, its arguments, its stdin, the exit code it must give. */
interface Case {
  label: string;
  tool: Tool;
  args: string[];
  stdin?: Uint8Array;
  hookPath: boolean;
  /** Environment this command runs with on top of the bench's. */
  env?: Record<string, string>;
  /** Measured and printed, but no goal of the issue's (`INFO`, never a failure). */
  informational?: boolean;
}

/** One reported figure and whether it meets its goal. */
interface Row {
  name: string;
  figure: string;
  goal: string;
  pass: boolean | "skip" | "info";
}

/** The directory of compiled binaries given with `--binaries`, if any. */
let binaryDir: string | undefined;

/** The words that run `tool` in `form`, as the README documents them. */
function toolWords(tool: Tool, form: Form): string[] {
  if (form === "binary") return [binaryPath(binaryDir!, tool)];
  return form === "source"
    ? [DENO, "run", "-A", "--config", join(REPO, "deno.json"), join(REPO, "bin", `${tool}.ts`)]
    : [DENO, "run", "-A", "--no-config", join(REPO, "dist", `${tool}.js`)];
}

function binaryPath(dir: string, tool: Tool): string {
  return join(dir, binaryFileName(tool));
}

/**
 * Why `dir` cannot be measured as compiled binaries, or `undefined` when it can: every tool must be
 * there and none a stand-in.
 */
function binariesProblem(dir: string): string | undefined {
  for (const tool of TOOLS) {
    const path = binaryPath(dir, tool);
    if (!existsSync(path)) return `no ${path}`;
    if (standInBundle(path) !== undefined) return `${path} is a stand-in, not a compiled binary`;
  }
  return undefined;
}

/** Run `argv` once with exactly `env`; wall time in ms, exit code, stderr (for failures). */
async function timeRun(
  argv: string[],
  env: Record<string, string>,
  cwd: string,
  stdin?: Uint8Array,
): Promise<{ ms: number; code: number; stderr: string }> {
  const start = performance.now();
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd,
    env,
    clearEnv: true,
    stdin: stdin ? "piped" : "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  const ms = performance.now() - start;
  return { ms, code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

/** Peak RSS in KiB of one run of `argv` under GNU time, or `undefined` when it is unavailable. */
function peakRssKib(
  argv: string[],
  env: Record<string, string>,
  cwd: string,
  stdinFile: string | undefined,
  scratch: string,
): number | undefined {
  const report = join(scratch, "time-report");
  // GNU time is the only portable way to the child's peak: getrusage(RUSAGE_CHILDREN) is not
  // exposed to Deno, and sampling /proc/<pid>/status VmHWM misses the end of a 30 ms process.
  const words = ["/usr/bin/time", "-f", "%M", "-o", report, ...argv];
  const out = new Deno.Command("/bin/sh", {
    args: ["-c", `exec "$@" <${stdinFile ? `'${stdinFile}'` : "/dev/null"} >/dev/null 2>&1`, "sh"]
      .concat(words),
    cwd,
    env,
    clearEnv: true,
  }).outputSync();
  if (!existsSync(report)) return undefined;
  const kib = Number(readFileSync(report, "utf8").trim().split("\n").at(-1));
  rmSync(report);
  return out.code === 127 || !Number.isFinite(kib) ? undefined : kib;
}

/** Whether GNU time (`-f %M`) works here. */
function gnuTimeAvailable(scratch: string): boolean {
  if (!existsSync("/usr/bin/time")) return false;
  const kib = peakRssKib(["/bin/true"], { PATH: "/usr/bin:/bin" }, scratch, undefined, scratch);
  return kib !== undefined && kib > 0;
}

/** Run `argv` synchronously with `env`; throws with its stderr unless it exits `expect`. */
function must(argv: string[], env: Record<string, string>, cwd: string, expect = 0): void {
  const out = new Deno.Command(argv[0], { args: argv.slice(1), cwd, env, clearEnv: true })
    .outputSync();
  if (out.code !== expect) {
    throw new Error(`${argv.join(" ")} → ${out.code}\n${new TextDecoder().decode(out.stderr)}`);
  }
}

/** The fixtures: a git project, a text-guard run dir, an active prose flag, a hook input. */
function buildFixtures(base: string, env: Record<string, string>) {
  const proj = join(base, "proj");
  const empty = join(base, "empty");
  const runDir = join(base, "run");
  for (const d of [proj, empty, env.HOME, env.CLAUDE_CONFIG_DIR]) mkdirSync(d, { recursive: true });
  // The prose state dir must be private (references/prose.md#files); the trigger is opt-in.
  const proseDir = join(env.CELLM_DIR, "prose");
  mkdirSync(proseDir, { recursive: true });
  chmodSync(env.CELLM_DIR, 0o700);
  chmodSync(proseDir, 0o700);
  writeFileSync(join(proseDir, "config.json"), `{"trigger": {"enabled": true}}\n`);
  writeFileSync(join(proj, "CLAUDE.md"), "# Rules\nUse pnpm 9.1 and NEVER push to main.\n");
  must(["git", "init", "-q"], env, proj);
  must(["git", "add", "-A"], env, proj);
  must(["git", "commit", "-qm", "init"], env, proj);
  must(
    [...toolWords("text-guard", "bundle"), "snapshot", "--run-dir", runDir, "CLAUDE.md"],
    env,
    proj,
  );
  // A block flag: status reads it, consume answers not-turn-scoped and match (without --activate)
  // changes nothing, so every run of a command sees the same state.
  must([...toolWords("prose", "bundle"), "on"], env, proj);
  const hookInput = join(base, "hook-input.json");
  writeFileSync(
    hookInput,
    JSON.stringify({
      session_id: "bench",
      transcript_path: join(base, "transcript.jsonl"),
      cwd: proj,
      hook_event_name: "UserPromptSubmit",
      prompt: "Please answer in plain prose, no bullet lists.",
    }) + "\n",
  );
  return { proj, empty, runDir, hookInput };
}

async function main(args: string[]): Promise<number> {
  const at = args.indexOf("--binaries");
  if (at >= 0) {
    const dir = args[at + 1];
    const problem = dir === undefined
      ? "needs a directory"
      : !existsSync(dir)
      ? `no ${dir}`
      : binariesProblem(realpathSync(dir));
    if (problem !== undefined) {
      console.error(`--binaries: ${problem}`);
      return 2;
    }
    binaryDir = realpathSync(dir!);
  }
  const forms: Form[] = binaryDir === undefined
    ? ["source", "bundle"]
    : ["source", "bundle", "binary"];
  if (!args.includes("--no-build")) {
    must([DENO, "run", "-A", join(REPO, "scripts", "bundle.ts")], { ...Deno.env.toObject() }, REPO);
  }
  const base = realpathSync(mkdtempSync(join(tmpdir(), "ctxkit-startup-bench-")));
  try {
    const denoDir = callerDenoDir();
    const env: Record<string, string> = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: join(base, "home"),
      CLAUDE_CONFIG_DIR: join(base, "claude"),
      CELLM_DIR: join(base, "cellm"),
      DENO_DIR: denoDir,
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_AUTHOR_NAME: "bench",
      GIT_AUTHOR_EMAIL: "bench@example.invalid",
      GIT_COMMITTER_NAME: "bench",
      GIT_COMMITTER_EMAIL: "bench@example.invalid",
    };
    const f = buildFixtures(base, env);
    const hello = join(base, "hello.js");
    writeFileSync(hello, `console.log("hello");\n`);
    const helloWords = [DENO, "run", "-A", "--no-config", hello];
    const hookBytes = readFileSync(f.hookInput);
    const cases: Case[] = [
      { label: "prose status", tool: "prose", args: ["status"], hookPath: true },
      { label: "prose consume", tool: "prose", args: ["consume"], hookPath: true },
      {
        label: "prose match --hook-input",
        tool: "prose",
        args: ["match", "--hook-input"],
        stdin: hookBytes,
        hookPath: true,
      },
      { label: "context-guard list", tool: "context-guard", args: ["list"], hookPath: false },
      {
        label: "text-guard status --run-dir D",
        tool: "text-guard",
        args: ["status", "--run-dir", f.runDir],
        hookPath: false,
      },
      // What a skill runs once per rewritten file, with the layer root in CLAUDE_PROJECT_DIR
      // (references/context-guard.md): it writes the file's draft record, the same bytes each run.
      {
        label: "text-guard checkpoint (one file)",
        tool: "text-guard",
        args: ["checkpoint", "--run-dir", f.runDir, "CLAUDE.md"],
        hookPath: false,
        env: { CLAUDE_PROJECT_DIR: f.proj },
        informational: true,
      },
      {
        label: "context-scan --root <empty>",
        tool: "context-scan",
        args: ["--root", f.empty],
        hookPath: false,
      },
    ];

    const rows: Row[] = [];
    console.log(`startup: ${PAIRS} alternating pairs per command against a Deno hello-world`);
    // One unmeasured round over every command and form first: the build and the fixtures have just
    // written to disk, and the first rows measured would otherwise pay for it.
    for (const form of forms) {
      for (const c of cases) {
        await timeRun(helloWords, env, f.proj);
        await timeRun(
          [...toolWords(c.tool, form), ...c.args],
          { ...env, ...c.env },
          f.proj,
          c.stdin,
        );
      }
    }
    for (const form of forms) {
      const goal = form === "source" ? SOURCE_RATIO_GOAL : BUNDLE_RATIO_GOAL;
      const informational = (c: Case) => c.informational === true || form === "binary";
      for (const c of cases) {
        const argv = [...toolWords(c.tool, form), ...c.args];
        const name = `${c.label} (${form})`;
        // Warm-up: fills Deno's code cache, and checks the command works (any failure exits 2+).
        await timeRun(helloWords, env, f.proj);
        const cmdEnv = { ...env, ...c.env };
        const warm = await timeRun(argv, cmdEnv, f.proj, c.stdin);
        if (warm.code !== 0) {
          rows.push({
            name,
            figure: `exit ${warm.code}: ${warm.stderr.trim()}`,
            goal: "",
            pass: false,
          });
          continue;
        }
        const helloMs: number[] = [];
        const cmdMs: number[] = [];
        const ratios: number[] = [];
        for (let i = 0; i < PAIRS; i++) {
          const a = await timeRun(helloWords, env, f.proj);
          const b = await timeRun(argv, cmdEnv, f.proj, c.stdin);
          if (b.code !== 0) throw new Error(`${name}: exit ${b.code}\n${b.stderr}`);
          helloMs.push(a.ms);
          cmdMs.push(b.ms);
          ratios.push(b.ms / a.ms);
        }
        const ratio = median(ratios);
        rows.push({
          name,
          figure: `${median(cmdMs).toFixed(1)} ms vs hello ${median(helloMs).toFixed(1)} ms = ` +
            `${ratio.toFixed(2)}×`,
          goal: informational(c) ? "" : `≤ ${goal.toFixed(1)}×`,
          pass: informational(c) ? "info" : ratio <= goal,
        });
      }
    }

    const haveTime = gnuTimeAvailable(base);
    const helloRss = haveTime ? peakRssKib(helloWords, env, f.proj, undefined, base) : undefined;
    for (const form of forms) {
      for (const c of cases.filter((c) => c.hookPath)) {
        const name = `${c.label} (${form}) peak RSS`;
        if (!haveTime) {
          rows.push({ name, figure: "no GNU /usr/bin/time", goal: "≤ 60 MiB", pass: "skip" });
          continue;
        }
        const argv = [...toolWords(c.tool, form), ...c.args];
        const stdinFile = c.stdin ? f.hookInput : undefined;
        const samples = [0, 1, 2].map(() => peakRssKib(argv, env, f.proj, stdinFile, base) ?? NaN);
        const kib = median(samples);
        rows.push({
          name,
          figure: `${(kib / 1024).toFixed(1)} MiB (hello ${((helloRss ?? NaN) / 1024).toFixed(1)})`,
          goal: "≤ 60 MiB",
          pass: kib <= RSS_KIB_GOAL,
        });
      }
    }

    for (const tool of TOOLS) {
      const path = join(REPO, "dist", `${tool}.js`);
      const bytes = existsSync(path) ? statSync(path).size : NaN;
      rows.push({
        name: `dist/${tool}.js size`,
        figure: `${(bytes / 1024).toFixed(1)} KiB`,
        goal: "≤ 150 KiB",
        pass: bytes <= BUNDLE_BYTES_GOAL,
      });
    }

    const width = Math.max(...rows.map((r) => r.name.length));
    const figWidth = Math.max(...rows.map((r) => r.figure.length));
    for (const r of rows) {
      const verdict = r.pass === "skip"
        ? "SKIP"
        : r.pass === "info"
        ? "INFO"
        : r.pass
        ? "PASS"
        : "FAIL";
      console.log(
        `${r.name.padEnd(width)}  ${r.figure.padEnd(figWidth)}  ${r.goal.padEnd(9)}  ${verdict}`,
      );
    }
    const failed = rows.filter((r) => r.pass === false).length;
    console.log(failed === 0 ? "PASS" : `FAIL (${failed} of ${rows.length} rows)`);
    return failed === 0 ? 0 : 1;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
