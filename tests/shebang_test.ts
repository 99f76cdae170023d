/**
 * The least-privilege form the README documents is the script's own shebang: `./bin/<tool>.ts`.
 * That only works when git records the bins as executable (mode 100755) and the shebang finds the
 * `deno` the README's set-up installs (`node_modules/.bin` on PATH). A bundle is the same:
 * `dist/<tool>.js` is mode 0755 and starts with its bin's shebang plus `--no-config`, so
 * `./dist/<tool>.js` runs with that tool's least privileges wherever it is copied, even below a
 * `deno.json` that is not ctxkit's (`references/migration.md#installing-ctxkit-in-a-skill`).
 */
import assert from "node:assert/strict";
import { copyFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundleDir } from "./_bundles.ts";
import { baseEnv, git, lines, makeTempDir, REPO, TARGET, type Tool } from "./_helpers.ts";

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

const firstLine = (path: string) => readFileSync(path, "utf8").split("\n", 1)[0];

for (const tool of TOOLS) {
  Deno.test(`bundles: dist/${tool}.js is 0755 and its shebang is the bin's plus --no-config (${TARGET})`, () => {
    const bundle = join(bundleDir(), `${tool}.js`);
    assert.equal(statSync(bundle).mode & 0o7777, 0o755);
    assert.equal(firstLine(bundle), `${firstLine(join(REPO, "bin", `${tool}.ts`))} --no-config`);
  });

  Deno.test(`bundles: ./${tool}.js --help runs through its shebang below a foreign deno.json (${TARGET})`, () => {
    const dir = makeTempDir("ctxkit-bundle-shebang-");
    // Deno looks for a deno.json from the script's directory up: a broken one must not matter.
    writeFileSync(join(dir, "deno.json"), "{ not json");
    copyFileSync(join(bundleDir(), `${tool}.js`), join(dir, `${tool}.js`));
    const env = { ...baseEnv(), PATH: `${join(REPO, "node_modules", ".bin")}:/usr/bin:/bin` };
    const out = new Deno.Command(`./${tool}.js`, {
      args: ["--help"],
      cwd: dir,
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
