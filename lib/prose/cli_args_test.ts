import assert from "node:assert/strict";
import { ProseError } from "./errors.ts";
import { parseCommandLine, parseOnTtl, SERVE_USAGE, USAGE } from "./cli_args.ts";

/** The usage error `args` give: its message and field. */
function usage(args: string[]): [string, string | undefined] {
  try {
    parseCommandLine(args);
  } catch (e) {
    assert.ok(e instanceof ProseError && e.code === "usage" && e.exitCode === 2, String(e));
    return [e.message, e.field];
  }
  assert.fail(`no usage error for ${JSON.stringify(args)}`);
}

Deno.test("bare prose is on; options and operands of on become typed parameters", () => {
  assert.deepEqual(parseCommandLine([]), { command: "on", local: false, params: {} });
  assert.deepEqual(
    parseCommandLine([
      "on",
      "3",
      "turns",
      "--level",
      "minimal",
      "--for=15m",
      "--source",
      "config",
      "--local",
    ]),
    {
      command: "on",
      local: true,
      params: { ttl: { unit: "turn", value: 3 }, level: "minimal", for: "15m", source: "config" },
    },
  );
  assert.deepEqual(parseCommandLine(["level", "off"]), {
    command: "level",
    local: false,
    level: "off",
  });
  assert.deepEqual(parseCommandLine(["status", "--json"]), {
    command: "status",
    local: false,
    json: true,
  });
  assert.deepEqual(parseCommandLine(["match", "--hook-input", "--activate"]), {
    command: "match",
    local: false,
    text: undefined,
    hookInput: true,
    activate: true,
  });
  assert.deepEqual(parseCommandLine(["install-hooks", "--repo", "/r", "--dry-run"]), {
    command: "install-hooks",
    repo: "/r",
    dryRun: true,
    remove: false,
  });
  assert.deepEqual(parseCommandLine(["session-end", "--local"]), {
    command: "session-end",
    local: true,
  });
});

Deno.test("a bare -- ends the options: what follows is an operand", () => {
  assert.deepEqual(parseCommandLine(["on", "--", "2", "turns"]).command, "on");
  assert.deepEqual(parseCommandLine(["--", "level", "full"]), {
    command: "level",
    local: false,
    level: "full",
  });
  assert.deepEqual(usage(["on", "--", "--level"]), [
    "unknown TTL --level; use N turns, turn, block, session or explicit",
    "ttl",
  ]);
  // A value option still takes the next word verbatim, `--` included.
  assert.deepEqual(parseCommandLine(["match", "--text", "--"]).command, "match");
});

Deno.test("--help wins after a clean option parse, even over an unknown command", () => {
  for (const args of [["--help"], ["-h"], ["bogus", "--help"], ["on", "forever", "--help"]]) {
    assert.deepEqual(parseCommandLine(args), { command: "help", text: USAGE }, args.join(" "));
  }
  assert.deepEqual(usage(["--help", "--bogus"]), ["unknown option --bogus", undefined]);
});

Deno.test("usage errors: unknown command or option, misplaced option, values, operands", () => {
  const cases: [string[], string, string?][] = [
    [["bogus"], "unknown command bogus; see prose --help"],
    [["serve-x"], "unknown command serve-x; see prose --help"],
    [["status", "--bogus"], "unknown option --bogus"],
    [["--json=1"], "unknown option --json"],
    [["on", "-3", "turns"], "unknown option -3"],
    [["consume", "--json"], "--json does not apply to consume"],
    [["--text"], "--text needs a value"],
    [["match", "--text", "a", "--text", "b"], "--text given twice"],
    [["match", "--text", "a", "--hook-input"], "--text and --hook-input exclude each other"],
    [["match", "x"], "match takes no operands; use --text"],
    [["off", "now"], "off takes no operands"],
    [["install-hooks", "x"], "install-hooks takes no operands"],
    [["level"], "usage: prose level off|minimal|full", "level"],
    [["level", "max"], "level must be off, minimal or full", "level"],
    [["on", "--level", "off"], "--level must be minimal or full", "level"],
    [["on", "--source", "root"], "--source must be manual, auto-clarity or config", "source"],
    [["on", "x", "turns"], "N in `on N turns` must be 1 to 1000", "ttl.value"],
    [
      ["on", "forever"],
      "unknown TTL forever; use N turns, turn, block, session or explicit",
      "ttl",
    ],
  ];
  for (const [args, message, field] of cases) {
    assert.deepEqual(usage(args), [message, field], args.join(" "));
  }
});

Deno.test("serve has its own grammar, reached only through --local", () => {
  assert.deepEqual(parseCommandLine(["--local", "serve", "--port", "0", "--db", "x.db"]), {
    command: "serve",
    port: "0",
    db: "x.db",
  });
  assert.deepEqual(parseCommandLine(["serve", "-h", "--bogus"]), {
    command: "help",
    text: SERVE_USAGE,
  });
  assert.deepEqual(usage(["--json", "serve"]), [
    "unknown command serve; see prose --help",
    undefined,
  ]);
  for (
    const [args, message] of [
      [["serve", "--bind", "0.0.0.0"], "unexpected argument --bind"],
      [["serve", "--port"], "--port needs a value"],
      [["serve", "--db", ""], "--db needs a value"],
      [["serve", "--local"], "unexpected argument --local"],
      [["serve", "x y"], 'unexpected argument "x y"'],
    ] as [string[], string][]
  ) {
    assert.throws(
      () => parseCommandLine(args),
      (e: unknown) =>
        e instanceof ProseError && e.message === message && e.synopsis === SERVE_USAGE,
      args.join(" "),
    );
  }
});

Deno.test("parseOnTtl: the positional TTL forms", () => {
  assert.equal(parseOnTtl([]), undefined);
  assert.deepEqual(parseOnTtl(["1", "turn"]), { unit: "turn", value: 1 });
  assert.deepEqual(parseOnTtl(["0", "turns"]), { unit: "turn", value: 0 }); // refused by the plan
  for (const unit of ["turn", "block", "session", "explicit"]) {
    assert.deepEqual(parseOnTtl([unit]), { unit });
  }
});
