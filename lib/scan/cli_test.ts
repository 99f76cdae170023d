import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { errorLine } from "../_cli/run.ts";
import {
  budgetCheck,
  OBSERVED_TITLES,
  parseScanArgs,
  scanExitCode,
  scanHelp,
  warningLine,
} from "./cli.ts";
import type { ScanRow } from "./schema.ts";
import { buildDocument } from "./document.ts";
import { RULES_AS_OF } from "./loading_rules.ts";

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
  assert.deepEqual(parseScanArgs([]), {
    scan: { global: false, tier: "all" },
    pluginDirs: [],
  });
  assert.deepEqual(parseScanArgs(["--root", "--global"]), {
    scan: { root: "--global", global: false, tier: "all" },
    pluginDirs: [],
  });
  assert.deepEqual(parseScanArgs(["--root=/x", "--tier=per-spawn", "--format=table"]), {
    scan: { root: "/x", global: false, tier: "per-spawn" },
    pluginDirs: [],
    format: "table",
  });
  assert.deepEqual(
    parseScanArgs(["--tier", "per-spawn", "--json", "--global", "--tier", "always-on"]),
    { scan: { global: true, tier: "always-on" }, pluginDirs: [] },
  );
  assert.deepEqual(parseScanArgs(["--root", "/x", "help", "--bogus"]), { asks: "help" });
  assert.deepEqual(parseScanArgs(["--global", "--version", "--bogus"]), { asks: "version" });
});

Deno.test("parseScanArgs: exact error lines", () => {
  assert.equal(error(["--root"]), "❌ --root needs a value");
  assert.equal(error(["--root", ""]), "❌ --root needs a value");
  assert.equal(error(["--tier"]), "❌ --tier needs a value");
  assert.equal(error(["--tier", ""]), "❌ unknown tier: ");
  assert.equal(error(["--tier", "--help"]), "❌ unknown tier: --help");
  assert.equal(error(["--root="]), "❌ --root needs a value");
  assert.equal(error(["--global=yes"]), "❌ --global takes no value");
  assert.equal(error(["-x", "--help"]), "❌ unknown option: -x");
  assert.equal(error(["--tire", "all"]), "❌ unknown option: --tire; did you mean --tier?");
  assert.equal(error(["../demo"]), "❌ unexpected argument: ../demo");
});

Deno.test("parseScanArgs: a bare -- ends the options, and context-scan takes no operands", () => {
  assert.deepEqual(parseScanArgs(["--global", "--"]), {
    scan: { global: true, tier: "all" },
    pluginDirs: [],
  });
  assert.equal(error(["--", "--help"]), "❌ unexpected argument: --help");
  assert.equal(error(["--global", "--", "x"]), "❌ unexpected argument: x");
  assert.equal(error(["--", "--"]), "❌ unexpected argument: --");
  // a value option still takes the next argument verbatim, `--` included
  assert.deepEqual(parseScanArgs(["--root", "--"]), {
    scan: { root: "--", global: false, tier: "all" },
    pluginDirs: [],
  });
  assert.equal(error(["--tier", "--"]), "❌ unknown tier: --");
  // help before `--` still wins; an unknown option before `--` is reported first
  assert.deepEqual(parseScanArgs(["--help", "--", "x"]), { asks: "help" });
  assert.equal(error(["-x", "--", "y"]), "❌ unknown option: -x");
});

Deno.test("parseScanArgs: names in error lines are printed safely", () => {
  assert.equal(error(["--bad\nGATE: PASS"]), '❌ unknown option: "--bad\\nGATE: PASS"');
  assert.equal(error(["--tier", "\x1b[31m"]), '❌ unknown tier: "\\x1b[31m"');
});

Deno.test("scanHelp is 24 lines, names the program and the model's Claude Code version", () => {
  const help = scanHelp("dist/context-scan.js");
  assert.equal(help.split("\n").length - 1, 24);
  assert.ok(help.includes("\n  dist/context-scan.js [--root PATH] "));
  assert.ok(help.includes(`(as of Claude\n                Code ${RULES_AS_OF})`));
  assert.ok(help.endsWith("no project writes).\n"));
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

Deno.test("parseScanArgs: --observe and its options; --plugin-dir is repeatable", () => {
  assert.deepEqual(parseScanArgs(["--observe"]), {
    scan: { global: false, tier: "all" },
    pluginDirs: [],
    observe: { unsandboxed: false, hooks: false, tiers: false, timeoutSeconds: 60 },
  });
  assert.deepEqual(
    parseScanArgs([
      "--claude",
      "/opt/claude",
      "--plugin-dir",
      "a",
      "--observe-timeout",
      "5",
      "--observe-hooks",
      "--observe-unsandboxed",
      "--observe-tiers",
      "--plugin-dir",
      "--b",
      "--observe",
    ]),
    {
      scan: { global: false, tier: "all", pluginDirs: ["a", "--b"] },
      pluginDirs: ["a", "--b"],
      observe: {
        claude: "/opt/claude",
        unsandboxed: true,
        hooks: true,
        tiers: true,
        timeoutSeconds: 5,
      },
    },
  );
  assert.deepEqual(parseScanArgs(["--loaded", "--plugin-dir", "p"]), {
    scan: { global: false, tier: "all", pluginDirs: ["p"] },
    pluginDirs: ["p"],
    loaded: true,
  });
});

Deno.test("parseScanArgs: --observe usage errors are one line", () => {
  assert.equal(error(["--claude"]), "❌ --claude needs a value");
  assert.equal(error(["--claude", "x"]), "❌ --claude needs --observe");
  assert.equal(
    error(["--observe-hooks", "--observe-unsandboxed"]),
    "❌ --observe-hooks needs --observe",
  );
  assert.equal(error(["--observe-tiers", "--loaded"]), "❌ --observe-tiers needs --observe");
  assert.equal(
    error(["--observe", "--observe-timeout", "0"]),
    "❌ --observe-timeout needs a whole number of seconds (1 to 3600): 0",
  );
  assert.equal(error(["--observe", "--observe-timeout"]), "❌ --observe-timeout needs a value");
  assert.equal(
    error(["--observe", "--observe-timeout="]),
    "❌ --observe-timeout needs a whole number of seconds (1 to 3600): ",
  );
  assert.equal(
    error(["--observe", "--observe-timeout", "3601"]),
    "❌ --observe-timeout needs a whole number of seconds (1 to 3600): 3601",
  );
  assert.equal(error(["--plugin-dir"]), "❌ --plugin-dir needs a value");
  assert.equal(error(["--plugin-dir", "p"]), "❌ --plugin-dir needs --observe or --loaded");
});

Deno.test("budgetCheck: formatted numbers, the top contributors, the --tier tier", () => {
  const row = (path: string, tier: ScanRow["tier"], bytes: number): ScanRow => ({
    path,
    root: "project",
    tier,
    kind: "file",
    bytes,
    tokens: Math.floor(bytes / 4),
    estimated: false,
    loading: "startup-instruction",
  });
  const rows = [
    row("/r/CLAUDE.md", "always-on", 24_000),
    row("/r/.claude/rules/a.md", "always-on", 12_000),
    row("/elsewhere/b.md", "always-on", 4_000),
    row("/r/x.md", "always-on", 3_520),
    row("/r/.claude/agents/big.md", "per-spawn", 40_000),
  ];
  const doc = buildDocument("/r", null, "all", rows, []);
  assert.deepEqual(budgetCheck(doc, 8000), {
    exceeded: true,
    line:
      "BUDGET: exceeded always-on 10,880 > 8,000 tokens (top: CLAUDE.md 6,000, .claude/rules/a.md 3,000, /elsewhere/b.md 1,000)",
  });
  assert.deepEqual(budgetCheck(doc, 10_880), {
    exceeded: false,
    line: "BUDGET: ok always-on 10,880 <= 10,880 tokens",
  });
  // --tier per-spawn: the budget is the per-spawn total, not a silent 0
  const spawn = buildDocument(
    "/r",
    null,
    "per-spawn",
    rows.filter((r) => r.tier === "per-spawn"),
    [],
  );
  assert.equal(
    budgetCheck(spawn, 8000).line,
    "BUDGET: exceeded per-spawn 10,000 > 8,000 tokens (top: .claude/agents/big.md 10,000)",
  );
  // names are printed safely
  const odd = buildDocument("/r", null, "all", [row("/r/a\nb.md", "always-on", 400)], []);
  assert.equal(
    budgetCheck(odd, 1).line,
    'BUDGET: exceeded always-on 100 > 1 tokens (top: "a\\nb.md" 100)',
  );
});

Deno.test("OBSERVED_TITLES is categories.ts's list", async () => {
  const { CONTEXT_CATEGORIES } = await import("./categories.ts");
  assert.deepEqual(OBSERVED_TITLES, CONTEXT_CATEGORIES.map((c) => [c.key, c.title]));
});

Deno.test("parseScanArgs: --plugin-dir is repeatable, in order", () => {
  assert.deepEqual(parseScanArgs(["--plugin-dir", "a", "--loaded", "--plugin-dir", "--root"]), {
    loaded: true,
    scan: { global: false, tier: "all", pluginDirs: ["a", "--root"] },
    pluginDirs: ["a", "--root"],
  });
});
