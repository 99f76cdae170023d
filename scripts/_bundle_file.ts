/**
 * What makes `dist/<tool>.js` runnable as `./dist/<tool>.js` (`references/migration.md#installing-ctxkit-in-a-skill`):
 * the bin's least-privilege shebang with `--no-config` added, so a `deno.json` around the bundle
 * or in the working directory never changes how it runs, and mode `0755`; and what makes it
 * identifiable: the commit it was built from, which its `--version` prints
 * (`references/cli.md#version`).
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { writeFileAtomic } from "../lib/_fs/write.ts";
import { BUILD_STAMP_PLACEHOLDER, checkoutCommit } from "../lib/_cli/version.ts";

/** The checkout this script belongs to: the bundles are built from it. */
const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));

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
 * `source` with the build stamp — every `"@ctxkit-build-commit@"` literal of `lib/_cli/version.ts` —
 * replaced by `commit` (`unknown` when none is known). A bundle without the placeholder is an
 * error: its `--version` could not say what it was built from.
 */
export function withBuildStamp(source: string, commit: string | undefined): string {
  const placeholder = JSON.stringify(BUILD_STAMP_PLACEHOLDER);
  if (!source.includes(placeholder)) {
    throw new Error(`the bundle holds no build stamp placeholder ${placeholder}`);
  }
  return source.replaceAll(placeholder, JSON.stringify(commit ?? "unknown"));
}

/** The commit the bundles of this checkout are built from (`-dirty` with uncommitted changes). */
export function buildCommit(): string | undefined {
  return checkoutCommit(join(CHECKOUT, "bin", "context-scan.ts"));
}

/**
 * Rewrite the bundle at `path` with {@linkcode withBundleShebang} and {@linkcode withBuildStamp}
 * (the commit of this checkout), mode {@linkcode BUNDLE_MODE}.
 */
export function finishBundle(path: string, commit: string | undefined = buildCommit()): void {
  const source = withBuildStamp(withBundleShebang(Deno.readTextFileSync(path)), commit);
  writeFileAtomic(path, source, { mode: BUNDLE_MODE, exactMode: true });
}

/**
 * `deno bundle` `bin/<tool>.ts` of the checkout at `repo` into `out` — minified (a bundle with no
 * code cache yet is parsed whole: `references/startup.md#bundles`) — and finish it
 * ({@linkcode finishBundle}, stamped with the commit of `repo`). Throws with `deno bundle`'s stderr
 * when it fails.
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
  finishBundle(out, checkoutCommit(join(repo, "bin", `${tool}.ts`)));
}
