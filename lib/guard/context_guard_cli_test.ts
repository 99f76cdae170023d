import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../errors.ts";
import { parseGuardArgs } from "./cli_shared.ts";
import { CONTEXT_GUARD_OPTIONS, contextGuardMain, splitSelector } from "./context_guard_cli.ts";
import { resolveBackup } from "./backups.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const usage = (fn: () => unknown, message: string) =>
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof UsageError, String(e));
    assert.equal(e.exitCode, 2);
    assert.equal(e.message, message);
    return true;
  });

Deno.test("state options: last wins, values verbatim (even empty or dash-led), errors", () => {
  const spec = CONTEXT_GUARD_OPTIONS.state;
  const p = parseGuardArgs(["--mode", "a", "--mode", "--check", "--flags", "--global"], spec);
  assert.deepEqual(p.values.get("mode"), ["a", "--check"]);
  assert.deepEqual(p.values.get("flags"), ["--global"]);
  assert.equal(p.flags.has("check"), false);
  const q = parseGuardArgs(["--root", "", "--check"], spec);
  assert.deepEqual(q.values.get("root"), [""]);
  assert.equal(q.flags.has("check"), true);
  for (const opt of ["--mode", "--before", "--after", "--flags", "--ledger", "--root", "--out"]) {
    usage(() => parseGuardArgs(["--check", opt], spec), `${opt} needs a value`);
  }
  usage(() => parseGuardArgs(["--bogus"], spec), "unknown argument: --bogus");
  usage(() => parseGuardArgs(["x"], spec), "unknown argument: x");
  usage(() => parseGuardArgs(["--mode=slim"], spec), "unknown argument: --mode=slim");
  usage(() => parseGuardArgs(["--", "--check"], spec), "unknown argument: --check");
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
    CONTEXT_GUARD_OPTIONS["verify-deleted"],
  );
  assert.deepEqual(p.values.get("survivor"), ["a", "b"]);
  assert.deepEqual(p.values.get("runDir"), ["r1", "r2"]);
  assert.equal(p.layer, "project");
  usage(
    () => parseGuardArgs(["--tokens=nope"], CONTEXT_GUARD_OPTIONS["verify-deleted"]),
    "unknown token alphabet: nope (want base or ext)",
  );
  usage(
    () => parseGuardArgs(["--ledger", "l"], CONTEXT_GUARD_OPTIONS["verify-deleted"]),
    "unknown option: --ledger",
  );
});

Deno.test("splitSelector: the first operand before any --run-dir that names nothing on disk", () => {
  const cwd = makeTempDir("ctxkit-sel-");
  writeFileSync(join(cwd, "exists.md"), "x");
  const events = (args: string[]) => parseGuardArgs(args, CONTEXT_GUARD_OPTIONS.restore).events;
  const any = () => true;
  assert.deepEqual(splitSelector(events(["last", "b.md"]), any), {
    selector: "last",
    files: ["b.md"],
  });
  assert.deepEqual(splitSelector(events(["--run-dir", "d", "last"]), any), { files: ["last"] });
  assert.deepEqual(splitSelector(events([join(cwd, "exists.md"), "last"]), any), {
    selector: "last",
    files: [join(cwd, "exists.md")],
  });
  assert.deepEqual(splitSelector(events(["--", "--run-dir"]), any), {
    selector: "--run-dir",
    files: [],
  });
  // verify-deleted's rule: only the first operand, and only when it names an existing backup.
  const g = makeTempDir("ctxkit-sel-g-");
  const backups = join(g, "backups");
  mkdirSync(join(backups, "20261012-140307-project_context-slim"), { recursive: true });
  const strict = (arg: string, layer: "project" | "global" | undefined, filesSoFar: number) =>
    filesSoFar === 0 && Deno.statSync(resolveBackup(backups, arg, layer ?? "project")).isDirectory;
  const safe = (arg: string, layer: "project" | "global" | undefined, n: number) => {
    try {
      return strict(arg, layer, n);
    } catch {
      return false;
    }
  };
  const vd = (args: string[]) =>
    parseGuardArgs(args, CONTEXT_GUARD_OPTIONS["verify-deleted"]).events;
  assert.deepEqual(splitSelector(vd(["last", "x"]), safe), { selector: "last", files: ["x"] });
  assert.deepEqual(splitSelector(vd(["2099", "x"]), safe), { files: ["2099", "x"] });
  assert.deepEqual(splitSelector(vd(["--global", "last"]), safe), { files: ["last"] });
  assert.deepEqual(splitSelector(vd(["x", "last"]), safe), { files: ["x", "last"] });
});

Deno.test("contextGuardMain: an unknown command is a usage error before anything else", async () => {
  await assert.rejects(
    () => contextGuardMain(["bogus"], { scriptPath: "/x" }),
    (e: unknown) => e instanceof UsageError && e.message === "unknown command: bogus",
  );
});
