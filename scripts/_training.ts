/**
 * The training runs of `deno task bundle`'s eager step (`references/startup.md#eager-functions`):
 * for each tool, the short commands hooks and skills run most (the start-up benchmark's commands
 * and a guard cycle), in a throw-away fixture — a committed git project, a prose state dir with an
 * active flag and a config, a `UserPromptSubmit` hook input — with HOME, CLAUDE_CONFIG_DIR and
 * CELLM_DIR inside it and a fixed clock, so two passes over two fixtures print the same lines.
 *
 * @module
 */

import { runChecked, type Tool } from "./tools.ts";

/** One command of a training run. */
export interface TrainingStep {
  /** The tool's arguments; `{run}` stands for the run dir a previous step printed. */
  args: string[];
  /** Bytes for stdin. */
  stdin?: string;
}

/** What every training run of every tool does, in order. */
export const TRAINING: Record<Tool, readonly TrainingStep[]> = {
  "context-scan": [{ args: ["--root", "{proj}"] }, { args: ["--root", "{empty}"] }],
  "context-guard": [
    { args: ["list"] },
    { args: ["snapshot", "CLAUDE.md"] },
    { args: ["list"] },
    { args: ["verify", "--run-dir", "{run}", "CLAUDE.md"] },
    { args: ["rollback", "--run-dir", "{run}"] },
  ],
  "text-guard": [
    { args: ["snapshot", "--run-dir", "{base}/text-run", "CLAUDE.md"] },
    { args: ["status", "--run-dir", "{base}/text-run"] },
    { args: ["checkpoint", "--run-dir", "{base}/text-run", "CLAUDE.md"] },
    { args: ["verify", "--run-dir", "{base}/text-run", "CLAUDE.md"] },
  ],
  prose: [
    { args: ["status"] },
    { args: ["consume"] },
    { args: ["match", "--hook-input"], stdin: "{hook}" },
    { args: ["on", "2", "turns"] },
    { args: ["consume"] },
    { args: ["status", "--json"] },
    { args: ["on"] },
  ],
};

/** A fixture's places, substituted into the steps' `{name}` words. */
export interface Fixture {
  base: string;
  proj: string;
  empty: string;
  env: Record<string, string>;
  hook: string;
}

/** Build a fresh fixture under a new temp dir. */
export function makeFixture(): Fixture {
  const base = Deno.realPathSync(Deno.makeTempDirSync({ prefix: "ctxkit-training-" }));
  const proj = `${base}/proj`;
  const empty = `${base}/empty`;
  const cellm = `${base}/cellm`;
  for (const d of [proj, empty, `${base}/home`, `${base}/claude`, `${cellm}/prose`]) {
    Deno.mkdirSync(d, { recursive: true });
  }
  Deno.chmodSync(cellm, 0o700);
  Deno.chmodSync(`${cellm}/prose`, 0o700);
  Deno.writeTextFileSync(`${cellm}/prose/config.json`, `{"trigger": {"enabled": true}}\n`);
  Deno.mkdirSync(`${proj}/.claude/rules`, { recursive: true });
  Deno.writeTextFileSync(`${proj}/CLAUDE.md`, "# Rules\nUse pnpm 9.1 and NEVER push to main.\n");
  Deno.writeTextFileSync(`${proj}/.claude/rules/style.md`, "Prefer short sentences.\n");
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: `${base}/home`,
    CLAUDE_CONFIG_DIR: `${base}/claude`,
    CLAUDE_PROJECT_DIR: proj,
    CELLM_DIR: cellm,
    CTXKIT_NOW_MS: "1800000000000",
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "training",
    GIT_AUTHOR_EMAIL: "training@example.invalid",
    GIT_COMMITTER_NAME: "training",
    GIT_COMMITTER_EMAIL: "training@example.invalid",
    GIT_AUTHOR_DATE: "2027-01-15T08:00:00Z",
    GIT_COMMITTER_DATE: "2027-01-15T08:00:00Z",
  };
  const denoDir = Deno.env.get("DENO_DIR");
  if (denoDir) env.DENO_DIR = denoDir;
  for (const args of [["init", "-q"], ["add", "-A"], ["commit", "-qm", "init"]]) {
    runChecked(["git", ...args], { cwd: proj, env });
  }
  const hook = JSON.stringify({
    session_id: "training",
    transcript_path: `${base}/transcript.jsonl`,
    cwd: proj,
    hook_event_name: "UserPromptSubmit",
    prompt: "Please answer in plain prose, no bullet lists.",
  }) + "\n";
  return { base, proj, empty, env, hook };
}

/**
 * One step's outcome: its exit code and stdout, with the fixture's base dir written `<base>` and
 * run-dir times `<time>`.
 */
export interface StepOutcome {
  args: string[];
  code: number;
  stdout: string;
}

/**
 * Run `tool`'s training steps with `script` (a bundle) in a fresh fixture, passing `denoFlags`
 * (e.g. `--coverage=DIR`) to `deno run`; the fixture is removed afterwards.
 */
export async function train(
  tool: Tool,
  script: string,
  denoFlags: string[] = [],
): Promise<StepOutcome[]> {
  const fx = makeFixture();
  try {
    const outcomes: StepOutcome[] = [];
    let runDir = "";
    for (const step of TRAINING[tool]) {
      const fill = (w: string) =>
        w.replaceAll("{base}", fx.base).replaceAll("{proj}", fx.proj)
          .replaceAll("{empty}", fx.empty).replaceAll("{run}", runDir)
          .replaceAll("{hook}", fx.hook);
      const child = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--no-config", ...denoFlags, script, ...step.args.map(fill)],
        cwd: fx.proj,
        env: fx.env,
        clearEnv: true,
        stdin: step.stdin === undefined ? "null" : "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      if (step.stdin !== undefined) {
        const w = child.stdin.getWriter();
        await w.write(new TextEncoder().encode(fill(step.stdin)));
        await w.close();
      }
      const out = await child.output();
      const stdout = new TextDecoder().decode(out.stdout);
      runDir = /^RUN_DIR: (.*)$/m.exec(stdout)?.[1] ?? runDir;
      outcomes.push({
        args: step.args,
        code: out.code,
        // The guard names its run dirs by the wall clock, which no option fixes.
        stdout: stdout.replaceAll(fx.base, "<base>").replace(/\b\d{8}-\d{6}\b/g, "<time>"),
      });
    }
    return outcomes;
  } finally {
    Deno.removeSync(fx.base, { recursive: true });
  }
}
