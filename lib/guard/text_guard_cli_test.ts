import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";

import { UsageError } from "../errors.ts";
import { TEXT_GUARD_COMMANDS, textGuardHelp, textGuardMain } from "./text_guard_cli.ts";

const SELF = { tool: "text-guard", scriptPath: "/opt/ctxkit/bin/text-guard.ts" };
import { makeTempDir } from "../../tests/_helpers.ts";

async function usage(args: string[], message: string): Promise<void> {
  await assert.rejects(() => textGuardMain(args, SELF), (e: unknown) => {
    assert.ok(e instanceof UsageError, String(e));
    assert.equal(e.exitCode, 2);
    assert.equal(e.message, message);
    return true;
  });
}

Deno.test("textGuardMain: unknown commands and each subcommand's missing arguments are usage errors", async () => {
  await usage(["snap"], "unknown command: snap; did you mean snapshot?");
  await usage(["frobnicate"], "unknown command: frobnicate");
  await usage(["--verison"], "unknown command: --verison");
  await usage(["statsu"], "unknown command: statsu; did you mean status?");
  await usage(["checkpoint", "a.md"], "checkpoint needs --run-dir and files");
  await usage(["checkpoint", "--run-dir", "d"], "checkpoint needs --run-dir and files");
  await usage(["verify", "a.md"], "verify needs --run-dir");
  await usage(["verify", "--run-dir", "d"], "verify needs at least one file");
  await usage(["restore", "a.md"], "restore needs --run-dir");
  await usage(["restore", "--run-dir", "d"], "restore needs at least one file");
  await usage(["status"], "status needs --run-dir");
  await usage(["status", "--run-dir", "d", "a.md"], "unexpected argument: a.md");
  await usage(["snapshot"], "snapshot needs at least one file");
});

Deno.test("textGuardMain: each subcommand accepts only its own options", async () => {
  assert.deepEqual(Object.keys(TEXT_GUARD_COMMANDS).sort(), [
    "checkpoint",
    "restore",
    "snapshot",
    "status",
    "verify",
  ]);
  await usage(["snapshot", "--no-restore", "a.md"], "--no-restore does not apply to snapshot");
  await usage(["snapshot", "--tokens=ext", "a.md"], "--tokens does not apply to snapshot");
  await usage(
    ["checkpoint", "--allow-dirty", "a.md"],
    "--allow-dirty does not apply to checkpoint",
  );
  await usage(["restore", "--global", "a.md"], "unknown option: --global");
  await usage(["status", "--bogus"], "unknown option: --bogus");
  await usage(
    ["verify", "--tokens=full", "--run-dir", "d", "a.md"],
    "unknown token alphabet: full (want base or ext)",
  );
});

/** Run `textGuardMain(args)` in a child process (it prints): its return code and streams. */
function runMainChild(args: string[], projectDir: string) {
  const dir = makeTempDir("ctxkit-tgcli-");
  const script = `${dir}/main.ts`;
  writeFileSync(
    script,
    `import { textGuardMain } from ${
      JSON.stringify(new URL("./text_guard_cli.ts", import.meta.url).href)
    };\n` +
      `const rc = await textGuardMain(Deno.args, ${JSON.stringify(SELF)});\n` +
      `console.error(\`rc=\${rc}\`);\n`,
  );
  const r = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      script,
      ...args,
    ],
    env: { CLAUDE_PROJECT_DIR: projectDir, HOME: projectDir, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  return { stdout: dec.decode(r.stdout), stderr: dec.decode(r.stderr) };
}

Deno.test("textGuardMain returns 2 for no arguments (the help on stderr), 0 for help, and verify's 1 only when a file failed the gate", () => {
  const root = makeTempDir("ctxkit-tgcli-root-");
  const help = `${textGuardHelp(SELF.scriptPath)}\n`;
  assert.deepEqual(runMainChild([], root), { stdout: "", stderr: `${help}rc=2\n` });
  for (const h of ["help", "-h", "--help"]) {
    assert.deepEqual(runMainChild([h], root), { stdout: help, stderr: "rc=0\n" });
  }
  const runDir = `${root}/run`;
  mkdirSync(`${runDir}/orig`, { recursive: true });
  writeFileSync(`${runDir}/orig/a.md`, "NEVER 42\n");
  writeFileSync(`${root}/a.md`, "NEVER 42 still\n");
  assert.deepEqual(runMainChild(["verify", "--run-dir", runDir, `${root}/a.md`], root), {
    stdout: "FILE: a.md\nMISSING: 0\nGATE: PASS\nACTION: kept\nFILES_FAILED: 0\n",
    stderr: "rc=0\n",
  });
  writeFileSync(`${root}/a.md`, "lost it\n");
  const failed = runMainChild(
    ["verify", "--no-restore", "--run-dir", runDir, `${root}/a.md`],
    root,
  );
  assert.equal(failed.stderr, "rc=1\n");
  assert.match(failed.stdout, /GATE: FAIL\nACTION: kept\nFILES_FAILED: 1\n$/);
  assert.equal(readFileSync(`${root}/a.md`, "utf8"), "lost it\n", "--no-restore keeps the file");
  assert.deepEqual(runMainChild(["status", "--run-dir", runDir], root), {
    stdout: `RUN_DIR: ${runDir}\nSNAPSHOT: 1 files\n  a.md\n`,
    stderr: "rc=0\n",
  });
});
