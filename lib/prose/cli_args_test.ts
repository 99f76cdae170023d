import assert from "node:assert/strict";
import { ProseError } from "./errors.ts";
import { parseCommandLine, parseOnTtl, proseUsage, serveUsage } from "./cli_args.ts";

const USAGE = proseUsage("prose");
const SERVE_USAGE = serveUsage("prose");

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

Deno.test("--help answers at once, after the arguments before it are read; an unknown command before it wins", () => {
  for (
    const args of [["--help"], ["-h"], ["help"], ["help", "x"], ["--help", "bogus"], [
      "on",
      "forever",
      "--help",
    ], ["--help", "--bogus"]]
  ) {
    assert.deepEqual(parseCommandLine(args), { command: "help", text: USAGE }, args.join(" "));
  }
  assert.deepEqual(parseCommandLine(["--version", "--bogus"]), { command: "version" });
  assert.deepEqual(parseCommandLine(["status", "--version"]), { command: "version" });
  assert.deepEqual(usage(["bogus", "--help"]), ["unknown command: bogus", undefined]);
  assert.deepEqual(usage(["--bogus", "--help"]), ["unknown option: --bogus", undefined]);
  // The usage text names the program it is given.
  const help = parseCommandLine(["--help"], () => "dist/prose.js");
  assert.ok(help.command === "help" && help.text.startsWith("usage: dist/prose.js [--local]"));
  assert.throws(
    () => parseCommandLine(["level"], () => "dist/prose.js"),
    (e: unknown) =>
      e instanceof ProseError && e.message === "usage: dist/prose.js level off|minimal|full",
  );
});

Deno.test("usage errors: unknown command or option, misplaced option, values, positionals", () => {
  const cases: [string[], string, string?][] = [
    [["bogus"], "unknown command: bogus"],
    [["stauts"], "unknown command: stauts; did you mean status?"],
    [["serve-x"], "unknown command: serve-x; did you mean serve?"],
    [["status", "--bogus"], "unknown option: --bogus"],
    [["status", "--jsno"], "unknown option: --jsno; did you mean --json?"],
    [["--json=1"], "--json does not apply to on"],
    [["status", "--json=1"], "--json takes no value"],
    [["on", "-3", "turns"], "unknown option: -3"],
    [["consume", "--json"], "--json does not apply to consume"],
    [["--text"], "--text does not apply to on"],
    [["match", "--text"], "--text needs a value"],
    [["match", "--text", "a", "--text", "b"], "--text given twice"],
    [["match", "--text", "a", "--hook-input"], "--text and --hook-input exclude each other"],
    [["match", "x"], "unexpected argument: x"],
    [["off", "now"], "unexpected argument: now"],
    [["install-hooks", "x"], "unexpected argument: x"],
    [["level"], "usage: prose level off|minimal|full", "level"],
    [["level", "max"], "level must be off, minimal or full", "level"],
    [["on", "--level", "off"], "--level must be minimal or full", "level"],
    [["on", "--level=max"], "--level must be minimal or full", "level"],
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

Deno.test("serve: its own options; its usage errors carry its usage line", () => {
  for (
    const args of [["--local", "serve", "--port", "0", "--db", "x.db"], [
      "serve",
      "--port=0",
      "--db=x.db",
    ]]
  ) {
    assert.deepEqual(parseCommandLine(args), { command: "serve", port: "0", db: "x.db" });
  }
  assert.deepEqual(parseCommandLine(["serve", "-h", "--bogus"]), {
    command: "help",
    text: SERVE_USAGE,
  });
  for (
    const [args, message] of [
      [["serve", "--bind", "0.0.0.0"], "unknown option: --bind"],
      [["serve", "--port"], "--port needs a value"],
      [["serve", "--db", ""], "--db needs a value"],
      [["serve", "--port", "1", "--port", "2"], "--port given twice"],
      [["serve", "x y"], "unexpected argument: x y"],
      [["--json", "serve"], "--json does not apply to serve"],
    ] as [string[], string][]
  ) {
    assert.throws(
      () => parseCommandLine(args),
      (e: unknown) =>
        e instanceof ProseError && e.message === message && e.synopsis === SERVE_USAGE,
      args.join(" "),
    );
  }
  assert.throws(
    () => parseCommandLine(["serve", "--bind"], () => "/opt/ctxkit/dist/prose.js"),
    (e: unknown) =>
      e instanceof ProseError &&
      e.synopsis === "usage: /opt/ctxkit/dist/prose.js serve [--port N] [--db PATH]",
  );
});

Deno.test("parseOnTtl: the positional TTL forms", () => {
  assert.equal(parseOnTtl([]), undefined);
  assert.deepEqual(parseOnTtl(["1", "turn"]), { unit: "turn", value: 1 });
  assert.deepEqual(parseOnTtl(["0", "turns"]), { unit: "turn", value: 0 }); // refused by the plan
  for (const unit of ["turn", "block", "session", "explicit"]) {
    assert.deepEqual(parseOnTtl([unit]), { unit });
  }
});
