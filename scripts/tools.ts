/** The four ctxkit tools, each a `bin/<name>.ts` entry point. */
export const TOOLS = ["context-scan", "context-guard", "text-guard", "prose"] as const;

/** The `deno compile` targets ctxkit documents. */
export const COMPILE_TARGETS = [
  "x86_64-unknown-linux-gnu",
  "aarch64-unknown-linux-gnu",
  "x86_64-apple-darwin",
  "aarch64-apple-darwin",
  "x86_64-pc-windows-msvc",
] as const;

/** Run a command, inheriting stdio; exit with its code on failure. */
export function run(cmd: string[]): void {
  const result = new Deno.Command(cmd[0], { args: cmd.slice(1) }).outputSync();
  const out = new TextDecoder().decode(result.stdout);
  const err = new TextDecoder().decode(result.stderr);
  if (out) console.log(out.trimEnd());
  if (!result.success) {
    console.error(err.trimEnd());
    Deno.exit(result.code || 1);
  }
}
