/**
 * Machine output of the guards (`references/context-guard.md#json`, `#restore-dry-run`,
 * `#snapshot`): `--json` on every context-guard and text-guard command (one document on stdout,
 * exit codes and the exit line unchanged), `restore --dry-run`, `snapshot --quiet`, and flags a
 * command does not take refused (`list` included).
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { GuardResultSchema } from "../lib/guard/json_report.ts";
import { lines, runTool } from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  exampleProject,
  outLines,
  read,
  refusedLines,
  treeState,
} from "./_guard_fixtures.ts";

type Project = ReturnType<typeof exampleProject>;
const LOSSY = "# Project rules\n\nUse Node and run the build.\n";

function cg(p: Project, args: string[], env: Record<string, string> = {}) {
  return runTool("context-guard", args, { cwd: p.proj, env: { ...p.env, ...env } });
}

function tg(p: Project, args: string[]) {
  return runTool("text-guard", args, { cwd: p.proj, env: p.env });
}

/** The one document on stdout, checked against the published schema. */
function doc(r: { stdout: string }) {
  const out = lines(r.stdout);
  strictEqual(out.length, 1, r.stdout);
  return GuardResultSchema.parse(JSON.parse(out[0]));
}

function runDirOf(stdout: string): string {
  return stdout.split("\n").find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
}

Deno.test("--json: snapshot, verify with its rollback, and the same run's text lines inside", () => {
  const p = exampleProject();
  const s = cg(p, ["snapshot", "--json", "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(s.code, 0, s.stderr);
  deepStrictEqual(errLines(s), []);
  const snap = doc(s);
  const rd = snap.run_dirs[0].run_dir;
  deepStrictEqual(
    { ...snap, lines: [] },
    {
      schema: "ctxkit.guard-result/1",
      tool: "context-guard",
      command: "snapshot",
      exit_code: 0,
      ok: true,
      root: p.proj,
      run_dirs: [{ run_dir: rd, manifest: `${rd}/manifest.json` }],
      files: [
        { path: "CLAUDE.md", snapshotted: true, run_dir: rd },
        { path: ".claude/rules/style.md", snapshotted: true, run_dir: rd },
      ],
      pruned: [],
      summary: { snapshot_files: 2 },
      lines: [],
    },
  );
  // The lines are exactly what the text mode prints.
  const text = cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]);
  deepStrictEqual(
    snap.lines.map((l) => l.text),
    outLines(text).map((l) => l.replace(runDirOf(text.stdout), rd)),
  );

  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  const v = cg(p, ["verify", "--json", "--run-dir", rd, "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(v.code, 1);
  const verified = doc(v);
  strictEqual(verified.exit_code, 1);
  strictEqual(verified.ok, false);
  deepStrictEqual(verified.summary, {
    files_failed: 1,
    run: `FAILED - recovery incomplete; inspect preserved current files in ${rd}`,
  });
  const claude = verified.files.find((f) => f.path === "CLAUDE.md")!;
  deepStrictEqual(
    { ...claude, force_command: undefined },
    {
      path: "CLAUDE.md",
      run_dir: rd,
      missing: [
        "kw:MUST NOT",
        "kw:NEVER",
        "neg:!=prod",
        "num:20.11",
        "num:3",
        "num:30",
        "path:scripts/build.sh",
      ],
      gate: "fail",
      action: "kept",
      refused: true,
      current: `${p.proj}/CLAUDE.md`,
      original: `${rd}/orig/CLAUDE.md`,
      force_command: undefined,
    },
  );
  ok(claude.force_command!.endsWith(` restore --run-dir ${rd} --force ${p.proj}/CLAUDE.md`));
  deepStrictEqual(verified.run_dirs, [{
    run_dir: rd,
    result: "failed",
    label: "ROLLBACK_VERIFIED",
  }]);
  // stderr is what it always was, ending with the exit line.
  deepStrictEqual(errLines(v), [
    ...refusedLines("context-guard", rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`),
    `ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${rd})`,
    `RUN: FAILED - recovery incomplete; inspect preserved current files in ${rd}`,
  ]);

  // The way back, as a document.
  const f = cg(p, ["restore", "--json", "--run-dir", rd, "--force", "CLAUDE.md"]);
  strictEqual(f.code, 0, f.stderr);
  const forced = doc(f);
  deepStrictEqual(forced.files, [{
    path: "CLAUDE.md",
    run_dir: rd,
    displaced_to: `${rd}/displaced/1/CLAUDE.md`,
    restored: true,
  }]);
  deepStrictEqual(forced.run_dirs, [{
    run_dir: rd,
    result: "ok",
    label: "RESTORE_VERIFIED",
    mismatches: 0,
  }]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("--json: every context-guard and text-guard command prints one document", () => {
  const p = exampleProject();
  const rd = runDirOf(cg(p, ["snapshot", "CLAUDE.md"]).stdout);
  const runs: Array<[string, ReturnType<typeof cg>, number]> = [
    ["list", cg(p, ["list", "--json"]), 0],
    ["rollback", cg(p, ["rollback", "--json", "--run-dir", rd]), 0],
    ["restore", cg(p, ["restore", "--json"]), 0],
    ["state", cg(p, ["state", "--json", "--check"]), 0],
    [
      "verify-deleted",
      cg(p, ["verify-deleted", "--json", "--run-dir", rd, "--survivor", "CLAUDE.md", "gone.md"]),
      2,
    ],
    ["checkpoint", tg(p, ["checkpoint", "--json", "--run-dir", rd, "CLAUDE.md"]), 0],
    ["status", tg(p, ["status", "--json", "--run-dir", rd]), 0],
    ["verify", tg(p, ["verify", "--json", "--run-dir", rd, "CLAUDE.md"]), 0],
    ["restore", tg(p, ["restore", "--json", "--run-dir", rd, "CLAUDE.md"]), 0],
    [
      "snapshot",
      tg(p, ["snapshot", "--json", "--allow-dirty", "--run-dir", `${p.base}/t`, "CLAUDE.md"]),
      0,
    ],
  ];
  for (const [command, r, code] of runs) {
    strictEqual(r.code, code, `${command}: ${r.stderr}`);
    const d = doc(r);
    strictEqual(d.command, command);
    strictEqual(d.exit_code, code);
    strictEqual(lines(r.stderr).at(-1), code === 0 ? "✅ EXIT:0" : `❌ FAILED EXIT:${code}`);
  }
  const list = doc(runs[0][1]);
  deepStrictEqual(list.runs, [{
    name: rd.slice(rd.lastIndexOf("/") + 1),
    files: 1,
    layer: "project",
  }]);
  const state = doc(runs[3][1]);
  deepStrictEqual(state.state, {
    status: "absent",
    path: `${p.proj}/.claude/brewtools/context-slim/state.json`,
  });
  // A command that dies still prints its document, naming the error; stderr says it as always.
  const died = doc(runs[4][1]);
  strictEqual(died.error, `❌ no snapshot for gone.md in ${rd} - snapshot before deleting`);
  deepStrictEqual(errLines(runs[4][1]), [died.error]);
  const status = doc(runs[6][1]);
  deepStrictEqual(status.files, [{ path: "CLAUDE.md", run_dir: rd, snapshotted: true }]);
});

Deno.test("restore --dry-run: the run dirs, what each file would become, nothing written", () => {
  const p = exampleProject();
  const rd = runDirOf(cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]).stdout);
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  const tree = () => [...treeState(p.proj), ...treeState(p.backups)];
  const before = tree();
  const r = cg(p, ["restore", "--dry-run"]);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r), [
    `DRY_RUN: ${rd}`,
    `WOULD_KEEP: ${p.proj}/.claude/rules/style.md (already at its snapshot bytes)`,
    `WOULD_REFUSE: ${p.proj}/CLAUDE.md (current bytes lack matching draft ownership)`,
    `DRY_RUN_RESULT: refused (${rd})`,
  ]);
  deepStrictEqual(errLines(r), []);
  const forced = cg(p, ["restore", "--dry-run", "--run-dir", rd, "--force", "CLAUDE.md"]);
  strictEqual(forced.code, 0, forced.stderr);
  deepStrictEqual(outLines(forced), [
    `DRY_RUN: ${rd}`,
    `WOULD_OVERWRITE: ${p.proj}/CLAUDE.md (current bytes kept in ${rd}/displaced/)`,
    `DRY_RUN_RESULT: ok (${rd})`,
  ]);
  Deno.removeSync(`${p.proj}/.claude/rules/style.md`);
  const gone = cg(p, [
    "restore",
    "--dry-run",
    "--run-dir",
    rd,
    "--force",
    "CLAUDE.md",
    ".claude/rules/style.md",
  ]);
  deepStrictEqual(outLines(gone).slice(1, 3), [
    `WOULD_OVERWRITE: ${p.proj}/CLAUDE.md (current bytes kept in ${rd}/displaced/)`,
    `WOULD_CREATE: ${p.proj}/.claude/rules/style.md`,
  ]);
  writeFileSync(`${p.proj}/.claude/rules/style.md`, read(`${rd}/orig/.claude/rules/style.md`));
  deepStrictEqual(tree(), before);
  const json = doc(cg(p, ["restore", "--dry-run", "--json"]));
  deepStrictEqual(json.summary, { dry_run: "refused" });
  deepStrictEqual(json.files.map((f) => [f.path, f.would]), [
    [`${p.proj}/.claude/rules/style.md`, "keep"],
    [`${p.proj}/CLAUDE.md`, "refuse"],
  ]);
});

Deno.test("snapshot --quiet: the summary lines only, for both guards", () => {
  const p = exampleProject();
  const q = cg(p, ["snapshot", "--quiet", "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(q.code, 0, q.stderr);
  const rd = runDirOf(q.stdout);
  deepStrictEqual(outLines(q), [
    "SNAPSHOT-ONLY: 1 untracked/git-ignored target(s), no git recovery - the manifest is the only one",
    "GIT-COVERED: 1 tracked target(s), clean",
    `ROOT: ${p.proj}`,
    "SNAPSHOT: 2 files",
    `RUN_DIR: ${rd}`,
    `MANIFEST: ${rd}/manifest.json`,
  ]);
  const t = tg(p, [
    "snapshot",
    "--quiet",
    "--allow-dirty",
    "--run-dir",
    `${p.base}/t`,
    "CLAUDE.md",
  ]);
  deepStrictEqual(outLines(t), [`ROOT: ${p.proj}`, "SNAPSHOT: 1 files", `RUN_DIR: ${p.base}/t`]);
});

Deno.test("flags a command does not take are errors, list's included", () => {
  const p = exampleProject();
  for (
    const [r, line] of [
      [cg(p, ["list", "--json", "extra"]), "❌ unexpected argument: extra"],
      [cg(p, ["list", "--quiet"]), "❌ --quiet does not apply to list"],
      [cg(p, ["verify", "--quiet", "CLAUDE.md"]), "❌ --quiet does not apply to verify"],
      [cg(p, ["rollback", "--dry-run"]), "❌ --dry-run does not apply to rollback"],
      [cg(p, ["list", "--jsno"]), "❌ unknown option: --jsno; did you mean --json?"],
      [
        tg(p, ["restore", "--dry-run", "--run-dir", "x", "CLAUDE.md"]),
        "❌ unknown option: --dry-run",
      ],
    ] as const
  ) {
    strictEqual(r.code, 2, line);
    deepStrictEqual(errLines(r), [line]);
    strictEqual(r.stdout, "");
  }
});
