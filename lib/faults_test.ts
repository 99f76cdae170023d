import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAULT_POINTS, parseFaultSignal, parseFaultSpec } from "./faults.ts";
import { makeTempDir } from "../tests/_helpers.ts";

Deno.test("parseFaultSpec: name, name:N, and malformed values turn faults off", () => {
  assert.deepEqual(parseFaultSpec("atomic.before-rename"), {
    name: "atomic.before-rename",
    hit: 1,
  });
  assert.deepEqual(parseFaultSpec("x:3"), { name: "x", hit: 3 });
  for (const bad of [undefined, "", "x:0", "x:", ":3", "x:-1", "x y", "x:1:2", "x:1e3"]) {
    assert.equal(parseFaultSpec(bad), undefined, String(bad));
  }
});

Deno.test("every documented fault point is placed in exactly one source line", () => {
  const sources: string[] = [];
  const walk = (dir: URL): void => {
    for (const e of Deno.readDirSync(dir)) {
      if (e.isDirectory) walk(new URL(`${e.name}/`, dir));
      else if (e.name.endsWith(".ts") && !e.name.endsWith("_test.ts") && e.name !== "faults.ts") {
        sources.push(Deno.readTextFileSync(new URL(e.name, dir)));
      }
    }
  };
  walk(new URL("./", import.meta.url));
  for (const name of FAULT_POINTS) {
    const count = sources.reduce((n, s) => n + s.split(`faultPoint("${name}")`).length - 1, 0);
    assert.equal(count, 1, name);
  }
});

/** A script that prints 1, 2, 3, passing the fault point `probe` before each. */
function probeScript(): string {
  const script = join(makeTempDir("ctxkit-faults-"), "probe.ts");
  writeFileSync(
    script,
    `import { faultPoint } from ${
      JSON.stringify(new URL("./faults.ts", import.meta.url).href)
    };\n` +
      `for (let i = 1; i <= 3; i++) { faultPoint("probe"); console.log(i); }\n`,
  );
  return script;
}

function runScript(env: Record<string, string>, permissions: string[]) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...permissions, probeScript()],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
}

Deno.test("faultPoint kills the process with SIGKILL at the selected hit, not before", () => {
  const r = runScript({ CTXKIT_FAULT_POINT: "probe:3" }, ["--allow-env"]);
  assert.equal(r.success, false);
  assert.equal(r.signal, "SIGKILL");
  assert.equal(new TextDecoder().decode(r.stdout), "1\n2\n");
  const first = runScript({ CTXKIT_FAULT_POINT: "probe" }, ["--allow-env"]);
  assert.equal(first.signal, "SIGKILL");
  assert.equal(new TextDecoder().decode(first.stdout), "");
});

Deno.test("faultPoint is a no-op for another name, without the variable, and without env permission", () => {
  for (
    const [env, perms] of [
      [{ CTXKIT_FAULT_POINT: "other" }, ["--allow-env"]],
      [{}, ["--allow-env"]],
      [{ CTXKIT_FAULT_POINT: "probe" }, []],
    ] as const
  ) {
    const r = runScript({ ...env }, [...perms]);
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    assert.equal(new TextDecoder().decode(r.stdout), "1\n2\n3\n");
  }
});

Deno.test("CTXKIT_FAULT_SIGNAL=SIGSTOP stops the process at the point; SIGCONT resumes it (issue 30.4)", async () => {
  assert.equal(parseFaultSignal("SIGSTOP"), "SIGSTOP");
  for (const other of [undefined, "", "SIGTERM", "sigstop"]) {
    assert.equal(parseFaultSignal(other), "SIGKILL", String(other));
  }
  const script = probeScript();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-env", script],
    env: { CTXKIT_FAULT_POINT: "probe:2", CTXKIT_FAULT_SIGNAL: "SIGSTOP" },
    clearEnv: true,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  // Stopped (state T in /proc) once it reached the second hit.
  const state = () => Deno.readTextFileSync(`/proc/${child.pid}/stat`).split(") ")[1][0];
  for (const deadline = Date.now() + 60_000; state() !== "T";) {
    if (Date.now() > deadline) throw new Error("never stopped");
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill("SIGCONT");
  const out = await child.output();
  assert.equal(out.code, 0);
  assert.equal(new TextDecoder().decode(out.stdout), "1\n2\n3\n");
});
