/**
 * prose's Claude Code hooks in the real client (issue 30): the hook block of
 * `references/prose.md#ready-to-copy-claude-code-hook-setup`, read from the doc and put as printed
 * (paths replaced) into a project's `.claude/settings.json`, drives the pinned Claude Code inside
 * a fresh network namespace against a scripted local model (`tests/_claude_session.ts`). The
 * script is a vendored copy under a broken `deno.json`, as a skill that vendors ctxkit has it.
 * What each hook must do: `UserPromptSubmit` activates on a trigger prompt before the model is
 * asked, `Stop` consumes one turn per response, `SessionEnd` clears a `session` flag — even after a
 * killed command left its lock, with no `Hook cancelled`.
 *
 * An observed suite: it skips with the reason where no namespace can be made or Claude Code
 * cannot be installed, and fails instead under `CTXKIT_REQUIRE_OBSERVED=1` (`.ci/run`).
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { docBlocks } from "./_docs.ts";
import { baseEnv, makeTempDir, REPO, TARGET, toolArgv } from "./_helpers.ts";
import { observedClaude } from "./_claude.ts";
import { runClaudeSession, type SessionResult } from "./_claude_session.ts";
import { claudeHookSettings } from "../lib/prose/hooks.ts";
import { RUN_PERMISSIONS } from "../lib/prose/cli.ts";

/** The placeholders of the documented block. */
const DENO_PLACEHOLDER = "/abs/path/to/deno";
const SCRIPT_PLACEHOLDER = "/abs/path/to/bin/prose.ts";

/** The JSON block under the doc's "Ready-to-copy Claude Code hook setup" heading, as printed. */
function documentedBlock(): string {
  const file = "references/prose.md";
  const lines = readFileSync(join(REPO, file), "utf8").split("\n");
  const heading = lines.indexOf("## Ready-to-copy Claude Code hook setup") + 1;
  assert.ok(heading > 0, "the hook setup section is gone from references/prose.md");
  const block = docBlocks(file).find((b) => b.line > heading && b.info === "json");
  assert.ok(block, "no JSON block in the hook setup section");
  return block.body;
}

Deno.test("the documented hook block is lib/prose/hooks.ts's, word for word", () => {
  const expected = claudeHookSettings([
    DENO_PLACEHOLDER,
    "run",
    ...RUN_PERMISSIONS,
    "--no-config",
    SCRIPT_PLACEHOLDER,
  ]);
  assert.equal(documentedBlock(), JSON.stringify(expected, null, 2) + "\n");
});

/** A project, a private state root and a vendored prose under a broken `deno.json`. */
interface Fixture {
  base: string;
  project: string;
  cellm: string;
  flag: string;
  env: Record<string, string>;
}

/**
 * The fixture, with the documented block in `.claude/settings.json` and `config` as prose's
 * config; the vendored script sits under a broken `deno.json` unless `brokenDenoJson` is false.
 * `undefined` (printed as a SKIP) under the binary target, where the block's `deno run` form does
 * not apply.
 */
function fixture(
  config?: unknown,
  { brokenDenoJson = true }: { brokenDenoJson?: boolean } = {},
): Fixture | undefined {
  if (TARGET === "binary") {
    console.log("SKIP: the documented block runs deno; a compiled binary replaces those words");
    return undefined;
  }
  const base = makeTempDir("prose-claude-");
  // A vendored copy of the program under a deno.json that does not even parse: the block must
  // not depend on any configuration around the script.
  const vendor = join(base, "vendor");
  mkdirSync(vendor);
  if (brokenDenoJson) writeFileSync(join(vendor, "deno.json"), "{ this is not JSON\n");
  let script: string;
  if (TARGET === "bundle") {
    script = join(vendor, "prose.js");
    cpSync(join(REPO, "dist", "prose.js"), script);
  } else {
    for (const dir of ["bin", "lib"]) {
      cpSync(join(REPO, dir), join(vendor, dir), { recursive: true });
    }
    script = join(vendor, "bin", "prose.ts");
  }
  const project = join(base, "project");
  mkdirSync(join(project, ".claude"), { recursive: true });
  const block = documentedBlock()
    .replaceAll(DENO_PLACEHOLDER, Deno.execPath())
    .replaceAll(SCRIPT_PLACEHOLDER, script);
  writeFileSync(join(project, ".claude", "settings.json"), block);
  const cellm = join(base, "cellm");
  mkdirSync(join(cellm, "prose"), { recursive: true, mode: 0o700 });
  if (config !== undefined) {
    writeFileSync(join(cellm, "prose", "config.json"), JSON.stringify(config));
  }
  for (const dir of ["home", "claude-config"]) mkdirSync(join(base, dir));
  const env = {
    ...baseEnv(),
    HOME: join(base, "home"),
    CLAUDE_CONFIG_DIR: join(base, "claude-config"),
    CELLM_DIR: cellm,
  };
  return { base, project, cellm, flag: join(cellm, "prose", ".active"), env };
}

/** Run `prose args --local` on the fixture's state (as the test, not as a hook). */
async function prose(f: Fixture, args: string[], extra: Record<string, string> = {}) {
  const [program, ...argv] = toolArgv("prose");
  return await new Deno.Command(program, {
    args: [...argv, ...args, "--local"],
    clearEnv: true,
    env: { ...f.env, ...extra },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
}

/** One session of the pinned Claude Code in the fixture's project. */
function session(claude: string, f: Fixture, prompts: string[]): Promise<SessionResult> {
  return runClaudeSession({
    claude,
    cwd: f.project,
    prompts,
    env: f.env,
    flagPath: f.flag,
    timeoutMs: 180_000,
  });
}

/** The parsed flag text (or null), for assertions on what a model request saw. */
function flagOf(text: string | null): Record<string, unknown> | null {
  return text === null ? null : JSON.parse(text);
}

/** Claude Code ended cleanly and reported no hook failure. */
function assertCleanRun(r: SessionResult): void {
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /hook/i, `a hook failed: ${r.stderr}`);
}

Deno.test("UserPromptSubmit: a trigger prompt activates the override before the model is asked", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const f = fixture({ trigger: { enabled: true }, ttl: "block" });
  if (f === undefined) return;
  const quiet = await session(claude, f, ["explain this function"]);
  assertCleanRun(quiet);
  assert.deepEqual(quiet.flags, [null], "a prompt without a trigger activated something");
  const r = await session(claude, f, ["answer in plain prose please"]);
  assertCleanRun(r);
  assert.equal(r.flags.length, 1);
  const seen = flagOf(r.flags[0]);
  assert.ok(seen !== null, "the model was asked before the hook activated the override");
  assert.deepEqual([seen.level, seen.ttl, seen.source], [
    "full",
    { unit: "block", value: 0 },
    "config",
  ]);
  // A block flag outlives the session (git's hooks end it).
  assert.deepEqual(flagOf(readFileSync(f.flag, "utf8")), seen);
});

Deno.test("Stop: each response consumes exactly one turn; SessionEnd clears the rest", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const f = fixture();
  if (f === undefined) return;
  assert.equal((await prose(f, ["on", "5", "turns", "--level", "minimal"])).code, 0);
  // Two prompts in one session: two agent loops, each ending with the Stop hook.
  const r = await session(claude, f, ["first question", "second question"]);
  assertCleanRun(r);
  assert.deepEqual(
    r.flags.map((t) => (flagOf(t)?.ttl as { value: number } | undefined)?.value),
    [5, 4],
    "the second request must see exactly one turn consumed",
  );
  assert.equal(existsSync(f.flag), false, "session-end left a turn flag");
});

Deno.test("SessionEnd: a session flag ends even after a killed command left its lock; no hook is cancelled (issue 30.1)", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  // No broken deno.json here: this test is about the lock and the budget alone.
  const f = fixture(undefined, { brokenDenoJson: false });
  if (f === undefined) return;
  assert.equal((await prose(f, ["on", "session"])).code, 0);
  // A command killed with SIGKILL while it holds the flag's lock.
  const killed = await prose(f, ["level", "minimal"], {
    CTXKIT_FAULT_POINT: "prose.flag.before-rename",
  });
  assert.equal(killed.signal, "SIGKILL");
  assert.ok(readdirSync(join(f.cellm, "prose")).includes(".lock"), "no lock was left behind");
  const r = await session(claude, f, ["hi"]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /Hook cancelled|failed/, r.stderr);
  assert.deepEqual(flagOf(r.flags[0])?.ttl, { unit: "session", value: 0 }, "the model saw no flag");
  assert.equal(existsSync(f.flag), false, `the session flag survived the session: ${r.stderr}`);
  assert.equal(existsSync(join(f.cellm, "prose", ".lock")), false, "the dead lock is still there");
});
