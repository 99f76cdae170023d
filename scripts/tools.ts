/** The four ctxkit tools, each a `bin/<name>.ts` entry point. */
export const TOOLS = ["context-scan", "context-guard", "text-guard", "prose"] as const;

/** One of {@linkcode TOOLS}. */
export type Tool = typeof TOOLS[number];

/** The `deno compile` targets ctxkit documents. */
export const COMPILE_TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** One of {@linkcode COMPILE_TARGETS}. */
export type CompileTarget = typeof COMPILE_TARGETS[number];

/** Options for {@linkcode run}. */
export interface RunCommandOptions {
  /** Working directory of the child (default: this process's). */
  cwd?: string;
  /**
   * Pass the child's stderr through as it is written, also on success (`deno compile` prints its
   * list of embedded files there). By default stderr is shown only when the command fails.
   */
  showStderr?: boolean;
}

/** Run a command, printing its stdout; exit with its code on failure. */
export function run(cmd: string[], options: RunCommandOptions = {}): void {
  const result = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd: options.cwd,
    stderr: options.showStderr ? "inherit" : "piped",
  }).outputSync();
  const out = new TextDecoder().decode(result.stdout);
  if (out) console.log(out.trimEnd());
  if (!result.success) {
    if (!options.showStderr) console.error(new TextDecoder().decode(result.stderr).trimEnd());
    Deno.exit(result.code || 1);
  }
}

/** Run a command quietly and return its stdout; throw with its stderr when it fails. */
export function runChecked(
  cmd: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): string {
  const result = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.env !== undefined,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!result.success) {
    throw new Error(`${cmd.join(" ")}: ${new TextDecoder().decode(result.stderr).trimEnd()}`);
  }
  return new TextDecoder().decode(result.stdout);
}
