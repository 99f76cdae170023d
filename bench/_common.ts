/**
 * What the benchmarks share.
 *
 * @module
 */

/** The median of `xs` (the mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * The Deno cache of the process running the benchmark (`deno info --json`): child processes keep
 * it, as a user's runs do, when a fixture moves HOME — a fresh cache under the fixture's HOME would
 * make every child transpile and compile every module again.
 */
export function callerDenoDir(): string {
  const info = new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).outputSync();
  return JSON.parse(new TextDecoder().decode(info.stdout)).denoDir;
}
