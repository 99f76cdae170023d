/**
 * Test helpers: run a ctxkit tool as a user would (a child process with a controlled environment),
 * against the sources (`bin/<tool>.ts`), or with `CTXKIT_TEST_TARGET=bundle` against the single-file
 * bundles (`dist/<tool>.js`) that `deno task bundle` builds, or with `CTXKIT_TEST_TARGET=binary`
 * against the compiled binaries (`dist/bin/<host target>/<tool>`, or `$CTXKIT_BINARY_DIR/<tool>`)
 * that `deno task compile` builds.
 *
 * @module
 */

import {
  accessSync,
  chmodSync,
  constants as fsConstants,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  type Stats,
  statSync,
  writeFileSync,
} from "node:fs";
import { spawn, spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { tmpdir } from "node:os";
import { binaryFileName, standInBundle } from "../scripts/compile.ts";
import { type Tool, TOOLS } from "../scripts/tools.ts";

/** Repository root (the directory holding deno.json). */
export const REPO = realpathSync(new URL("..", import.meta.url).pathname);

/** The tools a test can run. */
export type { Tool } from "../scripts/tools.ts";

/** A build the CLI tests can exercise. */
export type Target = "source" | "bundle" | "binary";

/**
 * `CTXKIT_TEST_TARGET` read strictly: unset or empty is `source`; a misspelt value fails every test
 * file at once rather than silently testing the sources instead of what was asked for.
 */
function targetFromEnv(value: string | undefined): Target {
  if (value === undefined || value === "" || value === "source") return "source";
  if (value === "bundle" || value === "binary") return value;
  throw new Error(`CTXKIT_TEST_TARGET=${value}: expected source, bundle or binary`);
}

/** Which build the CLI tests exercise: `source` (default), `bundle` or `binary`. */
export const TARGET: Target = targetFromEnv(Deno.env.get("CTXKIT_TEST_TARGET"));

/**
 * Whether the target runs under `deno run`, so a test can pass deno flags
 * ({@linkcode RunOptions.permissions}, {@linkcode RunOptions.denoFlags}): true for sources and
 * bundles, false for a binary, whose permissions (`-A`) were fixed when it was compiled.
 */
export const TARGET_TAKES_DENO_FLAGS: boolean = TARGET !== "binary";

/**
 * For a test that needs deno flags (narrower permissions…): true, after printing one
 * `SKIP: <reason>` line, when the target is a compiled binary, which takes none.
 *
 * @example
 * ```ts ignore
 * Deno.test("no --allow-write → one-line error", () => {
 *   if (skipWithoutDenoFlags()) return;
 *   // … runTool(…, { permissions: [...] })
 * });
 * ```
 */
export function skipWithoutDenoFlags(): boolean {
  if (TARGET_TAKES_DENO_FLAGS) return false;
  console.log("SKIP: a compiled binary takes no deno flags (its permissions are fixed at compile)");
  return true;
}

/**
 * Where the binaries under test live: `$CTXKIT_BINARY_DIR` (relative to the working directory)
 * when set, else `dist/bin/<host target>` as `deno task compile <host target>` writes it.
 */
export const BINARY_DIR: string = Deno.env.get("CTXKIT_BINARY_DIR")
  ? resolve(Deno.env.get("CTXKIT_BINARY_DIR")!)
  : join(REPO, "dist", "bin", Deno.build.target);

/** The binary of `tool` under test; throws, saying how to build it, when it is missing. */
export function binaryPath(tool: Tool): string {
  const path = join(BINARY_DIR, binaryFileName(tool));
  try {
    accessSync(path, fsConstants.X_OK);
  } catch {
    throw new Error(
      `CTXKIT_TEST_TARGET=binary: no executable ${path}; build it with ` +
        `\`deno task compile ${Deno.build.target}\` (or, without the runtime download, ` +
        "`deno task compile:stand-in`), or point CTXKIT_BINARY_DIR at the binaries",
    );
  }
  return path;
}

/**
 * The words the tool prints to run itself again (a manifest's `restore_cmd`, the prose git-hook
 * block) under this target, before the subcommand: what `selfCommand` (lib/_cli/self.ts) prints
 * for the running source, bundle or binary with `permissions`.
 */
export function selfCommandWords(tool: Tool, permissions: readonly string[]): string[] {
  return selfCommandWordsIn(
    { runtime: Deno.execPath(), root: REPO, binaries: BINARY_DIR },
    tool,
    permissions,
  );
}

/**
 * {@linkcode selfCommandWords} for a run by {@linkcode runToolAsUser}: the program it runs may be a
 * copy that user can reach (a checkout under a private folder is copied), and the tool names the
 * program it runs as.
 */
export function selfCommandWordsAsUser(tool: Tool, permissions: readonly string[]): string[] {
  if (!IS_ROOT) return selfCommandWords(tool, permissions);
  userSetup ??= setUpUser();
  if (!userSetup.ok) throw new Error(`selfCommandWordsAsUser: ${userSetup.reason}`);
  return selfCommandWordsIn(userSetup.place, tool, permissions);
}

/** {@linkcode selfCommandWords} for a program at `place` (the checkout, or a copy of it). */
function selfCommandWordsIn(
  place: ProgramPlace,
  tool: Tool,
  permissions: readonly string[],
): string[] {
  if (TARGET === "source") {
    return [
      place.runtime,
      "run",
      ...permissions,
      "--no-config",
      join(place.root, "bin", `${tool}.ts`),
    ];
  }
  if (TARGET === "bundle") {
    return [
      place.runtime,
      "run",
      ...permissions,
      "--no-config",
      join(place.root, "dist", `${tool}.js`),
    ];
  }
  const binary = place.binaries === BINARY_DIR
    ? binaryPath(tool)
    : join(place.binaries, binaryFileName(tool));
  const bundle = standInBundle(binary);
  return bundle === undefined
    ? [binary]
    : [Deno.execPath(), "run", ...permissions, "--no-config", bundle];
}

/**
 * The name `--help` and `--version` give `tool` under {@linkcode TARGET} when run from a directory
 * outside the checkout (`references/cli.md#the-form-it-runs-as`): the absolute source or bundle, or
 * a compiled binary's file name (a stand-in runs its bundle, so it is named by the bundle's path).
 */
export function shownProgram(tool: Tool): string {
  if (TARGET === "source") return join(REPO, "bin", `${tool}.ts`);
  if (TARGET === "bundle") return join(REPO, "dist", `${tool}.js`);
  return standInBundle(binaryPath(tool)) ?? binaryFileName(tool);
}

/**
 * The whole command line, program first, that runs `tool` under {@linkcode TARGET}: the deno
 * executable and its arguments for sources and bundles, the binary alone for a binary.
 */
export function toolArgv(tool: Tool): string[] {
  return toolArgvIn({ runtime: Deno.execPath(), root: REPO, binaries: BINARY_DIR }, tool);
}

/**
 * The command line after the deno executable that runs `tool`, for sources and bundles only.
 *
 * @deprecated A binary is not run by deno: use {@linkcode toolArgv}, which names the program too.
 * Under `CTXKIT_TEST_TARGET=binary` this throws.
 */
export function toolCommand(tool: Tool): string[] {
  if (TARGET === "binary") {
    throw new Error(
      "toolCommand() is the argument list after `deno`, and a binary is not run by deno: " +
        "use toolArgv(), which names the program too",
    );
  }
  return toolArgvIn({ runtime: Deno.execPath(), root: REPO, binaries: BINARY_DIR }, tool).slice(1);
}

/** Where a run finds its program: the deno runtime, the program tree, the binaries' directory. */
interface ProgramPlace {
  /** The deno executable (sources and bundles; for a binary, the one the user-switch probe checks). */
  runtime: string;
  /** The program tree holding `bin/` and `dist/` (the checkout, or a copy of it). */
  root: string;
  /** The directory holding the binaries (binary target). */
  binaries: string;
}

/** {@linkcode toolArgv} for a program at `place` (the checkout, or a copy of it). */
function toolArgvIn(place: ProgramPlace, tool: Tool): string[] {
  if (TARGET === "binary") {
    return [
      place.binaries === BINARY_DIR ? binaryPath(tool) : join(place.binaries, binaryFileName(tool)),
    ];
  }
  return TARGET === "bundle"
    ? [place.runtime, "run", "-A", "--no-config", join(place.root, "dist", `${tool}.js`)]
    : [
      place.runtime,
      "run",
      "-A",
      "--config",
      join(place.root, "deno.json"),
      join(place.root, "bin", `${tool}.ts`),
    ];
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
  /**
   * Extra deno flags placed before the script (e.g. narrower permissions). Not for a binary
   * target: see {@linkcode skipWithoutDenoFlags}.
   */
  denoFlags?: string[];
  /**
   * Replace the default `-A` permission flag with these. Not for a binary target: see
   * {@linkcode skipWithoutDenoFlags}.
   */
  permissions?: string[];
}

let denoDir: string | undefined;

/**
 * The Deno cache of whoever runs the tests (`DENO_DIR`, else `deno info --json`): a command run
 * under a test's fresh HOME keeps it, so `deno bundle` does not fetch its esbuild again.
 */
export function runnersDenoDir(): string {
  const set = Deno.env.get("DENO_DIR");
  if (set !== undefined && set !== "") return set;
  if (denoDir !== undefined) return denoDir;
  const r = new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
    .outputSync();
  // No zod here: this module is also loaded by runs that have no npm dependencies.
  const info: unknown = JSON.parse(new TextDecoder().decode(r.stdout));
  const dir = typeof info === "object" && info !== null && "denoDir" in info
    ? info.denoDir
    : undefined;
  if (typeof dir !== "string") throw new Error("deno info --json names no denoDir");
  denoDir = dir;
  return denoDir;
}

let scratchHome: string | undefined;

/**
 * The environment every run starts from: never the real home or Claude config. Deno's cache is
 * the runner's own ({@linkcode runnersDenoDir}), not one under the test's fresh HOME: a fresh
 * cache makes every run compile every module again (0.19 s of CPU a run instead of 0.08 s,
 * thousands of runs in the suite) and is nothing a user's machine does.
 */
export function baseEnv(): Record<string, string> {
  scratchHome ??= makeTempDir("ctxkit-home-");
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: scratchHome,
    NO_COLOR: "1",
    DENO_NO_UPDATE_CHECK: "1",
    DENO_DIR: runnersDenoDir(),
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

/** The whole command line, program first, that runs `tool` with `options`' deno flags. */
function commandFor(
  tool: Tool,
  options: RunOptions,
  place: ProgramPlace = { runtime: Deno.execPath(), root: REPO, binaries: BINARY_DIR },
): string[] {
  if (TARGET === "binary" && (options.permissions || options.denoFlags)) {
    // Dropping the flags would run the test with -A and prove nothing; fail it by name instead.
    throw new Error(
      "a compiled binary takes no deno flags (permissions/denoFlags): " +
        "skip this test under CTXKIT_TEST_TARGET=binary with skipWithoutDenoFlags()",
    );
  }
  const cmd = toolArgvIn(place, tool);
  // cmd is [deno, "run", "-A", …]: the permissions replace "-A", the flags go after "run".
  if (options.permissions) cmd.splice(2, 1, ...options.permissions);
  if (options.denoFlags) cmd.splice(2, 0, ...options.denoFlags);
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
  return runCommand([...commandFor(tool, options), ...args], options);
}

/**
 * Run `command` (program first) as {@linkcode runTool} runs a tool: in `options.cwd` (default: a
 * fresh temp dir), with the isolated environment and `options.env` on top of it.
 */
export function runCommand(command: string[], options: RunOptions = {}): RunResult {
  const cwd = options.cwd ?? makeTempDir("ctxkit-cwd-");
  const env = buildEnv({ PWD: cwd, ...options.env });
  return runIsolated(command, cwd, env, options);
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

/** What {@linkcode runToolWithin} saw: the run, or that it was still running at the deadline. */
export type BoundedRun = RunResult & { timedOut: boolean };

/**
 * Run `tool` like `runToolAsync` (source target, `-A`), but kill it if it has not ended within
 * `deadlineMs`: a bound a working command never comes near (a hang or a quadratic step), not a wait.
 */
export async function runToolWithin(
  tool: Tool,
  args: string[],
  options: RunOptions & { cwd: string },
  deadlineMs: number,
): Promise<BoundedRun> {
  const env: Record<string, string> = { ...baseEnv(), PWD: options.cwd };
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const [program, programArgs] = isolatedCommand(env, [...toolArgv(tool), ...args]);
  const child = new Deno.Command(program, {
    args: programArgs,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return await outputWithin(child, deadlineMs);
}

/**
 * The output of `child` (stdout and stderr piped), or, if it has not ended within `deadlineMs`, of
 * `child` killed then (with every process in `alsoKill`, a tracee `child` leaves behind): a
 * failure bound, never a wait.
 */
export async function outputWithin(
  child: Deno.ChildProcess,
  deadlineMs: number,
  alsoKill: readonly number[] = [],
): Promise<BoundedRun> {
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    for (const pid of [...alsoKill, child.pid]) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* already gone */ }
    }
  }, deadlineMs);
  const out = await child.output();
  clearTimeout(timer);
  const decoder = new TextDecoder();
  return {
    code: out.code,
    stdout: decoder.decode(out.stdout),
    stderr: decoder.decode(out.stderr),
    stdoutBytes: out.stdout,
    timedOut,
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
    const [program, programArgs] = isolatedCommand(env, [...commandFor(tool, options), ...args]);
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

/** Every path below `dir` with its size and mtime: a snapshot to prove nothing was written. */
export function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of [...Deno.readDirSync(d)].sort((a, b) => a.name < b.name ? -1 : 1)) {
      const p = `${d}/${e.name}`;
      const st = Deno.lstatSync(p);
      out.push(`${p} ${st.size} ${st.mtime?.getTime()}`);
      if (st.isDirectory) walk(p);
    }
  };
  walk(dir);
  return out;
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

/** Where unprivileged runs find everything they need, or why they cannot run at all. */
type UserSetup =
  | { ok: true; place: ProgramPlace; denoDir: string; home: string }
  | { ok: false; reason: string };

let userSetup: UserSetup | undefined;

/** `setpriv` arguments that become {@linkcode UNPRIVILEGED_ID} with no supplementary groups. */
function dropPrivileges(): string[] {
  const id = String(UNPRIVILEGED_ID);
  return ["setpriv", `--reuid=${id}`, `--regid=${id}`, "--clear-groups"];
}

/** Whether `st`'s mode bits grant `need` (4 read, 2 write, 1 search/execute) to uid = gid = `id`. */
function grants(st: Stats, id: number, need: number): boolean {
  const shift = st.uid === id ? 6 : st.gid === id ? 3 : 0;
  return ((st.mode >> shift) & need) === need;
}

/** Whether every directory above the physical `path` is searchable by uid `id`. */
function ancestorsSearchable(path: string, id: number): boolean {
  for (let dir = dirname(path);; dir = dirname(dir)) {
    if (!grants(statSync(dir), id, 1)) return false;
    if (dir === dirname(dir)) return true;
  }
}

/**
 * Whether uid `id` can read the whole tree at `path` (files readable, directories readable and
 * searchable), judged by mode bits. A symbolic link counts as unreadable (its target's directories
 * are not checked), so the tree is copied instead, which is merely slower.
 */
function treeReadable(path: string, id: number): boolean {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return false;
  if (!st.isDirectory()) return grants(st, id, 4);
  return grants(st, id, 5) && readdirSync(path).every((e) => treeReadable(join(path, e), id));
}

/** Copy the tree at `src` to `dst`, dereferencing links, every entry readable by all. */
function copyReadable(src: string, dst: string): void {
  if (statSync(src).isDirectory()) {
    mkdirSync(dst, { recursive: true });
    chmodSync(dst, 0o755);
    for (const e of readdirSync(src)) copyReadable(join(src, e), join(dst, e));
  } else {
    mkdirSync(dirname(dst), { recursive: true });
    copyFileSync(src, dst);
    chmodSync(dst, 0o644);
  }
}

/**
 * Run `command` with only PATH set; `code` -1 with the error as `stderr` when it cannot start.
 * Deno.Command, not node:child_process: the latter rewrites arguments after one that names the
 * Deno executable (it inserted a `run` after it), which broke the probe below.
 */
function runPlain(command: string[]): { code: number; stderr: string } {
  try {
    const r = new Deno.Command(command[0], {
      args: command.slice(1),
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      stdin: "null",
    }).outputSync();
    return { code: r.code, stderr: new TextDecoder().decode(r.stderr).trim() };
  } catch (e) {
    return { code: -1, stderr: `${command[0]}: ${(e as Error).message}` };
  }
}

/**
 * The Deno executable as uid `id` can reach it: the running one when its directories let that user
 * through, else a hard link to it (same file system, nothing copied), else a copy (about 95 MB).
 * The copy is made by a `cp` child rather than in this process: a parallel test worker forking
 * while this process holds the file open for writing would make executing it fail with ETXTBSY.
 */
function reachableRuntime(dir: string, id: number): string {
  const exe = realpathSync(Deno.execPath());
  const runnable = grants(statSync(exe), id, 5);
  if (runnable && ancestorsSearchable(exe, id)) return exe;
  const dst = join(dir, "deno");
  // A hard link shares the file's mode, so it only helps when the file itself lets the user in.
  if (runnable) {
    try {
      linkSync(exe, dst);
      return dst;
    } catch {
      // EXDEV (other file system) or links refused: copy below.
    }
  }
  const cp = runPlain(["cp", exe, dst]);
  if (cp.code !== 0) throw new Error(`cp ${exe} ${dst}: ${cp.stderr}`);
  chmodSync(dst, 0o755);
  return dst;
}

/**
 * The program tree `root` that uid `id` can read: the checkout when it can, else a copy in `dir`
 * of just what a run loads — `dist/` for bundles; for sources `bin/`, `lib/`, the config files and
 * the npm dependencies in `node_modules/` (so a source-target test still tests the sources).
 */
function reachableProgram(dir: string, id: number): string {
  const parts = TARGET === "bundle" ? ["dist"] : ["deno.json", "package.json", "bin", "lib"];
  if (TARGET === "source") {
    if (existsSync(join(REPO, "deno.lock"))) parts.push("deno.lock");
    const pkg: { dependencies?: Record<string, string> } = JSON.parse(
      readFileSync(join(REPO, "package.json"), "utf8"),
    );
    for (const dep of Object.keys(pkg.dependencies ?? {})) parts.push(join("node_modules", dep));
  }
  const readable = ancestorsSearchable(REPO, id) && grants(statSync(REPO), id, 1) &&
    parts.every((p) => treeReadable(join(REPO, p), id));
  if (readable) return REPO;
  const root = join(dir, "repo");
  for (const p of parts) copyReadable(join(REPO, p), join(root, p));
  return root;
}

/**
 * The binaries' directory as uid `id` can reach it: {@linkcode BINARY_DIR} when that user may read
 * and execute every binary there (a stand-in is a script: it needs both), else a copy (a `cp`
 * child, for the ETXTBSY reason given at {@linkcode reachableRuntime}).
 */
function reachableBinaries(dir: string, id: number): string {
  const paths = TOOLS.map(binaryPath);
  if (ancestorsSearchable(paths[0], id) && paths.every((p) => grants(statSync(p), id, 5))) {
    return BINARY_DIR;
  }
  const copy = join(dir, "bin");
  mkdirSync(copy);
  chmodSync(copy, 0o755);
  for (const [i, p] of paths.entries()) {
    const dst = join(copy, binaryFileName(TOOLS[i]));
    const cp = runPlain(["cp", p, dst]);
    if (cp.code !== 0) throw new Error(`cp ${p} ${dst}: ${cp.stderr}`);
    chmodSync(dst, 0o755);
  }
  return copy;
}

/**
 * Once per test process: make the runtime, the program, a DENO_DIR and a HOME reachable by
 * {@linkcode UNPRIVILEGED_ID}, then let that user itself confirm it can use them (this also catches
 * a missing `setpriv`, a scratch dir under a TMPDIR others cannot enter, ACLs and the like).
 */
function setUpUser(): UserSetup {
  const id = UNPRIVILEGED_ID;
  try {
    const dir = makeSharedTempDir("ctxkit-as-user-");
    // A binary needs neither the deno runtime nor the program tree, only itself. (A stand-in still
    // runs the checkout's deno and bundle: from a checkout that user cannot reach it fails.)
    const binary = TARGET === "binary";
    const binaries = binary ? reachableBinaries(dir, id) : BINARY_DIR;
    const runtime = binary ? join(binaries, binaryFileName("prose")) : reachableRuntime(dir, id);
    const root = binary ? REPO : reachableProgram(dir, id);
    const denoDir = join(dir, "deno-dir");
    mkdirSync(denoDir);
    chmodSync(denoDir, 0o777);
    const home = makeSharedTempDir("ctxkit-home-");
    const entry = binary
      ? runtime
      : TARGET === "bundle"
      ? join(root, "dist")
      : join(root, "deno.json");
    // The probe runs `sh` as the user and lets it test access: setpriv (util-linux 2.38) was seen to
    // execute a program in a directory uid 65534 cannot enter, so running the runtime proves nothing.
    const probe = runPlain([
      ...dropPrivileges(),
      "/bin/sh",
      "-c",
      'test -x "$1" && test -r "$2" && test -w "$3"',
      "sh",
      runtime,
      entry,
      denoDir,
    ]);
    if (probe.code !== 0) {
      const why = probe.stderr.split("\n")[0] || `cannot reach ${runtime}, ${entry}, ${denoDir}`;
      return { ok: false, reason: `uid ${id} cannot use the staged run (${why})` };
    }
    return { ok: true, place: { runtime, root, binaries }, denoDir, home };
  } catch (e) {
    return { ok: false, reason: `cannot stage a run for uid ${id}: ${(e as Error).message}` };
  }
}

/**
 * Why {@linkcode runToolAsUser} cannot run here, or `undefined` when it can (always `undefined`
 * when tests do not run as root: they run as the invoking user then).
 */
function asUserUnavailable(): string | undefined {
  if (!IS_ROOT) return undefined;
  userSetup ??= setUpUser();
  return userSetup.ok ? undefined : userSetup.reason;
}

/**
 * For a test that calls {@linkcode runToolAsUser}: true, after printing one `SKIP: <reason>` line,
 * when this machine cannot run tools as the unprivileged user (`Deno.test`'s `ignore` is decided
 * before the test runs; this is decided when it does, so the reason shows in the output).
 *
 * @example
 * ```ts ignore
 * Deno.test("unreadable dir → issue", () => {
 *   if (skipWithoutUnprivilegedUser()) return;
 *   // … runToolAsUser(…)
 * });
 * ```
 */
export function skipWithoutUnprivilegedUser(): boolean {
  const reason = asUserUnavailable();
  if (reason !== undefined) console.log(`SKIP: ${reason}`);
  return reason !== undefined;
}

/**
 * Run `tool` like {@linkcode runTool}, but as an unprivileged user, so "unreadable" fixtures
 * (chmod 000) really are unreadable. As root it goes through
 * `setpriv --reuid=65534 --regid=65534 --clear-groups`, with a world-writable DENO_DIR and a
 * world-readable temp HOME; the runtime and the program come from the checkout when that user can
 * reach them, else from a world-readable copy made once per test process (a checkout in a 0700
 * directory). As an ordinary user it runs directly. Fixture directories must be traversable by
 * others (see {@linkcode makeSharedTempDir}). Throws when the unprivileged run cannot be set up;
 * tests avoid that with {@linkcode skipWithoutUnprivilegedUser}.
 *
 * @example
 * ```ts ignore
 * const root = makeSharedTempDir();
 * const r = runToolAsUser("context-scan", ["--root", root]);
 * ```
 */
export function runToolAsUser(tool: Tool, args: string[], options: RunOptions = {}): RunResult {
  if (!IS_ROOT) return runTool(tool, args, options);
  userSetup ??= setUpUser();
  if (!userSetup.ok) throw new Error(`runToolAsUser: ${userSetup.reason}`);
  const { place, denoDir, home } = userSetup;
  const cwd = options.cwd ?? makeSharedTempDir("ctxkit-cwd-");
  const env = buildEnv({ HOME: home, DENO_DIR: denoDir, PWD: cwd, ...options.env });
  return runIsolated(
    [...dropPrivileges(), ...commandFor(tool, options, place), ...args],
    cwd,
    env,
    options,
  );
}

/**
 * The specifiers Deno holds a V8 code cache for in the Deno dir `denoDir`
 * (`references/startup.md#code-cache`); `node:sqlite` is loaded only here.
 */
export async function codeCachedScripts(denoDir: string): Promise<string[]> {
  const { DatabaseSync } = await import("node:sqlite");
  const db = new DatabaseSync(join(denoDir, "v8_code_cache_v2"), { readOnly: true });
  try {
    return db.prepare("SELECT specifier FROM codecache").all().map((r) => String(r.specifier));
  } finally {
    db.close();
  }
}

/**
 * The command line (and environment) that runs `deno <args>` as the unprivileged user (uid = gid
 * = {@linkcode UNPRIVILEGED_ID}, no groups) with a DENO_DIR and a HOME it can use: a helper process
 * of a cross-user test (say, another user's listener). `undefined`, with the reason printed as a
 * `SKIP:` line, when that cannot run here (not root, a binary target, no staged runtime).
 */
export function denoAsUser(
  args: string[],
): { command: string[]; env: Record<string, string> } | undefined {
  const reason = !IS_ROOT
    ? "needs root to run a second uid"
    : TARGET === "binary"
    ? "a binary target stages no deno runtime for another uid"
    : asUserUnavailable();
  if (reason !== undefined) {
    console.log(`SKIP: ${reason}`);
    return undefined;
  }
  const setup = userSetup as Extract<UserSetup, { ok: true }>;
  return {
    command: [...dropPrivileges(), setup.place.runtime, ...args],
    env: buildEnv({ HOME: setup.home, DENO_DIR: setup.denoDir }),
  };
}
