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
export function runGit(args: string[], cwd: string): GitResult {
  try {
    const out = new Deno.Command("git", {
      args,
      cwd,
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
