/**
 * A whole Claude Code session for a test: the pinned `claude`, a project of the test's own, and a
 * scripted local model, all inside a fresh network namespace (`unshare`, only loopback in it, the
 * model included), so nothing can leave the machine. The session's child
 * (`tests/_claude_session_child.ts`) runs inside it; this module only starts it and reads its
 * result. Every `claude` started here runs inside the namespace, never outside it.
 *
 * @module
 */

import { join } from "node:path";
import { findOnPath, runsAsRoot, unshareArguments } from "../lib/scan/observe/run.ts";
import type { SessionOptions, SessionResult } from "./_claude_session_child.ts";
import { REPO } from "./_helpers.ts";

export type { SessionResult } from "./_claude_session_child.ts";

/**
 * Run one session (see {@linkcode SessionOptions}) in a fresh network and PID namespace and return
 * what it printed and what the model saw. The namespace must be available (the caller checked
 * with `observedClaude()` from `tests/_claude.ts`).
 */
export async function runClaudeSession(options: SessionOptions): Promise<SessionResult> {
  const unshare = findOnPath("unshare", Deno.env.get("PATH"));
  if (unshare === undefined) throw new Error("unshare vanished since the probe");
  const out = await new Deno.Command(unshare, {
    args: [
      ...unshareArguments(runsAsRoot()),
      "--",
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      join(REPO, "deno.json"),
      join(REPO, "tests", "_claude_session_child.ts"),
    ],
    env: { CTXKIT_CLAUDE_SESSION: JSON.stringify(options) },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // A cap, not an expectation: the child kills claude at its own deadline first.
    signal: AbortSignal.timeout(options.timeoutMs + 60_000),
  }).output();
  const stdout = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(stdout);
  } catch {
    throw new Error(
      `the Claude Code session ended without a result (exit ${out.code}): ${
        new TextDecoder().decode(out.stderr).slice(-2000)
      }`,
    );
  }
}
