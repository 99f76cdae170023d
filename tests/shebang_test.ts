/**
 * The least-privilege form the README documents is the script's own shebang: `./bin/<tool>.ts`.
 * That only works when git records the bins as executable (mode 100755) and the shebang finds the
 * `deno` the README's set-up installs (`node_modules/.bin` on PATH).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { baseEnv, git, lines, makeTempDir, REPO, type Tool } from "./_helpers.ts";

const TOOLS: Tool[] = ["context-scan", "context-guard", "text-guard", "prose"];

Deno.test("bins: git records every bin/*.ts as executable (100755)", () => {
  const staged = git(REPO, "ls-files", "-s", "bin");
  for (const tool of TOOLS) {
    assert.match(staged, new RegExp(`^100755 [0-9a-f]+ 0\\tbin/${tool}\\.ts$`, "m"), tool);
  }
});

for (const tool of TOOLS) {
  Deno.test(`bins: ./bin/${tool}.ts --help runs through its shebang`, () => {
    const cwd = makeTempDir("ctxkit-shebang-");
    const env = { ...baseEnv(), PATH: `${join(REPO, "node_modules", ".bin")}:/usr/bin:/bin` };
    const out = new Deno.Command(join(REPO, "bin", `${tool}.ts`), {
      args: ["--help"],
      cwd,
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.match(new TextDecoder().decode(out.stdout), /usage/i);
    assert.equal(lines(stderr).at(-1), "✅ EXIT:0");
  });
}
