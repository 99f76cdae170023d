import assert from "node:assert/strict";
import { CtxkitError } from "../exit.ts";
import { parseScanArgs, SCAN_HELP } from "./cli.ts";

function error(argv: string[]): string {
  try {
    parseScanArgs(argv);
  } catch (e) {
    assert.ok(e instanceof CtxkitError);
    assert.equal(e.exitCode, 2);
    return e.message;
  }
  throw new Error("expected an error");
}

Deno.test("parseScanArgs: left to right, value options take the next argument verbatim, last wins", () => {
  assert.deepEqual(parseScanArgs([]), { help: false, global: false, tier: "all" });
  assert.deepEqual(parseScanArgs(["--root", "--global"]), {
    help: false,
    root: "--global",
    global: false,
    tier: "all",
  });
  assert.deepEqual(
    parseScanArgs(["--tier", "per-spawn", "--json", "--global", "--tier", "always-on"]),
    {
      help: false,
      global: true,
      tier: "always-on",
    },
  );
  assert.deepEqual(parseScanArgs(["--root", "/x", "help", "--bogus"]), { help: true });
});

Deno.test("parseScanArgs: exact error lines", () => {
  assert.equal(error(["--root"]), "❌ --root needs a value");
  assert.equal(error(["--root", ""]), "❌ --root needs a value");
  assert.equal(error(["--tier"]), "❌ unknown tier: ");
  assert.equal(error(["--tier", "--help"]), "❌ unknown tier: --help");
  assert.equal(error(["--root=/x"]), "❌ unknown option: --root=/x");
  assert.equal(error(["-x", "--help"]), "❌ unknown option: -x");
});

Deno.test("SCAN_HELP is 14 lines", () => {
  assert.equal(SCAN_HELP.split("\n").length - 1, 14);
  assert.ok(SCAN_HELP.endsWith("no project writes).\n"));
});
