import assert from "node:assert/strict";
import {
  allValues,
  commandNamed,
  firstPositional,
  hasFlag,
  lastValue,
  type OptionTable,
  positionals,
  readCommandLine,
} from "./args.ts";
import { UsageError } from "../errors.ts";
import { printed, text } from "../text.ts";
import { nearest } from "./suggest.ts";

const OPTIONS: OptionTable = {
  "--root": { value: true },
  "--mode": { value: true, empty: true },
  "--text": { value: true, once: true },
  "--global": {},
  "--tier": {
    value: true,
    check: (v) => {
      if (v !== "all") throw new UsageError(text`unknown tier: ${v}`);
    },
  },
};

/** The printed line of the usage error `argv` gives. */
function error(argv: string[], grammar: Partial<Parameters<typeof readCommandLine>[1]> = {}) {
  try {
    readCommandLine(argv, { options: OPTIONS, ...grammar });
  } catch (e) {
    assert.ok(e instanceof UsageError, String(e));
    return printed(e.text);
  }
  assert.fail(`no error for ${JSON.stringify(argv)}`);
}

Deno.test("readCommandLine: --opt value and --opt=value alike; values verbatim; `--` ends the options", () => {
  const line = readCommandLine(
    ["--root", "--global", "a", "--root=b=c", "--mode=", "--", "--root", "--"],
    { options: OPTIONS },
  );
  assert.equal(line.asks, undefined);
  assert.deepEqual(line.words, [
    { kind: "option", name: "--root", value: "--global" },
    { kind: "positional", value: "a" },
    { kind: "option", name: "--root", value: "b=c" },
    { kind: "option", name: "--mode", value: "" },
    { kind: "positional", value: "--root" },
    { kind: "positional", value: "--" },
  ]);
  assert.equal(lastValue(line.words, "--root"), "b=c");
  assert.deepEqual(allValues(line.words, "--root"), ["--global", "b=c"]);
  assert.deepEqual(positionals(line.words), ["a", "--root", "--"]);
  assert.equal(hasFlag(line.words, "--global"), false, "a value is no flag");
  assert.equal(readCommandLine(["--root", "--"], { options: OPTIONS }).words.length, 1);
});

Deno.test("readCommandLine: each mistake has its own line", () => {
  assert.equal(error(["--root"]), "--root needs a value");
  assert.equal(error(["--root="]), "--root needs a value");
  assert.equal(error(["--root", ""]), "--root needs a value");
  assert.equal(error(["--mode"]), "--mode needs a value", "empty allowed, missing is not");
  assert.equal(error(["--global=1"]), "--global takes no value");
  assert.equal(error(["--help=1"]), "--help takes no value");
  assert.equal(error(["--text", "a", "--text=b"]), "--text given twice");
  assert.equal(error(["--tier", "x"]), "unknown tier: x");
  assert.equal(error(["--bogus"]), "unknown option: --bogus");
  assert.equal(error(["--bogus=1"]), "unknown option: --bogus");
  assert.equal(error(["-"]), "unknown option: -");
  assert.equal(error(["-x"]), "unknown option: -x", "too short for a near miss");
  assert.equal(error(["--rot", "/"]), "unknown option: --rot; did you mean --root?");
  assert.equal(error(["-root", "/"]), "unknown option: -root; did you mean --root?");
  assert.equal(error(["--glob"]), "unknown option: --glob; did you mean --global?");
  assert.equal(error(["--verison"]), "unknown option: --verison; did you mean --version?");
  assert.equal(error(["x"], { noPositionals: true }), "unexpected argument: x");
  assert.equal(error(["--", "-x"], { noPositionals: true }), "unexpected argument: -x");
  assert.equal(
    error(["--ledger", "l"], { known: ["--ledger"], command: "rollback" }),
    "--ledger does not apply to rollback",
  );
  assert.equal(error(["a\nb"], { noPositionals: true }), 'unexpected argument: "a\\nb"');
});

Deno.test("readCommandLine: --help, -h, --version (and `help` where asked) answer at once; earlier mistakes win", () => {
  for (const q of ["--help", "-h"]) {
    assert.deepEqual(readCommandLine(["--global", q, "--bogus"], { options: OPTIONS }), {
      words: [{ kind: "option", name: "--global" }],
      asks: "help",
    });
  }
  assert.equal(readCommandLine(["--version"], { options: OPTIONS }).asks, "version");
  assert.equal(readCommandLine(["help"], { options: OPTIONS, helpWord: true }).asks, "help");
  assert.equal(readCommandLine(["help"], { options: OPTIONS }).asks, undefined);
  assert.equal(readCommandLine(["--", "--help"], { options: OPTIONS }).asks, undefined);
  assert.equal(readCommandLine(["--root", "--help"], { options: OPTIONS }).asks, undefined);
  assert.equal(error(["--bogus", "--help"]), "unknown option: --bogus");
});

Deno.test("firstPositional: skips options and their values; none before a question", () => {
  assert.deepEqual(firstPositional(["--root", "x", "--global", "on", "y"], OPTIONS), {
    index: 3,
    value: "on",
  });
  assert.deepEqual(firstPositional(["--", "--x"], OPTIONS), { index: 1, value: "--x" });
  assert.equal(firstPositional(["--root=x", "--"], OPTIONS), undefined);
  assert.equal(firstPositional(["--help", "on"], OPTIONS), undefined);
  assert.deepEqual(firstPositional(["--bogus", "on"], OPTIONS), { index: 1, value: "on" });
});

Deno.test("commandNamed: a command, else unknown command with a near miss", () => {
  const commands = ["snapshot", "verify", "restore"];
  assert.equal(commandNamed("verify", commands), "verify");
  for (
    const [word, line] of [
      ["snapshoot", "unknown command: snapshoot; did you mean snapshot?"],
      ["verfiy", "unknown command: verfiy; did you mean verify?"],
      ["frobnicate", "unknown command: frobnicate"],
      ["--version", "unknown command: --version"],
    ]
  ) {
    assert.throws(
      () => commandNamed(word, commands),
      (e: unknown) => e instanceof UsageError && e.message === line,
    );
  }
});

Deno.test("nearest: one edit (two from six letters), swaps, case; a unique abbreviation; bounded", () => {
  assert.equal(nearest("snapshoot", ["snapshot"]), "snapshot");
  assert.equal(nearest("statsu", ["status", "state"]), "status");
  assert.equal(nearest("--JSON", ["--json"]), "--json");
  assert.equal(nearest("--obs", ["--observe", "--loaded"]), "--observe");
  assert.equal(nearest("--obs", ["--observe", "--observe-hooks"]), undefined, "ambiguous");
  assert.equal(nearest("--xyz", ["--root"]), undefined);
  assert.equal(nearest("ab", ["abc"]), undefined, "too short");
  assert.equal(nearest("x".repeat(100_000), ["--root"]), undefined, "too long to be a typo");
});
