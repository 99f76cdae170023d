/**
 * Every tool leaves Deno's V8 code cache of its script behind, so the next run deserialises the
 * compiled script instead of parsing all of it again (`references/startup.md#code-cache`): a run
 * that exits before the runtime's event loop turns never stores it, and then every run pays for
 * the whole parse (≈ 3.5 ms for the prose bundle).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { codeCachedScripts, makeTempDir, REPO, runTool, TARGET, type Tool } from "./_helpers.ts";

const CASES: { tool: Tool; args: (dir: string) => string[] }[] = [
  { tool: "context-scan", args: (dir) => ["--root", dir] },
  { tool: "context-guard", args: () => ["list"] },
  { tool: "text-guard", args: () => ["--help"] },
  { tool: "prose", args: () => ["status"] },
];

for (const { tool, args } of CASES) {
  Deno.test({
    name: `${tool}: one run stores the code cache of its script`,
    // A compiled binary carries its code in the executable; there is no cache to store.
    ignore: TARGET === "binary",
    async fn() {
      const dir = makeTempDir("ctxkit-code-cache-");
      const denoDir = join(dir, "deno");
      const r = runTool(tool, args(dir), {
        cwd: dir,
        env: { DENO_DIR: denoDir, CELLM_DIR: join(dir, "cellm"), CLAUDE_CONFIG_DIR: dir },
      });
      assert.equal(r.code, 0, r.stderr);
      const script = TARGET === "bundle"
        ? `file://${REPO}/dist/${tool}.js`
        : `file://${REPO}/bin/${tool}.ts`;
      assert.ok((await codeCachedScripts(denoDir)).includes(script), `no code cache for ${script}`);
    },
  });
}
