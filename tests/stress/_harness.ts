/**
 * Shared pieces of the stress suite: the seeded PRNG (`CTXKIT_STRESS_SEED`), a tool run that can be
 * killed with SIGKILL after a delay or at a fault point (lib/faults.ts), and tree probes for
 * "every user file is old or new" and "no ctxkit temp file left".
 *
 * @module
 */

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import {
  baseEnv,
  isolatedCommand,
  makeTempDir,
  REPO,
  type RunOptions,
  type Tool,
  toolArgv,
} from "../_helpers.ts";

/** The fixed default seed CI uses; override with `CTXKIT_STRESS_SEED=<integer>`. */
export const DEFAULT_SEED = 20261130;

/** The seed of this run (printed by every stress test so a failure can be replayed). */
export function stressSeed(): number {
  const raw = Deno.env.get("CTXKIT_STRESS_SEED");
  return raw !== undefined && /^[0-9]{1,9}$/.test(raw) ? Number(raw) : DEFAULT_SEED;
}

/** mulberry32: a small deterministic PRNG in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** How a killable run ended. */
export interface KillableResult {
  /** Exit code, or `null` when a signal ended it. */
  code: number | null;
  /** The signal that ended it, if any. */
  signal: string | null;
  /** stdout text. */
  stdout: string;
  /** stderr text. */
  stderr: string;
  /** Wall time in ms. */
  ms: number;
}

/** Options of {@linkcode runKillable}. */
export interface KillableOptions extends RunOptions {
  /** `CTXKIT_FAULT_POINT` for the child (`name` or `name:N`). */
  faultPoint?: string;
  /** Send SIGKILL after this many ms (if still running). */
  killAfterMs?: number;
}

/** Run `tool` as runToolAsync does (isolated env), optionally killing it. */
export function runKillable(
  tool: Tool,
  args: string[],
  options: KillableOptions,
): Promise<KillableResult> {
  const cwd = options.cwd ?? makeTempDir("ctxkit-cwd-");
  const merged: Record<string, string | undefined> = {
    ...baseEnv(),
    PWD: cwd,
    ...options.env,
    ...(options.faultPoint === undefined ? {} : { CTXKIT_FAULT_POINT: options.faultPoint }),
  };
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(merged)) if (v !== undefined) env[k] = v;
  // `env -i` execs deno in place, so the pid we signal is deno's own.
  // [deno, "run", "-A", …]: the permissions replace "-A" (a binary takes none: runTool refuses them).
  const cmd = toolArgv(tool);
  if (options.permissions) cmd.splice(2, 1, ...options.permissions);
  const [program, programArgs] = isolatedCommand(env, [...cmd, ...args]);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(program, programArgs, { cwd, env });
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    child.stdout.on("data", (c: Uint8Array) => out.push(c));
    child.stderr.on("data", (c: Uint8Array) => err.push(c));
    child.stdin.end();
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (options.killAfterMs !== undefined) {
      timer = setTimeout(() => child.kill("SIGKILL"), options.killAfterMs);
    }
    child.on("close", (code: number | null, signal: string | null) => {
      if (timer !== undefined) clearTimeout(timer);
      const dec = new TextDecoder();
      resolve({
        code,
        signal,
        stdout: dec.decode(concat(out)),
        stderr: dec.decode(concat(err)),
        ms: performance.now() - started,
      });
    });
  });
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Hex SHA-256 of bytes or text. */
export function sha(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Hex SHA-256 of a file, or `MISSING`. */
export function hashFile(path: string): string {
  try {
    return sha(readFileSync(path));
  } catch {
    return "MISSING";
  }
}

/** Every path under `dir` (relative, `.git` skipped) whose name marks a ctxkit temp file. */
export function ctxkitTemps(dir: string): string[] {
  const found: string[] = [];
  const walk = (abs: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(abs);
    } catch {
      return;
    }
    for (const name of names) {
      if (name === ".git") continue;
      const r = rel === "" ? name : `${rel}/${name}`;
      if (name.includes(".ctxkit-tmp-") || name.startsWith(".active.tmp-")) found.push(r);
      try {
        if (lstatSync(`${abs}/${name}`).isDirectory()) walk(`${abs}/${name}`, r);
      } catch { /* vanished */ }
    }
  };
  walk(dir, "");
  return found.sort();
}

/** The permission flags of `tool`'s shebang line (what a user running `./bin/<tool>.ts` grants). */
export function shebangPermissions(tool: Tool): string[] {
  const first = readFileSync(join(REPO, "bin", `${tool}.ts`), "utf8").split("\n")[0];
  const m = /^#!\/usr\/bin\/env -S deno run (.*)$/.exec(first);
  if (m === null) throw new Error(`no deno shebang in bin/${tool}.ts: ${first}`);
  return m[1].trim().split(/\s+/);
}

/** Backdate every ctxkit temp file under `dir` (a user coming back later: past the 60 s rule). */
export function ageTemps(dir: string): void {
  for (const rel of ctxkitTemps(dir)) utimesSync(join(dir, rel), new Date(0), new Date(0));
}

/** A kill plan: a fault point (must be reached) or a random delay (may land anywhere). */
export type KillPlan = { faultPoint: string } | { killAfterMs: number };

/** Human-readable plan for assertion messages. */
export function describePlan(plan: KillPlan): string {
  return "faultPoint" in plan ? `fault ${plan.faultPoint}` : `kill after ${plan.killAfterMs}ms`;
}

/** Tally of one scenario, printed at its end. */
export class Tally {
  /** Runs that died of SIGKILL. */
  killed = 0;
  /** Runs that finished before the random kill. */
  finished = 0;
  /** Record `r`. */
  add(r: KillableResult): void {
    if (r.signal === "SIGKILL") this.killed++;
    else this.finished++;
  }
  /** One summary line. */
  line(name: string, seed: number): string {
    return `${name}: ${this.killed} killed, ${this.finished} finished first (seed ${seed})`;
  }
}
