/**
 * Commands a user is handed run as printed, and `--` ends options
 * (`references/output.md#printed-commands`, `references/context-guard.md#options`): a manifest's
 * `restore_cmd` restores its run from any directory with no `deno` on PATH, even when the paths in
 * it hold spaces and quotes; a file literally named `--run-dir` is an operand after `--`.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { git, makeTempDir, type RunResult, runTool, type Tool, writeTree } from "./_helpers.ts";
import { outLines } from "./_guard_fixtures.ts";

const BODY = "Use pnpm 9.1 and NEVER push to main.\n";

/** A git project under a HOME whose name needs shell quoting. */
function project(files: Record<string, string>) {
  const home = join(makeTempDir("ctxkit-cmd-"), "it's a $home");
  const proj = join(home, "my proj");
  writeTree(proj, files);
  git(proj, "init", "-q");
  git(proj, "add", "-A");
  git(proj, "commit", "-qm", "init");
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const run = (tool: Tool, args: string[]): RunResult => runTool(tool, args, { cwd: proj, env });
  return { home, proj, env, run };
}

const ManifestCommand = z.object({ restore_cmd: z.string() });

Deno.test("restore_cmd runs as printed: from / with no deno on PATH, paths needing quotes", () => {
  const p = project({ "CLAUDE.md": BODY });
  const snap = p.run("context-guard", ["snapshot", "CLAUDE.md"]);
  strictEqual(snap.code, 0, snap.stderr);
  const runDir = snap.stdout.match(/^RUN_DIR: (.*)$/m)![1];
  writeFileSync(join(p.proj, "CLAUDE.md"), "Use pnpm 9.1, NEVER push to main!\n");
  strictEqual(p.run("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"]).code, 0);

  const manifest = ManifestCommand.parse(
    JSON.parse(readFileSync(join(runDir, "manifest.json"), "utf8")),
  );
  const out = new Deno.Command("sh", {
    args: ["-c", manifest.restore_cmd],
    cwd: "/",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: p.home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  strictEqual(out.code, 0, `${manifest.restore_cmd}\n${dec.decode(out.stderr)}`);
  deepStrictEqual(dec.decode(out.stdout).split("\n").slice(0, 2), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`,
  ]);
  strictEqual(readFileSync(join(p.proj, "CLAUDE.md"), "utf8"), BODY);
});

Deno.test("restore_cmd of a relative --run-dir runs from any directory: the manifest records it absolute", () => {
  // references/context-guard.md#the-manifest: run_dir and restore_cmd hold the absolute run dir.
  const p = project({ "CLAUDE.md": BODY });
  const snap = p.run("context-guard", ["snapshot", "--run-dir", "bk/./run1/", "CLAUDE.md"]);
  strictEqual(snap.code, 0, snap.stderr);
  ok(outLines(snap).includes("RUN_DIR: bk/./run1/"), snap.stdout);
  const runDir = join(p.proj, "bk/run1");
  writeFileSync(join(p.proj, "CLAUDE.md"), "Use pnpm 9.1, NEVER push to main!\n");
  strictEqual(p.run("text-guard", ["checkpoint", "--run-dir", "bk/run1", "CLAUDE.md"]).code, 0);
  const raw = JSON.parse(readFileSync(join(runDir, "manifest.json"), "utf8"));
  strictEqual(raw.run_dir, runDir);
  const manifest = ManifestCommand.parse(raw);
  const out = new Deno.Command("sh", {
    args: ["-c", manifest.restore_cmd],
    cwd: "/",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: p.home, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  strictEqual(out.code, 0, `${manifest.restore_cmd}\n${dec.decode(out.stderr)}`);
  deepStrictEqual(dec.decode(out.stdout).split("\n").slice(0, 2), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`,
  ]);
  strictEqual(readFileSync(join(p.proj, "CLAUDE.md"), "utf8"), BODY);
});

Deno.test("context-guard: `--` ends options, so files named --run-dir and -x are operands", () => {
  const p = project({ "--run-dir": BODY, "-x": "Timeout 30 seconds.\n" });
  const snap = p.run("context-guard", ["snapshot", "--", "--run-dir", "-x"]);
  strictEqual(snap.code, 0, snap.stderr);
  deepStrictEqual(outLines(snap).slice(2, 5), ["SNAPSHOT: 2 files", "  --run-dir", "  -x"]);
  const verify = p.run("context-guard", ["verify", "--", "--run-dir", "-x"]);
  strictEqual(verify.code, 0, verify.stderr);
  deepStrictEqual(outLines(verify).filter((l) => l.startsWith("FILE: ")), [
    "FILE: --run-dir",
    "FILE: -x",
  ]);
  writeFileSync(join(p.proj, "--run-dir"), "lost it\n");
  // Without `--` the name is the option and its value is missing.
  strictEqual(p.run("context-guard", ["verify", "--run-dir"]).code, 2);
});

Deno.test("text-guard: `--` ends options for snapshot, checkpoint, verify and restore", () => {
  const p = project({ "--run-dir": BODY });
  const runDir = join(makeTempDir("ctxkit-cmd-run-"), "run");
  const snap = p.run("text-guard", ["snapshot", "--run-dir", runDir, "--", "--run-dir"]);
  strictEqual(snap.code, 0, snap.stderr);
  ok(outLines(snap).includes("  --run-dir"), snap.stdout);
  writeFileSync(join(p.proj, "--run-dir"), "Use pnpm 9.1, NEVER push to main!\n");
  const cp = p.run("text-guard", ["checkpoint", "--run-dir", runDir, "--", "--run-dir"]);
  deepStrictEqual(outLines(cp), ["CHECKPOINT: --run-dir"]);
  const verify = p.run("text-guard", [
    "verify",
    "--no-restore",
    "--run-dir",
    runDir,
    "--",
    "--run-dir",
  ]);
  strictEqual(verify.code, 0, verify.stderr);
  const restore = p.run("text-guard", ["restore", "--run-dir", runDir, "--", "--run-dir"]);
  strictEqual(restore.code, 0, restore.stderr);
  strictEqual(readFileSync(join(p.proj, "--run-dir"), "utf8"), BODY);
});
