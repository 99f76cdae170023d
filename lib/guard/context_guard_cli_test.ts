import assert from "node:assert/strict";
import { assertUsage } from "./_test_utils.ts";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { parseGuardArgs as parseWith } from "./cli_shared.ts";
import { CONTEXT_GUARD_COMMANDS, contextGuardMain, splitSelector } from "./context_guard_cli.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const usage = assertUsage;

/** Parse `args` as context-guard's subcommand `command`. */
function parseGuardArgs(args: string[], command: string) {
  return parseWith(args, CONTEXT_GUARD_COMMANDS, command);
}

Deno.test("state options: last wins, values verbatim (even empty or dash-led), errors", () => {
  const spec = "state";
  const p = parseGuardArgs(["--mode", "a", "--mode", "--check", "--flags", "--global"], spec);
  assert.deepEqual(p.values.get("--mode"), ["a", "--check"]);
  assert.deepEqual(p.values.get("--flags"), ["--global"]);
  assert.equal(p.flags.has("--check"), false);
  const q = parseGuardArgs(["--root", "", "--check"], spec);
  assert.deepEqual(q.values.get("--root"), [""]);
  assert.equal(q.flags.has("--check"), true);
  for (const opt of ["--mode", "--before", "--after", "--flags", "--ledger", "--root", "--out"]) {
    usage(() => parseGuardArgs(["--check", opt], spec), `${opt} needs a value`);
  }
  assert.deepEqual(parseGuardArgs(["--mode=slim"], spec).values.get("--mode"), ["slim"]);
  usage(() => parseGuardArgs(["--bogus"], spec), "unknown option: --bogus");
  usage(() => parseGuardArgs(["--run-dir", "d"], spec), "--run-dir does not apply to state");
  usage(() => parseGuardArgs(["x"], spec), "unexpected argument: x");
  usage(() => parseGuardArgs(["--", "--check"], spec), "unexpected argument: --check");
});

Deno.test("verify-deleted options: survivors accumulate, last --run-dir and layer win", () => {
  const p = parseGuardArgs(
    [
      "--survivor",
      "a",
      "--global",
      "--run-dir",
      "r1",
      "--survivor",
      "b",
      "--project",
      "--run-dir",
      "r2",
      "t.md",
    ],
    "verify-deleted",
  );
  assert.deepEqual(p.values.get("--survivor"), ["a", "b"]);
  assert.deepEqual(p.values.get("--run-dir"), ["r1", "r2"]);
  assert.equal(p.layer, "project");
  usage(
    () => parseGuardArgs(["--tokens=nope"], "verify-deleted"),
    "unknown token alphabet: nope (want base or ext)",
  );
  usage(
    () => parseGuardArgs(["--ledger", "l"], "verify-deleted"),
    "--ledger does not apply to verify-deleted",
  );
});

Deno.test("splitSelector: precedence — after --run-dir, on disk, in a manifest: a file; else a selector's form", () => {
  const cwd = makeTempDir("ctxkit-sel-");
  writeFileSync(join(cwd, "2026"), "a file named like a stamp");
  const events = (args: string[]) => parseGuardArgs(args, "restore").events;
  const none = () => false;
  assert.deepEqual(splitSelector(events(["last", "b.md"]), none), {
    selector: "last",
    files: ["b.md"],
  });
  assert.deepEqual(splitSelector(events(["b.md", "20261012"]), none), {
    selector: "20261012",
    files: ["b.md"],
  });
  assert.deepEqual(splitSelector(events(["--run-dir", "d", "last"]), none), { files: ["last"] });
  assert.deepEqual(splitSelector(events([join(cwd, "2026"), "last"]), none), {
    selector: "last",
    files: [join(cwd, "2026")],
  });
  // A deleted manifest file is a file, never a selector.
  assert.deepEqual(splitSelector(events([".claude/rules/style.md"]), none), {
    files: [".claude/rules/style.md"],
  });
  assert.deepEqual(splitSelector(events(["2099"]), (a) => a === "2099"), { files: ["2099"] });
  // `--` makes a dash-led word an operand; it has no selector's form.
  assert.deepEqual(splitSelector(events(["--", "--run-dir"]), none), { files: ["--run-dir"] });
  assert.deepEqual(splitSelector(events(["last", "last"]), none), {
    selector: "last",
    files: ["last"],
  });
});

Deno.test("contextGuardMain: an unknown command is a usage error before anything else", async () => {
  const self = { tool: "context-guard", scriptPath: "/x" };
  await assert.rejects(
    () => contextGuardMain(["bogus"], self),
    (e: unknown) => e instanceof UsageError && e.message === "unknown command: bogus",
  );
  await assert.rejects(
    () => contextGuardMain(["verfiy"], self),
    (e: unknown) =>
      e instanceof UsageError && e.message === "unknown command: verfiy; did you mean verify?",
  );
});
