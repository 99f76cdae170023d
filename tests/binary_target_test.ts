/**
 * `CTXKIT_TEST_TARGET=binary`: the CLI helpers run `$CTXKIT_BINARY_DIR/<tool>` (default
 * `dist/bin/<host target>/<tool>`) directly, with the same isolated environment as sources and
 * bundles, and refuse deno flags and a missing binary by name. Checked here with fake binaries
 * (shell scripts that report their arguments and environment), in a child process that imports the
 * helpers with the target set, whatever target this suite itself runs against.
 */
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir, REPO } from "./_helpers.ts";
import { TOOLS } from "../scripts/tools.ts";

/** The fake binaries are shell scripts. */
const POSIX = Deno.build.os !== "windows";

/**
 * A directory of fake binaries: each prints its `$0`, then its arguments one a line, a `--`, then
 * its environment. With `standInFor`, each carries the stand-in marker naming that bundle.
 */
function fakeBinaries(standInFor?: string): string {
  const dir = makeTempDir("ctxkit-fake-bin-");
  for (const tool of TOOLS) {
    const marker = standInFor ? `# ctxkit-stand-in-bundle: ${standInFor}/${tool}.js\n` : "";
    const path = join(dir, tool);
    writeFileSync(path, `#!/bin/sh\n${marker}printf '%s\\n' "$0" "$@" --; env\n`);
    chmodSync(path, 0o755);
  }
  return dir;
}

/**
 * Run `body` (TypeScript with the helpers imported as `h`) in a child with `env`; its stdout parsed
 * as JSON. A throw inside is reported as `{ error: message }`.
 */
function probe(body: string, env: Record<string, string>): Record<string, unknown> {
  const file = join(makeTempDir("ctxkit-probe-"), "probe.ts");
  const helpers = new URL("./_helpers.ts", import.meta.url).href;
  writeFileSync(
    file,
    `import * as h from ${JSON.stringify(helpers)};
let result: unknown;
try { result = await (async () => { ${body} })(); }
catch (e) { result = { error: (e as Error).message }; }
console.log(JSON.stringify(result));
`,
  );
  const out = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", file],
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", DENO_NO_UPDATE_CHECK: "1", ...env },
    stdin: "null",
  }).outputSync();
  const dec = new TextDecoder();
  strictEqual(out.code, 0, dec.decode(out.stderr));
  return JSON.parse(dec.decode(out.stdout));
}

Deno.test({
  name: "binary target: runTool runs the binary directly, arguments verbatim, environment isolated",
  ignore: !POSIX,
}, () => {
  const dir = fakeBinaries();
  const r = probe(
    `const r = h.runTool("prose", ["status", "two words", "--json"], { env: { EXTRA: "x" } });
     return { target: h.TARGET, flags: h.TARGET_TAKES_DENO_FLAGS, argv: h.toolArgv("prose"),
              code: r.code, stdout: r.stdout };`,
    { CTXKIT_TEST_TARGET: "binary", CTXKIT_BINARY_DIR: dir, LEAKED_FROM_PARENT: "1" },
  );
  strictEqual(r.target, "binary");
  strictEqual(r.flags, false);
  deepStrictEqual(r.argv, [join(dir, "prose")]);
  strictEqual(r.code, 0);
  const [argv, env] = String(r.stdout).split("\n--\n");
  deepStrictEqual(argv.split("\n"), [join(dir, "prose"), "status", "two words", "--json"]);
  ok(env.includes("\nEXTRA=x\n") || env.startsWith("EXTRA=x\n"), env);
  ok(env.includes("NO_COLOR=1"), env);
  ok(!env.includes("LEAKED_FROM_PARENT"), `the parent's environment leaked:\n${env}`);
});

Deno.test({
  name: "binary target: runToolAsync and every tool resolve to <dir>/<tool>",
  ignore: !POSIX,
}, () => {
  const dir = fakeBinaries();
  const r = probe(
    `const tools = ${JSON.stringify(TOOLS)};
     const runs = await Promise.all(tools.map((t) => h.runToolAsync(t, ["--help"])));
     return runs.map((r) => r.stdout.split("\\n").slice(0, 2));`,
    { CTXKIT_TEST_TARGET: "binary", CTXKIT_BINARY_DIR: dir },
  );
  deepStrictEqual(r, TOOLS.map((t) => [join(dir, t), "--help"]));
});

Deno.test({
  name: "binary target: deno flags, toolCommand and a missing binary fail by name",
  ignore: !POSIX,
}, () => {
  const dir = fakeBinaries();
  const env = { CTXKIT_TEST_TARGET: "binary", CTXKIT_BINARY_DIR: dir };
  const flags = probe(`return h.runTool("prose", ["on"], { permissions: ["--allow-read"] });`, env);
  match(String(flags.error), /takes no deno flags.*skipWithoutDenoFlags/);
  const command = probe(`return h.toolCommand("prose");`, env);
  match(String(command.error), /use toolArgv\(\)/);
  const missing = probe(`return h.toolArgv("prose");`, {
    ...env,
    CTXKIT_BINARY_DIR: makeTempDir("ctxkit-empty-"),
  });
  match(String(missing.error), /no executable .*prose; build it with `deno task compile /);
});

Deno.test({
  name: "binary target: printed self-commands are the binary's, or the bundle's for a stand-in",
  ignore: !POSIX,
}, () => {
  const compiled = fakeBinaries();
  const binary = probe(`return h.selfCommandWords("context-guard", ["--allow-all"]);`, {
    CTXKIT_TEST_TARGET: "binary",
    CTXKIT_BINARY_DIR: compiled,
  });
  deepStrictEqual(binary, [join(compiled, "context-guard")]);
  const standIn = probe(
    `return { words: h.selfCommandWords("context-guard", ["--allow-all"]), deno: Deno.execPath() };`,
    { CTXKIT_TEST_TARGET: "binary", CTXKIT_BINARY_DIR: fakeBinaries("/opt/ctxkit/dist") },
  );
  deepStrictEqual((standIn as { words: string[] }).words, [
    standIn.deno,
    "run",
    "--allow-all",
    "--no-config",
    "/opt/ctxkit/dist/context-guard.js",
  ]);
});

Deno.test("CTXKIT_TEST_TARGET: sources by default, deno flags for sources and bundles, typos refused", () => {
  const read = `return { target: h.TARGET, flags: h.TARGET_TAKES_DENO_FLAGS };`;
  deepStrictEqual(probe(read, {}), { target: "source", flags: true });
  deepStrictEqual(probe(read, { CTXKIT_TEST_TARGET: "bundle" }), { target: "bundle", flags: true });
  const typo = new Deno.Command(Deno.execPath(), {
    args: ["eval", `await import(${JSON.stringify(join(REPO, "tests", "_helpers.ts"))});`],
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", CTXKIT_TEST_TARGET: "binaries" },
  }).outputSync();
  strictEqual(typo.code, 1);
  match(new TextDecoder().decode(typo.stderr), /CTXKIT_TEST_TARGET=binaries: expected source/);
});
