import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { errorLine } from "../_cli/run.ts";
import { parseScanArgs, SCAN_HELP, scanExitCode, warningLine } from "./cli.ts";
import { buildDocument } from "./document.ts";

/** The stderr line the command line prints for `argv`'s usage error. */
function error(argv: string[]): string {
  try {
    parseScanArgs(argv);
  } catch (e) {
    assert.ok(e instanceof UsageError);
    assert.equal(e.exitCode, 2);
    return errorLine(e);
  }
  throw new Error("expected an error");
}

Deno.test("parseScanArgs: left to right, value options take the next argument verbatim, last wins", () => {
  assert.deepEqual(parseScanArgs([]), { help: false, scan: { global: false, tier: "all" } });
  assert.deepEqual(parseScanArgs(["--root", "--global"]), {
    help: false,
    scan: { root: "--global", global: false, tier: "all" },
  });
  assert.deepEqual(
    parseScanArgs(["--tier", "per-spawn", "--json", "--global", "--tier", "always-on"]),
    { help: false, scan: { global: true, tier: "always-on" } },
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

Deno.test("parseScanArgs: a bare -- ends the options, and context-scan takes no operands", () => {
  assert.deepEqual(parseScanArgs(["--global", "--"]), {
    help: false,
    scan: { global: true, tier: "all" },
  });
  assert.equal(error(["--", "--help"]), "❌ unexpected argument: --help");
  assert.equal(error(["--global", "--", "x"]), "❌ unexpected argument: x");
  assert.equal(error(["--", "--"]), "❌ unexpected argument: --");
  // a value option still takes the next argument verbatim, `--` included
  assert.deepEqual(parseScanArgs(["--root", "--"]), {
    help: false,
    scan: { root: "--", global: false, tier: "all" },
  });
  assert.equal(error(["--tier", "--"]), "❌ unknown tier: --");
  // help before `--` still wins; an unknown option before `--` is reported first
  assert.deepEqual(parseScanArgs(["--help", "--", "x"]), { help: true });
  assert.equal(error(["-x", "--", "y"]), "❌ unknown option: -x");
});

Deno.test("parseScanArgs: names in error lines are printed safely", () => {
  assert.equal(error(["--bad\nGATE: PASS"]), '❌ unknown option: "--bad\\nGATE: PASS"');
  assert.equal(error(["--tier", "\x1b[31m"]), '❌ unknown tier: "\\x1b[31m"');
});

Deno.test("SCAN_HELP is 17 lines", () => {
  assert.equal(SCAN_HELP.split("\n").length - 1, 17);
  assert.ok(SCAN_HELP.endsWith("no project writes).\n"));
});

Deno.test("warningLine and scanExitCode: the stderr line of a skipped directory, 0 only when complete", () => {
  const warning = {
    kind: "unreadable-directory",
    root: "project",
    path: "/r/db",
    reason: "Permission denied",
  } as const;
  assert.equal(warningLine(warning), "⚠️ skipped unreadable directory: /r/db");
  assert.equal(
    warningLine({ ...warning, path: "/r/a\nb" }),
    '⚠️ skipped unreadable directory: "/r/a\\nb"',
  );
  const document = buildDocument("/r", null, "all", [], []);
  assert.equal(scanExitCode({ document, complete: true, warnings: [warning] }), 0);
  assert.equal(scanExitCode({ document, complete: false, warnings: [] }), 2);
});

Deno.test("parseScanArgs: --plugin-dir is repeatable, in order", () => {
  assert.deepEqual(parseScanArgs(["--plugin-dir", "a", "--loaded", "--plugin-dir", "--root"]), {
    help: false,
    loaded: true,
    scan: { global: false, tier: "all", pluginDirs: ["a", "--root"] },
  });
});
