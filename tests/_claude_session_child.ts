/**
 * One Claude Code session against a scripted local model, run INSIDE a fresh network namespace
 * (`tests/_claude_session.ts` starts it under `unshare`; never run it any other way): it brings
 * loopback up, answers every `POST /v1/messages` with a streamed `end_turn` text reply (the
 * observation recorder's), notes the prose flag file as it is when each request arrives, runs
 * `claude -p` with the prompts, and prints one JSON line: exit code, stdout, stderr and the flag
 * seen by each request.
 *
 * The options come as JSON in `CTXKIT_CLAUDE_SESSION` (see {@linkcode SessionOptions}).
 *
 * @module
 */

import { minimalStreamedReply } from "../lib/scan/observe/recorder.ts";
import { claudeEnvironment } from "../lib/scan/observe/run.ts";
import { readCapped } from "../lib/streams.ts";

/** What one session runs. */
export interface SessionOptions {
  /** The `claude` executable. */
  claude: string;
  /** The project directory it runs in. */
  cwd: string;
  /** The user prompts, one agent loop each (more than one: stream-json input, one session). */
  prompts: string[];
  /** The environment `claude` (and its hooks) start from. */
  env: Record<string, string>;
  /** The flag file to note at each request. */
  flagPath: string;
  /** Kill `claude` after this long (ms): a cap, not an expectation. */
  timeoutMs: number;
}

/** What the session printed and saw. */
export interface SessionResult {
  code: number;
  stdout: string;
  stderr: string;
  /** The flag file's text (or null when absent) as each model request arrived. */
  flags: (string | null)[];
}

function readFlag(path: string): string | null {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return null;
  }
}

async function main(): Promise<SessionResult> {
  const options: SessionOptions = JSON.parse(Deno.env.get("CTXKIT_CLAUDE_SESSION") ?? "{}");
  const lo = await new Deno.Command("ip", { args: ["link", "set", "lo", "up"] }).output();
  if (!lo.success) throw new Error("cannot bring loopback up");
  const flags: (string | null)[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method !== "POST" || new URL(req.url).pathname !== "/v1/messages") {
      return new Response('{"type":"error"}', { status: 404 });
    }
    flags.push(readFlag(options.flagPath));
    const { bytes } = await readCapped(req.body, 64 * 1024 * 1024);
    let model = "unknown";
    try {
      model = JSON.parse(new TextDecoder().decode(bytes)).model ?? model;
    } catch { /* answered all the same */ }
    return new Response(minimalStreamedReply(model), {
      headers: { "content-type": "text/event-stream" },
    });
  });
  const env = claudeEnvironment(options.env, `http://127.0.0.1:${server.addr.port}`);
  const many = options.prompts.length > 1;
  const args = many
    ? ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    : ["-p", options.prompts[0]];
  args.push("--no-session-persistence", "--strict-mcp-config");
  const child = new Deno.Command(options.claude, {
    args,
    cwd: options.cwd,
    env,
    clearEnv: true,
    stdin: many ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  if (many) {
    const writer = child.stdin.getWriter();
    const lines = options.prompts.map((text) =>
      JSON.stringify({ type: "user", message: { role: "user", content: text } }) + "\n"
    );
    await writer.write(new TextEncoder().encode(lines.join("")));
    await writer.close();
  }
  const out = await child.output();
  clearTimeout(timer);
  await server.shutdown();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr), flags };
}

if (import.meta.main) console.log(JSON.stringify(await main()));
