/**
 * `deno task bundle`: one self-contained `dist/<tool>.js` per tool (works offline once the npm
 * packages are installed; `deno bundle` fetches its esbuild from the npm registry on first use).
 *
 * Run a bundle with `deno run -A dist/<tool>.js …`.
 */
import { mkdirSync } from "node:fs";
import { run, TOOLS } from "./tools.ts";

mkdirSync("dist", { recursive: true });
for (const tool of TOOLS) {
  run([
    Deno.execPath(),
    "bundle",
    "--quiet",
    "--platform",
    "deno",
    // Minified: start-up parses the whole file (references/startup.md#bundles).
    "--minify",
    "-o",
    `dist/${tool}.js`,
    `bin/${tool}.ts`,
  ]);
  console.log(`dist/${tool}.js`);
}
