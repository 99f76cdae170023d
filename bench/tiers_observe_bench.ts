/**
 * Tier observation benchmark (`references/context-scan.md#observing-every-tier`): what
 * `context-scan --observe --observe-tiers` costs on a project with 20 skills, 10 agents and 10
 * path-scoped rules — every skill invoked, every agent spawned, a file read per rule, in one
 * session of the pinned Claude Code — against a bare start, `context-scan --observe` on the same
 * project (one `claude -p` that posts its first request and ends), measured in the same run. Both
 * go through the same sandbox (a fresh network namespace), the same re-run child and the same
 * `claude --version`, so the ratio is the session's own cost. Runs in alternating pairs
 * ({@linkcode PAIRS}, after one unmeasured warm-up of each), so drift on a busy machine hits both
 * sides alike; prints both medians and the median of the per-pair ratios.
 *
 * Goal: ≤ {@linkcode RATIO_GOAL}× the bare start. Exits 1 when it fails; skips (exit 0, `SKIP:`
 * and the reason) where no namespace can be made or Claude Code cannot be installed.
 *
 * `deno run -A bench/tiers_observe_bench.ts` (or `deno task bench tiers`).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { median } from "./_common.ts";
import { ensureClaudeCode } from "../scripts/claude_code.ts";
import { findOnPath, unshareArguments } from "../lib/scan/observe/run.ts";

/** Measured pairs (odd, so the median is one pair's figure). */
export const PAIRS = 3;
/** Goal: the tier observation takes at most this many times a bare start. */
export const RATIO_GOAL = 3.0;

const REPO = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");

/** The bench project: 20 skills, 10 agents, 10 path-scoped rules (and a CLAUDE.md). */
function buildProject(base: string): void {
  const write = (rel: string, text: string) => {
    const path = `${base}/${rel}`;
    Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
    Deno.writeTextFileSync(path, text);
  };
  const para = (i: number) =>
    `Step ${i}: read the inputs, check them, write the result.\n`.repeat(20);
  write("proj/CLAUDE.md", "# Bench project\nUse the skills.\n");
  for (let i = 0; i < 20; i++) {
    write(
      `proj/.claude/skills/skill-${i}/SKILL.md`,
      `---\nname: skill-${i}\ndescription: Bench skill ${i}\n---\n# Skill ${i}\n${para(i)}`,
    );
  }
  for (let i = 0; i < 10; i++) {
    write(
      `proj/.claude/agents/agent-${i}.md`,
      `---\nname: agent-${i}\ndescription: Bench agent ${i}\ntools: Read\n---\nYou are agent ${i}.\n${
        para(i)
      }`,
    );
    write(
      `proj/.claude/rules/area-${i}.md`,
      `---\npaths: area-${i}/**\n---\n# Area ${i}\n${para(i)}`,
    );
  }
  Deno.mkdirSync(`${base}/home`, { recursive: true });
  Deno.mkdirSync(`${base}/cfg`, { recursive: true });
  Deno.mkdirSync(`${base}/tmp`, { recursive: true });
}

/** Why no namespace can be made here, or undefined. */
async function namespaceProblem(): Promise<string | undefined> {
  const unshare = findOnPath("unshare", Deno.env.get("PATH"));
  if (unshare === undefined) return "unshare (util-linux) is not on PATH";
  const out = await new Deno.Command(unshare, {
    args: [...unshareArguments(Deno.uid() === 0), "--", "ip", "link", "set", "lo", "up"],
    stdout: "null",
    stderr: "piped",
  }).output();
  return out.success ? undefined : `no network namespace: ${new TextDecoder().decode(out.stderr)}`;
}

/** One timed run of context-scan (milliseconds), failing loudly when it does not exit 0. */
async function timed(args: string[], env: Record<string, string>): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${REPO}/deno.json`, `${REPO}/bin/context-scan.ts`, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  if (out.code !== 0) {
    throw new Error(
      `context-scan ${args.join(" ")}: exit ${out.code}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  if (args.includes("--observe-tiers")) {
    const doc = JSON.parse(new TextDecoder().decode(out.stdout));
    const tiers = doc.observed.tiers;
    const all = [...tiers.invocations, ...tiers.spawns, ...tiers.accesses];
    const missed = all.filter((t: { status: string }) => t.status !== "observed");
    if (all.length !== 40 || missed.length > 0) {
      throw new Error(`the session observed ${all.length - missed.length} of 40 sources`);
    }
  }
  return ms;
}

async function main(): Promise<number> {
  const problem = await namespaceProblem();
  const got = problem === undefined ? await ensureClaudeCode() : { skip: problem };
  if ("skip" in got) {
    console.log(`SKIP: ${got.skip}`);
    return 0;
  }
  const base = Deno.makeTempDirSync({ prefix: "ctxkit-tiers-bench-" });
  try {
    buildProject(base);
    const env = {
      ...Deno.env.toObject(),
      HOME: `${base}/home`,
      CLAUDE_CONFIG_DIR: `${base}/cfg`,
      TMPDIR: `${base}/tmp`,
      NO_COLOR: "1",
    };
    const common = ["--root", `${base}/proj`, "--observe", "--claude", got.claude];
    const tiers = [...common, "--observe-tiers", "--observe-timeout", "600"];
    await timed(common, env);
    await timed(tiers, env);
    const bare: number[] = [];
    const observed: number[] = [];
    const ratios: number[] = [];
    for (let i = 0; i < PAIRS; i++) {
      // Alternate which side goes first, so a drifting machine favours neither.
      const [a, b] = i % 2 === 0
        ? [await timed(common, env), await timed(tiers, env)]
        : [await timed(tiers, env), await timed(common, env)].reverse();
      bare.push(a);
      observed.push(b);
      ratios.push(b / a);
    }
    const ratio = median(ratios);
    const pass = ratio <= RATIO_GOAL;
    console.log(
      `bare start (context-scan --observe)      median ${(median(bare) / 1000).toFixed(2)} s`,
    );
    console.log(
      `tier observation (20 skills, 10 agents, 10 rules) median ${
        (median(observed) / 1000).toFixed(2)
      } s`,
    );
    console.log(
      `${pass ? "PASS" : "FAIL"} tier observation / bare start: ${
        ratio.toFixed(2)
      }× (goal ≤ ${RATIO_GOAL}×; pairs ${ratios.map((r) => r.toFixed(2)).join(", ")})`,
    );
    return pass ? 0 : 1;
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
}

if (import.meta.main) Deno.exit(await main());
