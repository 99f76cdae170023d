/**
 * Shared fixtures of the prose CLI tests: a run wrapper that pins the clock, checks the exit
 * contract line of every run (`references/output.md#exit-line`), and flag-file builders.
 *
 * @module
 */

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  baseEnv,
  lines,
  makeTempDir,
  type RunOptions,
  type RunResult,
  runTool,
  toolArgv,
} from "./_helpers.ts";

/** The pinned clock of every run (CTXKIT_NOW_MS). */
export const NOW = 1_800_000_000_000;

/** A fresh state root (the directory does not exist yet: writers must create it). */
export function freshRoot(): string {
  return join(makeTempDir("prose-cli-"), "cellm");
}

/** Options of {@linkcode prose}. */
export interface ProseRun extends RunOptions {
  /** Epoch-ms clock (default {@linkcode NOW}). */
  now?: number;
  /** Do not append `--local`. */
  backend?: boolean;
}

const EXIT_LINE = /^(✅ EXIT:0|❌ FAILED EXIT:[12])$/;

/** Run `prose args --local` with `CELLM_DIR=root`, asserting the exit contract line. */
export function prose(root: string | undefined, args: string[], options: ProseRun = {}): RunResult {
  const env: Record<string, string | undefined> = {
    ...(root === undefined ? {} : { CELLM_DIR: root }),
    CTXKIT_NOW_MS: String(options.now ?? NOW),
    ...options.env,
  };
  const r = runTool("prose", options.backend ? args : [...args, "--local"], { ...options, env });
  const last = lines(r.stderr).at(-1) ?? "";
  assert.match(last, EXIT_LINE, `last stderr line of prose ${args.join(" ")}: ${r.stderr}`);
  assert.equal(last, r.code === 0 ? "✅ EXIT:0" : `❌ FAILED EXIT:${r.code}`);
  return r;
}

/** The flag path under `root`. */
export function flagPath(root: string): string {
  return join(root, "prose", ".active");
}

/** The parsed flag file under `root`. */
export function flagJson(root: string): Record<string, unknown> {
  return JSON.parse(readFileSync(flagPath(root), "utf8"));
}

/** Plant raw flag bytes (dir 0700, file `mode`). */
export function plantFlag(root: string, content: string | Uint8Array, mode = 0o600): void {
  mkdirSync(join(root, "prose"), { recursive: true, mode: 0o700 });
  writeFileSync(flagPath(root), content);
  chmodSync(flagPath(root), mode);
}

/** Write the JSONC config under `root`. */
export function writeConfig(root: string, text: string): void {
  mkdirSync(join(root, "prose"), { recursive: true, mode: 0o700 });
  writeFileSync(join(root, "prose", "config.json"), text);
}

/** A valid flag object with overrides. */
export function flagObject(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    level: "full",
    ttl: { unit: "block", value: 0 },
    expiresAt: null,
    activatedAt: NOW,
    source: "manual",
    ...patch,
  };
}

/** stdout split in lines. */
export function out(r: RunResult): string[] {
  return lines(r.stdout);
}

/** A `prose serve` child process. */
export interface ServeChild {
  /** The listening line's URL. */
  url: string;
  /** The server's pid. */
  pid: number;
  /** Everything printed on stdout so far (the listening line first). */
  stdout: () => string;
  /** Send `signal` and wait for the exit: code and full output. */
  stop: (signal: Deno.Signal) => Promise<{ code: number; stdout: string; stderr: string }>;
}

/**
 * Start `prose serve` in a child process; resolve once it printed its listening line. (Deno.Command,
 * not node:child_process: the latter reports a signalled child as killed even when it exited 0.)
 */
export async function spawnServe(
  args: string[],
  env: Record<string, string>,
  options: { fdLimit?: number } = {},
): Promise<ServeChild> {
  const command = [...toolArgv("prose"), "serve", ...args];
  // With fdLimit, the server runs under `ulimit -n <fdLimit>` (the shell execs it: same pid).
  const [program, ...argv] = options.fdLimit === undefined
    ? command
    : ["/bin/sh", "-c", `ulimit -n ${options.fdLimit} && exec "$@"`, "sh", ...command];
  const child = new Deno.Command(program, {
    args: argv,
    clearEnv: true,
    env: { ...baseEnv(), ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const decoder = new TextDecoder();
  let out = "";
  let err = "";
  const drainErr = (async () => {
    for await (const c of child.stderr) err += decoder.decode(c, { stream: true });
  })();
  const reader = child.stdout.getReader();
  const drainOut = async () => {
    while (true) {
      const { done, value } = await reader.read();
      if (done) return;
      out += decoder.decode(value, { stream: true });
    }
  };
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  let url: string | undefined;
  // Bounded: the listening line comes first, within 30 s (the timer kills a stuck child).
  while (url === undefined) {
    const { done, value } = await reader.read();
    if (done) break;
    out += decoder.decode(value, { stream: true });
    url = out.match(/^PROSE: serve listening=(http:\/\/127\.0\.0\.1:[0-9]+) db=.*\n/)?.[1];
  }
  clearTimeout(timer);
  const rest = drainOut();
  if (url === undefined) {
    const status = await child.status;
    await Promise.all([rest, drainErr]);
    throw new Error(`serve exited early (${status.code}): ${out} ${err}`);
  }
  return {
    url,
    pid: child.pid,
    stdout: () => out,
    stop: async (signal) => {
      child.kill(signal);
      const status = await child.status;
      await Promise.all([rest, drainErr]);
      return { code: status.code, stdout: out, stderr: err };
    },
  };
}

/** A second uid's process started by {@linkcode startAsUser}. */
export interface UserProcess {
  /** Kill it (SIGKILL) and wait until it is gone. */
  stop: () => Promise<void>;
}

/**
 * Start `run` (a second uid's deno, from `denoAsUser` in `tests/_helpers.ts`) with `args` more
 * arguments; resolve once the first thing it prints on stdout matches `ready` (it is then doing
 * what the test needs: listening, flooding…). Its stderr is discarded.
 */
export async function startAsUser(
  run: { command: string[]; env: Record<string, string> },
  args: string[],
  ready: RegExp,
): Promise<UserProcess> {
  const [program, ...argv] = run.command;
  const child = new Deno.Command(program, {
    args: [...argv, ...args],
    clearEnv: true,
    env: run.env,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const stop = async () => {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    await child.stdout.cancel().catch(() => {});
  };
  const reader = child.stdout.getReader();
  const first = await reader.read();
  reader.releaseLock();
  const said = new TextDecoder().decode(first.value);
  if (!ready.test(said)) {
    await stop();
    throw new Error(`the second uid's process said ${JSON.stringify(said)}, not ${ready}`);
  }
  return { stop };
}
