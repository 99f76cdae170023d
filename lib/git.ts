/**
 * The only child process ctxkit ever starts: `git`.
 *
 * @module
 */

/** What a git invocation produced. `status` is `null` when git could not be started. */
export interface GitResult {
  /** Exit status, or `null` when git is missing (or may not be run). */
  status: number | null;
  /** Captured stdout as UTF-8 text. */
  stdout: string;
  /** Captured stderr as UTF-8 text. */
  stderr: string;
}

/**
 * Run `git <args>` in `cwd` and capture its output. Never throws: a missing git, or a missing
 * `--allow-run=git` grant, is "no git" (`status: null`).
 *
 * @example
 * ```ts ignore
 * const top = runGit(["rev-parse", "--show-toplevel"], Deno.cwd());
 * if (top.status === 0) console.log(top.stdout.trimEnd());
 * ```
 */
export function runGit(args: string[], cwd: string, env?: GitEnv): GitResult {
  try {
    const out = new Deno.Command("git", {
      args,
      cwd,
      ...(env === undefined ? {} : { env: env.env, clearEnv: env.clear }),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    const decoder = new TextDecoder();
    return {
      status: out.signal === null ? out.code : null,
      stdout: decoder.decode(out.stdout),
      stderr: decoder.decode(out.stderr),
    };
  } catch (e) {
    return { status: null, stdout: "", stderr: e instanceof Error ? e.message : String(e) };
  }
}

/** `git rev-parse --show-toplevel` in `cwd` (trailing newline stripped), or `undefined`. */
export function gitToplevel(cwd: string): string | undefined {
  const result = runGit(["rev-parse", "--show-toplevel"], cwd);
  if (result.status !== 0) return undefined;
  const top = result.stdout.replace(/\n$/, "");
  return top === "" ? undefined : top;
}

/** The environment {@linkcode runGit} gives the child, when not the inherited one. */
export interface GitEnv {
  /** Variables to set. */
  env: Record<string, string>;
  /** Start from an empty environment (then `env` is the whole of it). */
  clear: boolean;
}

/**
 * Variables that make git answer for another repository or work tree than the one a directory is
 * in (`GIT_DIR`, `GIT_WORK_TREE`, …), or read a path as a pattern (`GIT_GLOB_PATHSPECS`, …).
 */
const FOREIGN_GIT_ENV = new Set([
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_INDEX_FILE",
  "GIT_COMMON_DIR",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
  "GIT_GLOB_PATHSPECS",
  "GIT_NOGLOB_PATHSPECS",
  "GIT_ICASE_PATHSPECS",
  "LC_ALL",
  "LANGUAGE",
]);

/**
 * The environment of a git question about the repository a directory itself is in
 * (`references/context-guard.md#snapshot`): git's repository-selecting variables removed, every
 * path taken literally (`GIT_LITERAL_PATHSPECS=1`: `*.md` is a file name, never a pattern), and
 * git's messages untranslated (`LC_ALL=C`), so a refusal can be told from "not a repository".
 * Without the permission to read the environment, only the additions apply.
 */
export function ownRepositoryEnv(): GitEnv {
  const add = { GIT_LITERAL_PATHSPECS: "1", LC_ALL: "C" };
  let all: Record<string, string>;
  try {
    all = Deno.env.toObject();
  } catch {
    return { env: add, clear: false };
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(all)) if (!FOREIGN_GIT_ENV.has(k)) env[k] = v;
  return { env: { ...env, ...add }, clear: true };
}

/**
 * The byte budget of the paths one git command line carries: far below Linux's `ARG_MAX` (2 MiB,
 * environment included), so any number of paths of any length fits in some number of calls.
 */
export const GIT_PATHS_BUDGET = 128 * 1024;

/**
 * Run `git <args> -- <paths>` in as many calls as the paths need (each within
 * {@linkcode GIT_PATHS_BUDGET} bytes), in order, and join their stdout. The first call that does
 * not exit 0 is returned as it is: a failure is never half an answer.
 */
export function runGitPaths(
  args: readonly string[],
  paths: readonly string[],
  cwd: string,
  env?: GitEnv,
): GitResult {
  const encoder = new TextEncoder();
  let stdout = "";
  let stderr = "";
  let batch: string[] = [];
  let bytes = 0;
  const flush = (): GitResult | undefined => {
    const r = runGit([...args, "--", ...batch], cwd, env);
    batch = [];
    bytes = 0;
    if (r.status !== 0) return r;
    stdout += r.stdout;
    stderr += r.stderr;
    return undefined;
  };
  for (const path of paths) {
    const size = encoder.encode(path).length + 1;
    if (batch.length > 0 && bytes + size > GIT_PATHS_BUDGET) {
      const failed = flush();
      if (failed !== undefined) return failed;
    }
    batch.push(path);
    bytes += size;
  }
  if (batch.length > 0) {
    const failed = flush();
    if (failed !== undefined) return failed;
  }
  return { status: 0, stdout, stderr };
}
