import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { makeTempDir } from "../../tests/_helpers.ts";

/**
 * Run a script that calls `body` with the output functions in scope and reports an `OutputError`
 * as one JSON line on the other stream (stderr for a stdout failure, a file for a stderr one);
 * `redirect` is appended to the shell command line.
 */
function run(body: string, redirect = "", flags = ["-A"]) {
  const dir = makeTempDir("ctxkit-output-");
  const script = `${dir}/out.ts`;
  const lib = (p: string) => JSON.stringify(new URL(p, import.meta.url).href);
  const report = `${dir}/error.json`;
  writeFileSync(
    script,
    `import { writeErr, writeOut, writeOutRaw } from ${lib("./output.ts")};\n` +
      `import { OutputError } from ${lib("../errors.ts")};\n` +
      `try { ${body} } catch (e) {\n` +
      `  if (!(e instanceof OutputError)) throw e;\n` +
      `  Deno.writeTextFileSync(${JSON.stringify(report)}, JSON.stringify({ stream: e.stream, ` +
      `code: e.code, exitCode: e.exitCode, message: e.message, name: e.name }));\n` +
      `  Deno.exit(9);\n` +
      `}\n`,
  );
  const cmd = `${JSON.stringify(Deno.execPath())} run ${flags.join(" ")} ${JSON.stringify(script)}`;
  const out = new Deno.Command("sh", {
    args: ["-c", `${cmd} ${redirect}`],
    env: { NO_COLOR: "1" },
  }).outputSync();
  const dec = new TextDecoder();
  let error: unknown;
  try {
    error = JSON.parse(Deno.readTextFileSync(report));
  } catch {
    error = undefined;
  }
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr), error };
}

Deno.test("writeOut and writeErr end every line with \\n, writeOutRaw adds nothing, no lines write nothing", () => {
  const r = run(
    `writeOut("a", "b"); writeOut(); writeOutRaw("raw"); writeOutRaw(new Uint8Array([0x21, 0x0a]));` +
      ` writeErr("x"); writeErr(); writeErr("y", "z"); writeOut("é ✓");`,
  );
  assert.deepEqual(r, {
    code: 0,
    stdout: "a\nb\nraw!\né ✓\n",
    stderr: "x\ny\nz\n",
    error: undefined,
  });
});

Deno.test("a failed write throws OutputError: ENOSPC exits 74, a broken pipe 141, naming the stream", () => {
  const full = run(`writeOut("RUN_DIR: /x");`, "> /dev/full");
  assert.equal(full.code, 9);
  assert.deepEqual(full.error, {
    stream: "stdout",
    code: "ENOSPC",
    exitCode: 74,
    message: "cannot write stdout: No space left on device",
    name: "OutputError",
  });
  const err = run(`writeOut("ok"); writeErr("line");`, "2> /dev/full");
  assert.equal(err.stdout, "ok\n");
  assert.deepEqual(err.error, {
    stream: "stderr",
    code: "ENOSPC",
    exitCode: 74,
    message: "cannot write stderr: No space left on device",
    name: "OutputError",
  });
  // The reader exits without reading: once its pipe (64 KiB) is full the writer blocks until the
  // reader is gone, then gets EPIPE, exit code 141 — whichever finishes first.
  const pipe = run(`for (let i = 0; i < 2048; i++) writeOut("x".repeat(1023));`, "| true");
  assert.deepEqual(pipe.error, {
    stream: "stdout",
    code: "EPIPE",
    exitCode: 141,
    message: "cannot write stdout: Broken pipe",
    name: "OutputError",
  });
});

Deno.test("/dev/null is never a failure, however it was opened: >/dev/null, 1<>/dev/null, a closed stdout", () => {
  // A stdout closed at start-up is replaced with /dev/null (read-write) by the runtime, which is
  // also what Node's stdio "ignore" and Python's DEVNULL hand a child: one descriptor, one answer.
  for (const redirect of ["> /dev/null", "1<> /dev/null", ">&-", "1<> /dev/null 2<> /dev/null"]) {
    for (const flags of [["-A"], ["--no-prompt"]]) {
      const r = run(`writeOut("RUN_DIR: /x"); writeErr("done");`, redirect, flags);
      const stderr = redirect.includes("2<>") ? "" : "done\n";
      assert.deepEqual(
        r,
        { code: 0, stdout: "", stderr, error: undefined },
        `${redirect} ${flags}`,
      );
    }
  }
});
