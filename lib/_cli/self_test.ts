import assert from "node:assert/strict";

import { scriptPathOf, selfCommand } from "./self.ts";

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
