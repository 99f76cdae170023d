import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { codeCachedScripts, makeTempDir } from "../../tests/_helpers.ts";

/** Run a tiny bin that calls `runMain` with `body` as its main; returns code and streams. */
function runBin(body: string, options: { shell?: string; flags?: string[] } = {}) {
  const dir = makeTempDir("ctxkit-run-");
  const script = `${dir}/bin.ts`;
  const lib = (p: string) => JSON.stringify(new URL(p, import.meta.url).href);
  writeFileSync(
    script,
    `import { runMain } from ${lib("./run.ts")};\n` +
      `import { writeOut } from ${lib("./output.ts")};\n` +
      `import { UsageError } from ${lib("../errors.ts")};\n` +
      `import { text } from ${lib("../text.ts")};\n` +
      `Deno.exit(await runMain(async () => { ${body} }));\n`,
  );
  const flags = options.flags ?? ["-A"];
  const cmd = `${JSON.stringify(Deno.execPath())} run ${flags.join(" ")} ${JSON.stringify(script)}`;
  const out = new Deno.Command("sh", {
    args: ["-c", `${cmd} ${options.shell ?? ""}`],
    env: { NO_COLOR: "1" },
  }).outputSync();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("runMain: the exit line is always last; typed errors print their line, never a stack", () => {
  assert.deepEqual(runBin(`writeOut("hi"); return 0;`), {
    code: 0,
    stdout: "hi\n",
    stderr: "✅ EXIT:0\n",
  });
  assert.deepEqual(runBin(`throw new UsageError(text\`unknown option: \${"a\\nb"}\`);`), {
    code: 2,
    stdout: "",
    stderr: '❌ unknown option: "a\\nb"\n❌ FAILED EXIT:2\n',
  });
  const internal = runBin(`throw new Error("boom\\nat somewhere");`);
  assert.deepEqual(internal, {
    code: 1,
    stdout: "",
    stderr: "❌ internal error: boom\n❌ FAILED EXIT:1\n",
  });
  const missing = runBin(`Deno.readTextFileSync("/etc/hostname"); return 0;`, {
    flags: ["--no-prompt"],
  });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^❌ missing Deno permission: .*\n❌ FAILED EXIT:2\n$/);
});

Deno.test("a failed write to stdout is a failure: /dev/full exits 74, a closed pipe 141", () => {
  const full = runBin(`writeOut("RUN_DIR: /x"); return 0;`, { shell: "> /dev/full" });
  assert.deepEqual(full, {
    code: 74,
    stdout: "",
    stderr: "❌ cannot write stdout: No space left on device\n❌ FAILED EXIT:74\n",
  });
  // The reader (`true`) exits at once; the writer's own code comes from bash's PIPESTATUS.
  const bash = new Deno.Command("bash", {
    args: [
      "-c",
      `${JSON.stringify(Deno.execPath())} eval 'import { runMain } from ${
        JSON.stringify(new URL("./run.ts", import.meta.url).href)
      }; import { writeOut } from ${
        JSON.stringify(new URL("./output.ts", import.meta.url).href)
      }; Deno.exit(await runMain(async () => { await new Promise((r) => setTimeout(r, 300)); for (let i = 0; i < 1000; i++) writeOut("x".repeat(1000)); return 0; }));' | true; echo "rc=\${PIPESTATUS[0]}" >&2`,
    ],
  }).outputSync();
  const err = new TextDecoder().decode(bash.stderr);
  assert.match(err, /❌ FAILED EXIT:141\nrc=141\n$/);
});

Deno.test("a closed stdout (>&-) is the runtime's /dev/null: the run reports what it did, exit 0", () => {
  const closed = runBin(`writeOut("RUN_DIR: /x"); return 0;`, { shell: ">&-" });
  assert.deepEqual(closed, { code: 0, stdout: "", stderr: "✅ EXIT:0\n" });
  const rw = runBin(`writeOut("RUN_DIR: /x"); return 0;`, { shell: "1<> /dev/null" });
  assert.deepEqual(rw, { code: 0, stdout: "", stderr: "✅ EXIT:0\n" });
});

Deno.test("a failed write to stderr: a run that succeeded exits 74, a failed run keeps its code", () => {
  assert.deepEqual(runBin(`writeOut("ok"); return 0;`, { shell: "2> /dev/full" }), {
    code: 74,
    stdout: "ok\n",
    stderr: "",
  });
  assert.deepEqual(
    runBin(`throw new UsageError(text\`bad\`);`, { shell: "2> /dev/full" }),
    { code: 2, stdout: "", stderr: "" },
  );
});

Deno.test("a path the Deno sandbox refuses under any grant is named, never --allow-all advice", () => {
  const r = runBin(`Deno.readTextFileSync("/proc/self/environ"); return 0;`, {
    flags: ["--no-prompt", "--allow-read"],
  });
  assert.deepEqual(r, {
    code: 2,
    stdout: "",
    stderr:
      "❌ /proc/self/environ: Operation not permitted (refused by the Deno sandbox)\n❌ FAILED EXIT:2\n",
  });
});

Deno.test("a script run through runMain leaves its V8 code cache behind, with or without the exit line", async () => {
  // Deno stores a script's code cache on an event-loop turn; a bin that exits before one
  // recompiles the whole script on every run (references/startup.md#code-cache).
  for (const exitLine of ["1", "0"]) {
    const dir = makeTempDir("ctxkit-cache-");
    const script = `${dir}/tool.js`;
    writeFileSync(
      script,
      `import { runMain } from ${JSON.stringify(new URL("./run.ts", import.meta.url).href)};\n` +
        `Deno.exit(await runMain(() => 0));\n`,
    );
    const out = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-config", script],
      env: { DENO_DIR: `${dir}/deno`, NO_COLOR: "1", CTXKIT_EXIT_LINE: exitLine },
    }).outputSync();
    assert.equal(out.code, 0);
    assert.equal(new TextDecoder().decode(out.stderr), exitLine === "1" ? "✅ EXIT:0\n" : "");
    assert.ok(
      (await codeCachedScripts(`${dir}/deno`)).includes(`file://${script}`),
      `no code cache for ${script} (CTXKIT_EXIT_LINE=${exitLine})`,
    );
  }
});
