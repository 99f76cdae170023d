/**
 * Test helpers: run a ctxkit tool as a user would (a child process with a controlled environment),
 * against the sources (`bin/<tool>.ts`) or, with `CTXKIT_TEST_TARGET=bundle`, against the single-file
 * bundles (`dist/<tool>.js`) that `deno task bundle` builds.
 *
 * @module
 */

import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";

/** Repository root (the directory holding deno.json). */
export const REPO = realpathSync(new URL("..", import.meta.url).pathname);

/** The tools a test can run. */
export type Tool = "context-scan" | "context-guard" | "text-guard" | "prose";

/** Which build the CLI tests exercise: `source` (default) or `bundle`. */
export const TARGET: "source" | "bundle" = Deno.env.get("CTXKIT_TEST_TARGET") === "bundle"
  ? "bundle"
  : "source";

/** The command line (after the deno executable) that runs `tool`. */
export function toolCommand(tool: Tool): string[] {
  return TARGET === "bundle"
    ? ["run", "-A", "--no-config", join(REPO, "dist", `${tool}.js`)]
    : ["run", "-A", "--config", join(REPO, "deno.json"), join(REPO, "bin", `${tool}.ts`)];
}

/** What a finished run printed and returned. */
export interface RunResult {
  /** Exit code. */
  code: number;
  /** stdout as UTF-8 text. */
  stdout: string;
  /** stderr as UTF-8 text. */
  stderr: string;
  /** stdout bytes. */
  stdoutBytes: Uint8Array;
}

/** Options for {@linkcode runTool}. */
export interface RunOptions {
  /** Working directory (default: a fresh temp dir). */
  cwd?: string;
  /**
   * Environment on top of the isolated base (PATH, a temp HOME, no CLAUDE_* vars). A value of
   * `undefined` removes the variable.
   */
  env?: Record<string, string | undefined>;
  /** Bytes or text for stdin. */
  stdin?: string | Uint8Array;
  /** Extra deno flags placed before the script (e.g. narrower permissions). */
  denoFlags?: string[];
  /** Replace the default `-A` permission flag (sources) with these. */
  permissions?: string[];
}

let scratchHome: string | undefined;

/** The environment every run starts from: never the real home or Claude config. */
export function baseEnv(): Record<string, string> {
  scratchHome ??= makeTempDir("ctxkit-home-");
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: scratchHome,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.invalid",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.invalid",
  };
}

function buildEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...baseEnv(), ...extra };
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/**
 * `[program, args]` that run `command` with exactly `env` and nothing inherited. Deno's
 * `node:child_process` merges a given `env` into the parent's environment instead of replacing
 * it, so isolation goes through `env -i`.
 */
export function isolatedCommand(
  env: Record<string, string>,
  command: string[],
): [string, string[]] {
  return ["env", ["-i", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...command]];
}

function commandFor(tool: Tool, options: RunOptions): string[] {
  const cmd = toolCommand(tool);
  if (options.permissions) cmd.splice(1, 1, ...options.permissions);
  if (options.denoFlags) cmd.splice(1, 0, ...options.denoFlags);
  return cmd;
}

/**
 * Run `tool` with `args` synchronously and capture everything.
 *
 * @example
 * ```ts ignore
 * const r = runTool("context-scan", ["--help"]);
 * assertEquals(r.code, 0);
 * ```
 */
export function runTool(tool: Tool, args: string[], options: RunOptions = {}): RunResult {
  const cwd = options.cwd ?? makeTempDir("ctxkit-cwd-");
  const env = buildEnv({ PWD: cwd, ...options.env });
  return runIsolated([Deno.execPath(), ...commandFor(tool, options), ...args], cwd, env, options);
}

/** Run `command` synchronously in `cwd` with exactly `env` (no inherited variables). */
function runIsolated(
  command: string[],
  cwd: string,
  env: Record<string, string>,
  options: RunOptions,
): RunResult {
  const [program, programArgs] = isolatedCommand(env, command);
  const result = spawnSync(program, programArgs, {
    cwd,
    env,
    input: options.stdin,
    maxBuffer: 1 << 30,
  });
  const stdoutBytes = new Uint8Array(result.stdout ?? new Uint8Array());
  return {
    code: result.status ?? 128,
    stdout: new TextDecoder().decode(stdoutBytes),
    stderr: new TextDecoder().decode(result.stderr ?? new Uint8Array()),
    stdoutBytes,
  };
}

/** Run `tool` asynchronously (for concurrency tests); resolves when it exits. */
export function runToolAsync(
  tool: Tool,
  args: string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const cwd = options.cwd ?? makeTempDir("ctxkit-cwd-");
  const env = buildEnv({ PWD: cwd, ...options.env });
  return new Promise((resolve) => {
    const [program, programArgs] = isolatedCommand(env, [
      Deno.execPath(),
      ...commandFor(tool, options),
      ...args,
    ]);
    const child = spawn(program, programArgs, { cwd, env });
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    child.stdout.on("data", (c: Uint8Array) => out.push(c));
    child.stderr.on("data", (c: Uint8Array) => err.push(c));
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
    child.on("close", (code: number | null) => {
      const stdoutBytes = concat(out);
      resolve({
        code: code ?? 128,
        stdout: new TextDecoder().decode(stdoutBytes),
        stderr: new TextDecoder().decode(concat(err)),
        stdoutBytes,
      });
    });
  });
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

let scratchRoot: string | undefined;

/**
 * The per-process parent of every temp dir a test makes, removed when the test process ends (set
 * `CTXKIT_KEEP_TEMP=1` to keep it for a post-mortem). Mode 0755 so unprivileged runs can reach the
 * shared fixtures below it.
 */
function scratch(): string {
  if (scratchRoot === undefined) {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "ctxkit-test-")));
    chmodSync(root, 0o755);
    scratchRoot = root;
    if (Deno.env.get("CTXKIT_KEEP_TEMP") !== "1") {
      globalThis.addEventListener("unload", () => removeDir(root));
    }
  }
  return scratchRoot;
}

/** A fresh physical temp directory (symlink-free path), removed with the test process's scratch. */
export function makeTempDir(prefix = "ctxkit-"): string {
  return realpathSync(mkdtempSync(join(scratch(), prefix)));
}

/** Remove a temp directory tree, ignoring errors. */
export function removeDir(path: string): void {
  rmSync(path, { recursive: true, force: true });
}

/**
 * Write a tree of files under `root`: keys are relative paths, values the content.
 *
 * @example
 * ```ts ignore
 * writeTree(root, { "CLAUDE.md": "# Demo\n", ".claude/rules/a.md": "x\n" });
 * ```
 */
export function writeTree(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [rel, content] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}

/** Run git in `cwd` with the isolated environment; throws on failure. */
export function git(cwd: string, ...args: string[]): string {
  const r = spawnSync("git", args, { cwd, env: buildEnv(), encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout;
}

/** Split stderr into lines without the trailing empty one. */
export function lines(text: string): string[] {
  const parts = text.split("\n");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}

/** True when tests run as root (permission-denied fixtures cannot be built then). */
export const IS_ROOT = Deno.uid?.() === 0;

/** The uid/gid {@linkcode runToolAsUser} switches to when tests run as root (`nobody`). */
export const UNPRIVILEGED_ID = 65534;

/** A fresh temp directory others may enter and read (mode 0755): fixtures for unprivileged runs. */
export function makeSharedTempDir(prefix = "ctxkit-shared-"): string {
  const dir = makeTempDir(prefix);
  chmodSync(dir, 0o755);
  return dir;
}

let sharedDenoDir: string | undefined;
let sharedHome: string | undefined;

/**
 * Run `tool` like {@linkcode runTool}, but as an unprivileged user, so "unreadable" fixtures
 * (chmod 000) really are unreadable. As root it goes through
 * `setpriv --reuid=65534 --regid=65534 --clear-groups`, with a world-writable DENO_DIR and a
 * world-readable temp HOME; as an ordinary user it runs directly. Fixture directories must be
 * traversable by others (see {@linkcode makeSharedTempDir}).
 *
 * @example
 * ```ts ignore
 * const root = makeSharedTempDir();
 * const r = runToolAsUser("context-scan", ["--root", root]);
 * ```
 */
export function runToolAsUser(tool: Tool, args: string[], options: RunOptions = {}): RunResult {
  if (!IS_ROOT) return runTool(tool, args, options);
  if (sharedDenoDir === undefined) {
    sharedDenoDir = makeTempDir("ctxkit-denodir-");
    chmodSync(sharedDenoDir, 0o777);
  }
  sharedHome ??= makeSharedTempDir("ctxkit-home-");
  const cwd = options.cwd ?? makeSharedTempDir("ctxkit-cwd-");
  const env = buildEnv({ HOME: sharedHome, DENO_DIR: sharedDenoDir, PWD: cwd, ...options.env });
  const id = String(UNPRIVILEGED_ID);
  const setpriv = ["setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups"];
  return runIsolated(
    [...setpriv, Deno.execPath(), ...commandFor(tool, options), ...args],
    cwd,
    env,
    options,
  );
}
