import assert from "node:assert/strict";
import { assertUsage } from "./_test_utils.ts";

import { UsageError } from "../errors.ts";
import { text } from "../text.ts";
import {
  GUARD_ERROR_FORMAT,
  lastValue,
  operands,
  type OptionSpec,
  parseGuardArgs,
} from "./cli_shared.ts";
import { PathRefusedError, RestoreRefusedError, ScanRejectedError } from "./errors.ts";

/** A subcommand with every kind of option. */
const SPEC: OptionSpec = {
  flags: { "--allow-dirty": "allowDirty" },
  values: { "--run-dir": { key: "runDir" }, "--survivor": { key: "survivor" } },
  layer: true,
  tokens: true,
};

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
  assert.deepEqual(p.values.get("runDir"), ["--global", "d"]);
  assert.equal(lastValue(p, "runDir"), "d");
  assert.deepEqual(p.values.get("survivor"), ["-x"]);
  assert.equal(lastValue(p, "absent"), undefined);
  assert.equal(p.layer, undefined, "a consumed value is no layer flag");
  assert.deepEqual([...p.flags], ["allowDirty"]);
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
  assert.deepEqual(q.values.get("runDir"), ["--"]);
  assert.deepEqual(operands(q), ["y.md"]);
  usage(() => parseGuardArgs(["--run-dir", "--", "-y"], SPEC), "unknown option: -y");
});

Deno.test("parseGuardArgs: a value option with no argument left, or an empty one, needs a value", () => {
  usage(() => parseGuardArgs(["--run-dir"], SPEC), "--run-dir needs a value");
  usage(() => parseGuardArgs(["--run-dir", "", "a"], SPEC), "--run-dir needs a value");
  usage(() => parseGuardArgs(["a", "--survivor"], SPEC), "--survivor needs a value");
  // allowEmpty (state's options): "" is a value, but a missing one is still an error.
  const state: OptionSpec = { values: { "--root": { key: "root", allowEmpty: true } } };
  assert.deepEqual(parseGuardArgs(["--root", ""], state).values.get("root"), [""]);
  usage(() => parseGuardArgs(["--root"], state), "--root needs a value");
});

Deno.test("parseGuardArgs: a bare -- ends the options; a second -- is an operand", () => {
  const p = parseGuardArgs(["--global", "--", "--run-dir", "-x", "--", "--project", "-"], SPEC);
  assert.equal(p.layer, "global");
  assert.deepEqual(operands(p), ["--run-dir", "-x", "--", "--project", "-"]);
  assert.equal(p.values.size, 0);
});

Deno.test("parseGuardArgs: unknown options, --tokens= only in its = form, layers last wins", () => {
  for (const bad of ["-", "-x", "--bogus", "--tokens", "--run-dir=d", "--allow-dirty=1"]) {
    usage(() => parseGuardArgs([bad], SPEC), `unknown option: ${bad}`);
  }
  usage(() => parseGuardArgs(["--tokens", "ext"], SPEC), "unknown option: --tokens");
  assert.equal(parseGuardArgs(["--tokens=base", "--tokens=ext"], SPEC).alphabet, "ext");
  usage(
    () => parseGuardArgs(["--tokens="], SPEC),
    "unknown token alphabet:  (want base or ext)",
  );
  usage(
    () => parseGuardArgs(["--tokens=EXT"], SPEC),
    "unknown token alphabet: EXT (want base or ext)",
  );
  // Each subcommand accepts only its own options.
  const bare: OptionSpec = { values: { "--run-dir": { key: "runDir" } } };
  usage(() => parseGuardArgs(["--global"], bare), "unknown option: --global");
  usage(() => parseGuardArgs(["--tokens=ext"], bare), "unknown option: --tokens=ext");
  usage(() => parseGuardArgs(["--allow-dirty"], bare), "unknown option: --allow-dirty");
  const p = parseGuardArgs(["--project", "--global", "--project"], SPEC);
  assert.equal(p.layer, "project");
  assert.deepEqual(p.events, [
    { kind: "layer", layer: "project" },
    { kind: "layer", layer: "global" },
    { kind: "layer", layer: "project" },
  ]);
});

Deno.test("parseGuardArgs: a subcommand without operands names every stray argument, even after --", () => {
  const status: OptionSpec = {
    values: { "--run-dir": { key: "runDir" } },
    noOperands: true,
    unknownWord: "argument",
  };
  assert.equal(lastValue(parseGuardArgs(["--run-dir", "d"], status), "runDir"), "d");
  usage(() => parseGuardArgs(["x"], status), "unknown argument: x");
  usage(() => parseGuardArgs(["-x"], status), "unknown argument: -x");
  usage(() => parseGuardArgs(["--", "--run-dir"], status), "unknown argument: --run-dir");
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
