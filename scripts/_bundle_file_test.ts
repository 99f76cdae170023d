import assert from "node:assert/strict";
import { withBundleShebang } from "./_bundle_file.ts";

Deno.test("withBundleShebang: --no-config ends the bin's shebang, once; no deno shebang is an error", () => {
  const bin = "#!/usr/bin/env -S deno run --no-prompt --allow-read --allow-env --allow-run=git";
  const finished = withBundleShebang(`${bin}\nvar a=1;\n`);
  assert.equal(finished, `${bin} --no-config\nvar a=1;\n`);
  assert.equal(withBundleShebang(finished), finished);
  assert.equal(withBundleShebang(bin), `${bin} --no-config`);
  assert.throws(
    () => withBundleShebang("var a=1;\n"),
    /does not start with the bin's deno shebang/,
  );
  assert.throws(() => withBundleShebang("#!/bin/sh\nexit 0\n"), /deno shebang/);
});
