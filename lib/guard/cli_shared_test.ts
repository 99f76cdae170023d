import assert from "node:assert/strict";
import { assertUsage } from "./_test_utils.ts";

import { UsageError } from "../errors.ts";
import { text } from "../text.ts";
import {
  GUARD_ERROR_FORMAT,
  type GuardCommands,
  lastValue,
  LAYER_OPTIONS,
  operands,
  parseGuardArgs as parseWith,
  TOKENS,
  VALUE,
} from "./cli_shared.ts";
import { PathRefusedError, RestoreRefusedError, ScanRejectedError } from "./errors.ts";

/** A tool with a subcommand of every kind of option, and bare ones. */
const COMMANDS: GuardCommands = {
  full: {
    options: {
      ...LAYER_OPTIONS,
      "--allow-dirty": {},
      "--run-dir": VALUE,
      "--survivor": VALUE,
      "--tokens": TOKENS,
    },
  },
  bare: { options: { "--run-dir": VALUE } },
  state: { options: { "--root": { value: true, empty: true } } },
  status: { options: { "--run-dir": VALUE }, noPositionals: true },
};

/** Parse as the `full` subcommand. */
function parseGuardArgs(args: string[], command = "full") {
  return parseWith(args, COMMANDS, command);
}

const SPEC = "full";

const usage = assertUsage;

Deno.test("parseGuardArgs: options and operands mix; a value option takes the next argument verbatim", () => {
  const p = parseGuardArgs(
    [
      "a.md",
      "--run-dir",
      "--global",
      "--survivor",
      "-x",
      "b.md",
      "--allow-dirty",
      "--run-dir",
      "d",
    ],
    SPEC,
  );
  assert.deepEqual(p.values.get("--run-dir"), ["--global", "d"]);
  assert.equal(lastValue(p, "--run-dir"), "d");
  assert.deepEqual(p.values.get("--survivor"), ["-x"]);
  assert.equal(lastValue(p, "absent"), undefined);
  assert.equal(p.layer, undefined, "a consumed value is no layer flag");
  assert.deepEqual([...p.flags], ["--allow-dirty"]);
  assert.deepEqual(operands(p), ["a.md", "b.md"]);
  assert.deepEqual(p.events, [
    { kind: "operand", value: "a.md" },
    { kind: "value", option: "--run-dir", value: "--global" },
    { kind: "value", option: "--survivor", value: "-x" },
    { kind: "operand", value: "b.md" },
    { kind: "value", option: "--run-dir", value: "d" },
  ]);
  assert.equal(p.alphabet, "base");
  // `--run-dir --` takes `--` as the value: it does not end the options.
  const q = parseGuardArgs(["--run-dir", "--", "y.md"], SPEC);
  assert.deepEqual(q.values.get("--run-dir"), ["--"]);
  assert.deepEqual(operands(q), ["y.md"]);
  usage(() => parseGuardArgs(["--run-dir", "--", "-y"], SPEC), "unknown option: -y");
});

Deno.test("parseGuardArgs: a value option with no argument left, or an empty one, needs a value", () => {
  usage(() => parseGuardArgs(["--run-dir"], SPEC), "--run-dir needs a value");
  usage(() => parseGuardArgs(["--run-dir", "", "a"], SPEC), "--run-dir needs a value");
  usage(() => parseGuardArgs(["a", "--survivor"], SPEC), "--survivor needs a value");
  // empty allowed (state's options): "" is a value, but a missing one is still an error.
  assert.deepEqual(parseGuardArgs(["--root", ""], "state").values.get("--root"), [""]);
  assert.deepEqual(parseGuardArgs(["--root="], "state").values.get("--root"), [""]);
  usage(() => parseGuardArgs(["--root"], "state"), "--root needs a value");
});

Deno.test("parseGuardArgs: a bare -- ends the options; a second -- is an operand", () => {
  const p = parseGuardArgs(["--global", "--", "--run-dir", "-x", "--", "--project", "-"], SPEC);
  assert.equal(p.layer, "global");
  assert.deepEqual(operands(p), ["--run-dir", "-x", "--", "--project", "-"]);
  assert.equal(p.values.size, 0);
});

Deno.test("parseGuardArgs: unknown options, --opt=value for every value option, layers last wins", () => {
  for (const bad of ["-", "-x", "--bogus"]) {
    usage(() => parseGuardArgs([bad], SPEC), `unknown option: ${bad}`);
  }
  usage(() => parseGuardArgs(["--allow-dirty=1"], SPEC), "--allow-dirty takes no value");
  assert.deepEqual(parseGuardArgs(["--run-dir=d"], SPEC).values.get("--run-dir"), ["d"]);
  assert.equal(parseGuardArgs(["--tokens", "ext"], SPEC).alphabet, "ext");
  assert.equal(parseGuardArgs(["--tokens=base", "--tokens=ext"], SPEC).alphabet, "ext");
  usage(() => parseGuardArgs(["--tokens"], SPEC), "--tokens needs a value");
  usage(
    () => parseGuardArgs(["--tokens="], SPEC),
    "unknown token alphabet:  (want base or ext)",
  );
  usage(
    () => parseGuardArgs(["--tokens=EXT"], SPEC),
    "unknown token alphabet: EXT (want base or ext)",
  );
  // Each subcommand accepts only its own options: another's is named as such.
  usage(() => parseGuardArgs(["--global"], "bare"), "--global does not apply to bare");
  usage(() => parseGuardArgs(["--tokens=ext"], "bare"), "--tokens does not apply to bare");
  usage(() => parseGuardArgs(["--allow-dirty"], "bare"), "--allow-dirty does not apply to bare");
  usage(
    () => parseGuardArgs(["--run-dri", "d"], "bare"),
    "unknown option: --run-dri; did you mean --run-dir?",
  );
  const p = parseGuardArgs(["--project", "--global", "--project"], SPEC);
  assert.equal(p.layer, "project");
  assert.deepEqual(p.events, [
    { kind: "layer", layer: "project" },
    { kind: "layer", layer: "global" },
    { kind: "layer", layer: "project" },
  ]);
  assert.equal(parseGuardArgs(["a", "--help", "--bogus"], SPEC).asks, "help");
  assert.equal(parseGuardArgs(["--version"], SPEC).asks, "version");
});

Deno.test("parseGuardArgs: a subcommand without positionals names each, even after --", () => {
  assert.equal(lastValue(parseGuardArgs(["--run-dir", "d"], "status"), "--run-dir"), "d");
  usage(() => parseGuardArgs(["x"], "status"), "unexpected argument: x");
  usage(() => parseGuardArgs(["-x"], "status"), "unknown option: -x");
  usage(() => parseGuardArgs(["--", "--run-dir"], "status"), "unexpected argument: --run-dir");
});

Deno.test("GUARD_ERROR_FORMAT: ❌ and the message, names escaped; refusal and rejection lines as they are", () => {
  const format = GUARD_ERROR_FORMAT.error!;
  assert.deepEqual(format(new UsageError(text`unknown option: ${"-\x1b[2J"}`)), [
    '❌ unknown option: "-\\x1b[2J"',
  ]);
  assert.deepEqual(
    format(new PathRefusedError("a\nb", "not-a-file", text`not a file: ${"a\nb"}`)),
    ['❌ not a file: "a\\nb"'],
  );
  assert.deepEqual(format(new RestoreRefusedError(["a.md", "x\ny.md"])), [
    "RESTORE_REFUSED: a.md (current bytes lack matching draft ownership)\n" +
    'RESTORE_REFUSED: "x\\ny.md" (current bytes lack matching draft ownership)',
  ]);
  assert.deepEqual(format(new ScanRejectedError("b.json", "invalid JSON: x")), [
    "State rejected: b.json: invalid JSON: x",
  ]);
});
