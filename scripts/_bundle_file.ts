/**
 * What makes `dist/<tool>.js` runnable as `./dist/<tool>.js` (`references/migration.md#installing-ctxkit-in-a-skill`):
 * the bin's least-privilege shebang with `--no-config` added, so a `deno.json` around the bundle
 * or in the working directory never changes how it runs, and mode `0755`.
 *
 * @module
 */

import { writeFileAtomic } from "../lib/_fs/write.ts";

/** The mode of every `dist/<tool>.js`: executable, like the bins it is built from. */
export const BUNDLE_MODE = 0o755;

/**
 * `source` (a bundle, starting with the bin's `#!/usr/bin/env -S deno run …` line) with
 * `--no-config` at the end of that line. A source without a `deno run` shebang is an error: every
 * bin has one (`tests/shebang_test.ts`), and a bundle without it could not run as `./<tool>.js`.
 */
export function withBundleShebang(source: string): string {
  const nl = source.indexOf("\n");
  const first = nl < 0 ? source : source.slice(0, nl);
  if (!first.startsWith("#!/usr/bin/env -S deno run ")) {
    throw new Error(`the bundle does not start with the bin's deno shebang: ${first.slice(0, 80)}`);
  }
  if (first.split(" ").includes("--no-config")) return source;
  return `${first} --no-config${nl < 0 ? "" : source.slice(nl)}`;
}

/**
 * `deno bundle` `bin/<tool>.ts` of the checkout at `repo` into `out` — minified (a bundle with no
 * code cache yet is parsed whole: `references/startup.md#bundles`) — and finish it
 * ({@linkcode finishBundle}). Throws with `deno bundle`'s stderr when it fails.
 */
export function bundleTool(repo: string, tool: string, out: string): void {
  const result = new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform", "deno", "--minify", "-o", out, `bin/${tool}.ts`],
    cwd: repo,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!result.success) {
    throw new Error(`deno bundle ${tool}: ${new TextDecoder().decode(result.stderr).trimEnd()}`);
  }
  finishBundle(out);
}

/** Rewrite the bundle at `path` with {@linkcode withBundleShebang}, mode {@linkcode BUNDLE_MODE}. */
export function finishBundle(path: string): void {
  writeFileAtomic(path, withBundleShebang(Deno.readTextFileSync(path)), {
    mode: BUNDLE_MODE,
    exactMode: true,
  });
}
