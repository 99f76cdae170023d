/**
 * The user's own `/name` invocations, observed (`references/context-scan.md#the-tiers-differential-suite`):
 * a skill or command with `disable-model-invocation` refuses the Skill tool, so the scripted model
 * cannot invoke it; the user's `/name` can. {@linkcode userPromptSession} runs the pinned Claude
 * Code once with `--input-format stream-json`, one user message per prompt, inside a fresh network
 * (and PID) namespace as `tests/_claude.ts`' observations do (`unshare`, only loopback up); the
 * recorder answers every request `end_turn` and keeps the last, which holds the whole conversation.
 * Run as a program (`deno run -A tests/_user_prompts.ts`, inside the namespace) it is that child.
 *
 * @module
 */

import { minimalStreamedReply, startRecorder } from "../lib/scan/observe/recorder.ts";
import { claudeEnvironment, findOnPath, unshareArguments } from "../lib/scan/observe/run.ts";
import { baseEnv } from "./_helpers.ts";

/** The child's options (JSON in {@linkcode CHILD_ENV}). */
interface ChildOptions {
  claude: string;
  cwd: string;
  pluginDirs: string[];
  prompts: string[];
}

const CHILD_ENV = "CTXKIT_USER_PROMPTS_CHILD";

/** The `claude` arguments: print mode reading stream-json user messages, hooks off, no shell. */
function claudeArgs(options: ChildOptions): string[] {
  const args = [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--max-turns",
    "2",
    "--no-session-persistence",
    "--strict-mcp-config",
    "--settings",
    '{"disableAllHooks":true,"disableSkillShellExecution":true}',
  ];
  for (const dir of options.pluginDirs) args.push("--plugin-dir", dir);
  return args;
}

/** The child: inside the namespace, bring loopback up, record, run claude; print the last body. */
async function child(options: ChildOptions): Promise<void> {
  const ip = findOnPath("ip", Deno.env.get("PATH"));
  if (
    ip === undefined ||
    !(await new Deno.Command(ip, { args: ["link", "set", "lo", "up"] }).output()).success
  ) {
    throw new Error("loopback cannot be brought up");
  }
  let last = "";
  let requests = 0;
  const recorder = await startRecorder((body, model) => {
    requests++;
    last = body;
    return minimalStreamedReply(model);
  });
  try {
    const env = { ...Deno.env.toObject() };
    delete env[CHILD_ENV];
    const proc = new Deno.Command(options.claude, {
      args: claudeArgs(options),
      cwd: options.cwd,
      env: claudeEnvironment(env, recorder.url),
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const lines = options.prompts.map((content) =>
      JSON.stringify({ type: "user", message: { role: "user", content } }) + "\n"
    ).join("");
    const writer = proc.stdin.getWriter();
    await writer.write(new TextEncoder().encode(lines));
    await writer.close();
    const out = await proc.output();
    if (!out.success) {
      throw new Error(`claude exited ${out.code}: ${new TextDecoder().decode(out.stderr).trim()}`);
    }
  } finally {
    await recorder.close();
  }
  console.log(JSON.stringify({ requests, last }));
}

/** One session's outcome: how many requests Claude Code sent, and the last one's body. */
export interface UserPromptSession {
  readonly requests: number;
  readonly last: string;
}

/**
 * Send `prompts` as the user's messages of one session of `claude` in `fixture`, inside a fresh
 * network namespace (the caller has checked one can be made: `namespaceSkipReason`).
 */
export async function userPromptSession(
  claude: string,
  fixture: {
    root: string;
    home: string;
    configDir: string;
    pluginDirs: readonly string[];
  },
  prompts: readonly string[],
): Promise<UserPromptSession> {
  const unshare = findOnPath("unshare", Deno.env.get("PATH"));
  if (unshare === undefined) throw new Error("unshare vanished since the probe");
  const options: ChildOptions = {
    claude,
    cwd: fixture.root,
    pluginDirs: [...fixture.pluginDirs],
    prompts: [...prompts],
  };
  const out = await new Deno.Command(unshare, {
    args: [
      ...unshareArguments(Deno.uid() === 0),
      "--",
      Deno.execPath(),
      "run",
      "-A",
      new URL(import.meta.url).pathname,
    ],
    cwd: fixture.root,
    env: {
      ...baseEnv(),
      HOME: fixture.home,
      CLAUDE_CONFIG_DIR: fixture.configDir,
      [CHILD_ENV]: JSON.stringify(options),
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const line = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
  if (!out.success || !line.startsWith("{")) {
    throw new Error(
      `the user-prompt session failed (exit ${out.code}): ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return JSON.parse(line) as UserPromptSession;
}

if (import.meta.main) {
  const raw = Deno.env.get(CHILD_ENV);
  if (raw === undefined) throw new Error(`${CHILD_ENV} is not set`);
  await child(JSON.parse(raw) as ChildOptions);
}
