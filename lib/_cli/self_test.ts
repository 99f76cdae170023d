import assert from "node:assert/strict";

import {
  invocation,
  INVOKED_AS_VARIABLE,
  programName,
  scriptPathOf,
  selfCommand,
  selfOf,
} from "./self.ts";

Deno.test("selfCommand: the absolute runtime, the permissions, --no-config for a source script", () => {
  assert.equal(Deno.build.standalone, false, "tests run from source");
  // No deno.json is named: a vendored bin/ and lib/ has none (references/output.md#printed-commands).
  assert.deepEqual(selfCommand("/opt/ctx kit/bin/context-guard.ts", ["--allow-all"]), [
    Deno.execPath(),
    "run",
    "--allow-all",
    "--no-config",
    "/opt/ctx kit/bin/context-guard.ts",
  ]);
  assert.deepEqual(selfCommand("/usr/bin/x/bin/prose.ts", ["--allow-read", "--allow-env"]), [
    Deno.execPath(),
    "run",
    "--allow-read",
    "--allow-env",
    "--no-config",
    "/usr/bin/x/bin/prose.ts",
  ]);
});

Deno.test("selfCommand: a bundle runs with --no-config", () => {
  assert.deepEqual(selfCommand("/opt/dist/context-guard.js", []), [
    Deno.execPath(),
    "run",
    "--no-config",
    "/opt/dist/context-guard.js",
  ]);
  assert.ok(Deno.execPath().startsWith("/"), "the runtime is named absolutely");
});

Deno.test("scriptPathOf: the file name, else the URL's path decoded", () => {
  assert.equal(scriptPathOf({ url: "file:///a%20b/x.ts", filename: "/a b/x.ts" }), "/a b/x.ts");
  assert.equal(scriptPathOf({ url: "file:///a%20b/x.js" }), "/a b/x.js");
});

Deno.test("selfOf: takes the wrapper's name out of the environment, so no child inherits it", () => {
  const meta = { url: "file:///opt/ctxkit/dist/prose.js", filename: "/opt/ctxkit/dist/prose.js" };
  Deno.env.set(INVOKED_AS_VARIABLE, "skills/x/prose.sh");
  try {
    assert.deepEqual(selfOf(meta, "prose"), {
      tool: "prose",
      scriptPath: "/opt/ctxkit/dist/prose.js",
      invokedAs: "skills/x/prose.sh",
    });
    assert.equal(Deno.env.get(INVOKED_AS_VARIABLE), undefined);
    assert.deepEqual(selfOf(meta, "prose"), {
      tool: "prose",
      scriptPath: "/opt/ctxkit/dist/prose.js",
    });
  } finally {
    Deno.env.delete(INVOKED_AS_VARIABLE);
  }
});

Deno.test("invocation: a wrapper by its name; a source or bundle by its path, relative below the cwd", () => {
  const cwd = Deno.cwd();
  assert.deepEqual(invocation({ tool: "t", scriptPath: "/x/bin/t.ts", invokedAs: "w a" }), {
    form: "wrapper",
    program: "w a",
  });
  assert.deepEqual(invocation({ tool: "t", scriptPath: `${cwd}/bin/t.ts` }), {
    form: "source",
    program: "bin/t.ts",
  });
  const outside = cwd === "/" ? "/" : "/nowhere-else/dist/t.js";
  assert.deepEqual(invocation({ tool: "t", scriptPath: outside }).form, "bundle");
  assert.equal(programName({ tool: "t", scriptPath: "/x/a\nb/t.js" }), '"/x/a\\nb/t.js"');
});
