/**
 * Running Claude Code once to see what it sends (`context-scan --observe`): the loopback recorder,
 * the child `claude -p` with a hard deadline, and — where Linux allows it — a fresh network
 * namespace with only loopback in it, so no setting can send the context anywhere else. The child
 * is killed and reaped on every path. Contract: `references/context-scan.md#observe`.
 *
 * The namespace holds the recorder too (a namespace's loopback is its own), so the sandboxed run
 * re-executes this same program inside `unshare` in its child mode ({@linkcode OBSERVE_CHILD_ARG}),
 * which brings `lo` up, records, and prints its result as one JSON line on stdout.
 *
 * @module
 */

import { CtxkitError } from "../../errors.ts";
import { printed, type Text, text, verbatim } from "../../text.ts";
import * as z from "../../_zod.ts";
import { startRecorder } from "./recorder.ts";
import { type ObservePlan, ObservePlanSchema, SessionLog, type SessionRequests } from "./script.ts";

/** The argument that starts context-scan's observation child (never typed by a user). */
export const OBSERVE_CHILD_ARG = "__observe-child";
/** The environment variable that carries the child's options (JSON). */
export const OBSERVE_CHILD_ENV = "CTXKIT_OBSERVE_CHILD";
/** The prompt `claude -p` is given: short, so the recorded request is almost all start-up context. */
export const OBSERVE_PROMPT = "hi";
/** The oldest Claude Code version `--observe` accepts: the oldest its layout was checked on. */
export const MIN_CLAUDE_VERSION = "2.1.328";
/** The default deadline of one observation, in milliseconds. */
export const DEFAULT_OBSERVE_TIMEOUT_MS = 60_000;

/** An observation that could not be made: one line, exit 2. */
export class ObserveError extends CtxkitError {
  /** Create the error. */
  constructor(message: Text) {
    super(2, message);
  }
}

/** What one observation runs. */
export interface ObserveOptions {
  /** The `claude` executable (a path). */
  readonly claude: string;
  /** The directory `claude` runs in: the scanned root. */
  readonly cwd: string;
  /** `--plugin-dir` values passed through to `claude`. */
  readonly pluginDirs: readonly string[];
  /** Run SessionStart hooks (`--observe-hooks`); by default no hook runs. */
  readonly hooks: boolean;
  /** The deadline in milliseconds. */
  readonly timeoutMs: number;
  /** The environment `claude` starts from (the recorder's variables are set on top). */
  readonly env: Readonly<Record<string, string>>;
  /** Aborting it kills the run at once (a signal to context-scan); the caller reports it. */
  readonly stop?: AbortSignal;
  /** A tier observation's script (`--observe-tiers`): the session then runs to its end. */
  readonly plan?: ObservePlan;
}

/** What an observation saw: the Claude Code version and the first request's body. */
export interface Observation {
  /** `claude --version`'s version number. */
  readonly version: string;
  /** The first `/v1/messages` request body, as text (JSON). */
  readonly body: string;
  /** True when `claude` ran in a fresh network namespace with only loopback. */
  readonly sandboxed: boolean;
  /** A tier observation's later requests. */
  readonly session?: SessionRequests;
}

// Variables that could send the request elsewhere or authenticate it for real: never passed on.
const DROPPED_ENV = [
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_CUSTOM_HEADERS",
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
  "CLAUDE_CODE_USE_FOUNDRY",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "ALL_PROXY",
  "http_proxy",
  "https_proxy",
  "all_proxy",
  OBSERVE_CHILD_ENV,
];

/**
 * The environment `claude` runs with: `base` without any variable that could redirect or
 * authenticate the request, plus the recorder's URL, a dummy key and every switch that keeps
 * Claude Code from other traffic (telemetry, updater, error reporting, non-essential requests).
 */
export function claudeEnvironment(
  base: Readonly<Record<string, string>>,
  recorderUrl: string,
): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const name of DROPPED_ENV) delete env[name];
  return {
    ...env,
    ANTHROPIC_BASE_URL: recorderUrl,
    ANTHROPIC_API_KEY: "ctxkit-observe-no-key",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_BUG_COMMAND: "1",
    NO_PROXY: "*",
    // Claude Code runs `git status` in a repository: no optional index refresh written to .git.
    GIT_OPTIONAL_LOCKS: "0",
  };
}

/**
 * The arguments of the one `claude` run: print mode, one turn, nothing persisted, no MCP server,
 * and no hook unless `hooks` (then only the user's own hooks run, as configured).
 */
export function claudeArguments(
  options: Pick<ObserveOptions, "pluginDirs" | "hooks" | "plan">,
): string[] {
  const args = [
    "-p",
    OBSERVE_PROMPT,
    "--max-turns",
    String(options.plan === undefined ? 1 : options.plan.turns.length + 2),
    "--no-session-persistence",
    "--strict-mcp-config",
  ];
  if (options.plan !== undefined) {
    // The scripted model's tools (bypass modes are refused as root); skills' inline shell
    // commands never run (references/context-scan.md#observing-every-tier).
    args.push("--allowedTools", "Skill,Agent,Read");
    args.push(
      "--settings",
      options.hooks
        ? '{"disableSkillShellExecution":true}'
        : '{"disableAllHooks":true,"disableSkillShellExecution":true}',
    );
  } else if (!options.hooks) args.push("--settings", '{"disableAllHooks":true}');
  for (const dir of options.pluginDirs) args.push("--plugin-dir", dir);
  return args;
}

/** Compare two dotted version numbers. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

const VERSION = /^([0-9]+\.[0-9]+\.[0-9]+)\b/;

/** The version number `claude --version` printed (`2.1.328 (Claude Code)`), or undefined. */
export function parseClaudeVersion(output: string): string | undefined {
  return VERSION.exec(output.trim())?.[1];
}

function firstLineOf(bytes: Uint8Array): string {
  const all = new TextDecoder().decode(bytes).trim();
  const nl = all.indexOf("\n");
  return (nl === -1 ? all : all.slice(0, nl)).slice(0, 300);
}

/** How long a finished child's pipes are still read (a grandchild may keep them open). */
const PIPE_GRACE_MS = 200;

/** Read `stream` to its end in the background; `stop()` cancels it and returns what came. */
function drain(stream: ReadableStream<Uint8Array>): { done: Promise<void>; stop(): Uint8Array } {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  const done = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        chunks.push(value);
      }
    } catch { /* cancelled */ }
  })();
  return {
    done,
    stop() {
      reader.cancel().catch(() => {});
      const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
      let at = 0;
      for (const c of chunks) {
        all.set(c, at);
        at += c.length;
      }
      return all;
    },
  };
}

/** Spawn `cmd`, and kill it (SIGKILL) when `deadline` passes or `stop` aborts; always reaped. */
async function runBounded(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: Record<string, string>; deadline: number; stop?: AbortSignal },
): Promise<{ code: number; stdout: Uint8Array; stderr: Uint8Array; timedOut: boolean }> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, {
      args: [...args],
      cwd: opts.cwd,
      env: opts.env,
      clearEnv: opts.env !== undefined,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new ObserveError(text`claude not found: ${cmd}`);
    }
    if (e instanceof Deno.errors.PermissionDenied && !(e.message.includes("--allow-run"))) {
      throw new ObserveError(text`claude cannot be started: ${cmd}`);
    }
    throw e;
  }
  let timedOut = false;
  const kill = () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, Math.max(0, opts.deadline - Date.now()));
  opts.stop?.addEventListener("abort", kill, { once: true });
  try {
    const stdout = drain(child.stdout);
    const stderr = drain(child.stderr);
    const status = await child.status;
    // A grandchild may hold the pipes open after the child is gone: read what is there, then stop.
    let wait: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.all([stdout.done, stderr.done]),
      new Promise((resolve) => (wait = setTimeout(resolve, PIPE_GRACE_MS))),
    ]);
    clearTimeout(wait);
    return { code: status.code, stdout: stdout.stop(), stderr: stderr.stop(), timedOut };
  } finally {
    clearTimeout(timer);
    opts.stop?.removeEventListener("abort", kill);
  }
}

/**
 * Observe here, in this process's network: start the recorder, ask `claude --version`, run
 * `claude -p` and wait for its first request, its exit, or the deadline — whichever comes first.
 * The child is killed (SIGKILL) once the request is recorded and it has not ended within a grace
 * period, and on every failure; it is always reaped, and the recorder always closed.
 */
export async function observeHere(
  options: ObserveOptions,
): Promise<Omit<Observation, "sandboxed">> {
  const deadline = Date.now() + options.timeoutMs;
  const log = options.plan === undefined ? undefined : new SessionLog(options.plan);
  const recorder = await startRecorder(log === undefined ? undefined : (t, m) => log.reply(t, m));
  try {
    const env = claudeEnvironment(options.env, recorder.url);
    const versionRun = await runBounded(options.claude, ["--version"], {
      cwd: options.cwd,
      env,
      deadline,
    });
    const version = parseClaudeVersion(new TextDecoder().decode(versionRun.stdout));
    if (versionRun.timedOut) {
      throw new ObserveError(
        text`claude posted nothing within ${String(options.timeoutMs / 1000)} s: ${options.claude}`,
      );
    }
    if (versionRun.code !== 0 || version === undefined) {
      throw new ObserveError(
        text`claude --version failed (exit ${String(versionRun.code)}): ${options.claude}`,
      );
    }
    if (compareVersions(version, MIN_CLAUDE_VERSION) < 0) {
      throw new ObserveError(
        text`claude ${version} is too old for --observe (needs ${MIN_CLAUDE_VERSION} or newer): ${options.claude}`,
      );
    }
    const stop = new AbortController();
    options.stop?.addEventListener("abort", () => stop.abort(), { once: true });
    const run = runBounded(options.claude, claudeArguments(options), {
      cwd: options.cwd,
      env,
      deadline,
      stop: stop.signal,
    });
    const first = await Promise.race([
      recorder.firstRequest.then((body) => ({ body })),
      run.then((result) => ({ result })),
    ]);
    if ("body" in first) {
      if (log !== undefined) {
        // A scripted session runs to its end (or the deadline).
        const result = await run;
        if (result.timedOut) {
          throw new ObserveError(
            text`claude did not finish the scripted session within ${
              String(options.timeoutMs / 1000)
            } s: ${options.claude}`,
          );
        }
        return { version, body: new TextDecoder().decode(first.body), session: log.requests() };
      }
      // Let claude read the reply and end by itself; past the grace period it is killed.
      const grace = setTimeout(() => stop.abort(), 5_000);
      await run.finally(() => clearTimeout(grace));
      return { version, body: new TextDecoder().decode(first.body) };
    }
    const { result } = first;
    if (result.timedOut) {
      throw new ObserveError(
        text`claude posted nothing within ${String(options.timeoutMs / 1000)} s: ${options.claude}`,
      );
    }
    const detail = firstLineOf(result.stderr) || firstLineOf(result.stdout) || "no output";
    throw new ObserveError(
      text`claude exited ${String(result.code)} before posting a request: ${detail}`,
    );
  } finally {
    await recorder.close();
  }
}

const ChildOptions = z.deferred(() =>
  z.strictObject({
    claude: z.string(),
    cwd: z.string(),
    pluginDirs: z.array(z.string()),
    hooks: z.boolean(),
    timeoutMs: z.number(),
    plan: z.optional(ObservePlanSchema),
  })
);

const SessionSchema = z.deferred(() =>
  z.strictObject({
    main: z.array(z.strictObject({ step: z.number(), body: z.string() })),
    subagents: z.array(z.string()),
    requests: z.number(),
  })
);

const ChildResult = z.deferred(() =>
  z.union([
    z.strictObject({
      ok: z.literal(true),
      version: z.string(),
      body: z.string(),
      session: z.optional(SessionSchema),
    }),
    z.strictObject({ ok: z.literal(false), error: z.string(), sandbox: z.boolean() }),
  ])
);

/**
 * The observation child's whole run (inside the namespace): bring loopback up, observe, and
 * return the one JSON line to print. `sandbox: true` on an error means the namespace itself
 * failed (loopback could not be brought up), so the parent may fall back.
 */
export async function observeChild(
  env: Readonly<Record<string, string>>,
): Promise<string> {
  const raw = env[OBSERVE_CHILD_ENV];
  const parsed = ChildOptions.safeParse(raw === undefined ? undefined : JSON.parse(raw));
  if (!parsed.success) {
    return JSON.stringify({ ok: false, error: "bad observation options", sandbox: false });
  }
  const lo = await runBounded("ip", ["link", "set", "lo", "up"], {
    deadline: Date.now() + 10_000,
  }).catch(() => undefined);
  if (lo === undefined || lo.code !== 0) {
    return JSON.stringify({ ok: false, error: "cannot bring loopback up", sandbox: true });
  }
  try {
    const seen = await observeHere({ ...parsed.data, env });
    return JSON.stringify({ ok: true, ...seen });
  } catch (e) {
    // Printed here (names escaped), so the parent can print it verbatim.
    const error = e instanceof CtxkitError ? printed(e.text) : printed(text`${String(e)}`);
    return JSON.stringify({ ok: false, error, sandbox: false });
  }
}

/** The program to re-execute as the child: this script under `deno run`, or this binary. */
export function selfCommand(): string[] {
  if (Deno.build.standalone) return [Deno.execPath()];
  return [
    Deno.execPath(),
    "run",
    "--no-prompt",
    "--no-config",
    "--allow-read",
    "--allow-env",
    "--allow-net=127.0.0.1",
    "--allow-run",
    Deno.mainModule,
  ];
}

/**
 * True when this process runs as root (then `unshare` needs no user namespace). Read from
 * `/proc/self/status` (namespaces are Linux's), so `--observe` needs no `--allow-sys`.
 */
export function runsAsRoot(): boolean {
  try {
    const status = Deno.readTextFileSync("/proc/self/status");
    return /^Uid:\s+0\s/m.test(status);
  } catch {
    return false;
  }
}

/** The `unshare` flags of a fresh network and PID namespace (user namespace unless root). */
export function unshareArguments(root: boolean): string[] {
  const own = ["--net", "--pid", "--fork", "--kill-child"];
  return root ? own : ["--user", "--map-root-user", ...own];
}

/**
 * Observe inside a fresh network (and PID) namespace: `unshare` re-runs this program as the
 * child. Returns undefined when no namespace could be made (the caller decides whether to run
 * unsandboxed); throws an {@linkcode ObserveError} when the namespace worked but the observation
 * did not. `self` is the command that starts context-scan (tests pass `deno run … bin/context-scan.ts`).
 */
export async function observeSandboxed(
  options: ObserveOptions,
  unshare: string,
  self: readonly string[] = selfCommand(),
): Promise<Observation | undefined> {
  const root = runsAsRoot();
  const childOptions = {
    claude: options.claude,
    cwd: options.cwd,
    pluginDirs: [...options.pluginDirs],
    hooks: options.hooks,
    timeoutMs: options.timeoutMs,
    ...(options.plan === undefined ? {} : { plan: options.plan }),
  };
  const result = await runBounded(
    unshare,
    [...unshareArguments(root), "--", ...self, OBSERVE_CHILD_ARG],
    {
      cwd: options.cwd,
      env: { ...options.env, [OBSERVE_CHILD_ENV]: JSON.stringify(childOptions) },
      // The child has its own deadline; this one only catches a child that cannot keep it.
      deadline: Date.now() + options.timeoutMs + 10_000,
      stop: options.stop,
    },
  ).catch((e) => {
    if (e instanceof ObserveError) return undefined; // unshare itself is missing
    throw e;
  });
  if (result === undefined) return undefined;
  const line = new TextDecoder().decode(result.stdout).trim().split("\n").at(-1) ?? "";
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    // No child result: unshare could not make the namespace (or the child died).
    if (result.code !== 0 && new TextDecoder().decode(result.stderr).includes("unshare")) {
      return undefined;
    }
    throw new ObserveError(
      text`the observation child ended without a result (exit ${String(result.code)}): ${
        firstLineOf(result.stderr) || "no output"
      }`,
    );
  }
  const parsed = ChildResult.safeParse(value);
  if (!parsed.success) throw new ObserveError(text`the observation child's result is malformed`);
  const r = parsed.data;
  if (r.ok) {
    return {
      version: r.version,
      body: r.body,
      sandboxed: true,
      ...(r.session === undefined ? {} : { session: r.session }),
    };
  }
  if (r.sandbox) return undefined;
  throw new ObserveError(text`${verbatim(r.error)}`);
}

/** True when `path` is (after links) a regular file someone may execute. */
export function isExecutableFile(path: string): boolean {
  try {
    const st = Deno.statSync(path);
    return st.isFile && st.mode !== null && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The first executable named `name` on `PATH`, or undefined. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(":")) {
    if (dir !== "" && isExecutableFile(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return undefined;
}
