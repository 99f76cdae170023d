/**
 * The bundles a test copies or runs as files: under `CTXKIT_TEST_TARGET=bundle`, the `dist/` that
 * `deno task bundle` built; otherwise plain bundles built once per test process into a temp dir by
 * `deno bundle` and finished the way `scripts/bundle.ts` finishes them (`scripts/_bundle_file.ts`:
 * shebang and mode), without its eager rewrite.
 *
 * @module
 */

import { join } from "node:path";
import { bundleTool } from "../scripts/_bundle_file.ts";
import { TOOLS } from "../scripts/tools.ts";
import { makeTempDir, REPO, TARGET } from "./_helpers.ts";

let built: string | undefined;

/** The directory holding `<tool>.js` for every tool. */
export function bundleDir(): string {
  if (TARGET === "bundle") return join(REPO, "dist");
  if (built !== undefined) return built;
  const dir = makeTempDir("ctxkit-dist-");
  for (const tool of TOOLS) bundleTool(REPO, tool, join(dir, `${tool}.js`));
  built = dir;
  return dir;
}
