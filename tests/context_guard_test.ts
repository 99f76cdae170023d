/**
 * context-guard CLI acceptance tests (`references/context-guard.md#context-guard`), except the
 * ledger, state and verify-deleted sections (their own test files).
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import {
  git,
  makeTempDir,
  type RunResult,
  runTool,
  runToolAsync,
  selfCommandWords,
  shownProgram,
} from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  type ExampleProject,
  exampleProject,
  fileHash,
  modeOf,
  outLines,
  pathWithoutGit,
  read,
  refusedLines,
  stampOf,
  STYLE_MD,
  treeState,
  writeTree,
} from "./_guard_fixtures.ts";
import { renderManifest } from "../lib/guard/manifest.ts";

const HELP = `context-guard - snapshot / verify / rollback / restore / state for context-slim.

usage: ${shownProgram("context-guard")} <command> [options] [--] [<file>...]
  (--opt V or --opt=V; -- ends the options; --help, --version)

  snapshot       [--project|--global] [--run-dir D] [--allow-dirty] [--quiet] <file>...
  verify         [--project|--global] [--run-dir D | last | <ts>] [--ledger L] [--tokens=base|ext] <file>...
  verify-deleted [--project|--global] [--run-dir D | last | <ts>] [--tokens=base|ext] --survivor S [--survivor S]... <deleted-file>
  rollback       [--run-dir D]...                        whole run, every layer, every file
  restore        [--project|--global] [--run-dir D | last | <ts>] [--dry-run] [<file>...]
  restore        --run-dir D --force <file>...            restore anyway, current bytes kept in displaced/
  state          --mode M --before A.json --after B.json [--flags S] [--ledger F] [--root R] [--out P]
  state --check  [--root R] [--out P]                    ratchet present? (virgin-surface test)
  list                                                   backups, newest first

Layers: project = $CLAUDE_PROJECT_DIR, else the git work tree's top level, else the current
directory; global = $CLAUDE_CONFIG_DIR or $HOME/.claude. Backups:
<global>/backups/<YYYYMMDD-HHMMSS>-<layer>_context-slim/ (orig/ + manifest.json).
Untracked/git-ignored targets are SNAPSHOT-ONLY; a dirty TRACKED target exits 3 unless
--allow-dirty. Restore needs original bytes or a matching draft checkpoint (a run taken with
CTXKIT_GUARD_TRUST=snapshot: no checkpoint for the file) and never deletes; what it overrides is
kept in <run dir>/displaced/. Retention keeps the newest 5 backups. Every command takes --json (one
JSON document on stdout instead of the result lines).

Exit: 0 ok | 1 gate/checksum failed or recovery refused | 2 usage/state error | 3 dirty TRACKED target (nothing written)
`;

// The passing rewrites of the worked example: shorter, every critical token kept.
const CLAUDE_V2 = "# Rules\nUse Node 20.11, run scripts/build.sh before release.\n" +
  "You MUST NOT push to main; NEVER skip review.\nSet env!=prod in tests. Timeout 30 s, retries 3.\n";
const STYLE_V2 = "# Style\nIndent 2 spaces, max line 120.\nALWAYS run lint/check.sh first.\n";
// The failing rewrite of the worked example: CLAUDE.md without `30`.
const CLAUDE_V3 = CLAUDE_V2.replace("Timeout 30 s, ", "");

function cg(
  p: ExampleProject,
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd = p.proj,
): RunResult {
  return runTool("context-guard", args, { cwd, env: { ...p.env, ...env } });
}

function tg(p: ExampleProject, args: string[]): RunResult {
  return runTool("text-guard", args, { cwd: p.proj, env: p.env });
}

function dies(r: RunResult, code: number, ...stderr: string[]) {
  strictEqual(r.code, code, r.stderr);
  deepStrictEqual(errLines(r), stderr);
}

/** Snapshot both example files of the project layer; returns the run dir. */
function snapshotBoth(p: ExampleProject, extra: string[] = []): string {
  const r = cg(p, ["snapshot", ...extra, "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(r.code, 0, r.stderr);
  const line = outLines(r).find((l) => l.startsWith("RUN_DIR: "))!;
  return line.slice("RUN_DIR: ".length);
}

/** A hand-made backup in `B` (for same-second orderings and damaged manifests). */
function fakeBackup(
  backups: string,
  name: string,
  root: string,
  files: Record<string, string>,
  layer = "project",
): string {
  const dir = `${backups}/${name}`;
  writeTree(`${dir}/orig`, files);
  const entries = Object.keys(files).sort().map((path) => ({
    path,
    size: new TextEncoder().encode(files[path]).length,
    sha256: fileHashOfText(files[path]),
  }));
  writeFileSync(
    `${dir}/manifest.json`,
    renderManifest({
      timestamp: name.slice(0, 15),
      layer: layer as "project" | "global",
      root,
      runDir: dir,
      restoreCmd: "x",
      files: entries,
    }),
  );
  return dir;
}

function fileHashOfText(text: string): string {
  const t = makeTempDir("ctxkit-h-");
  writeFileSync(`${t}/f`, text);
  return fileHash(`${t}/f`);
}

Deno.test("context-guard: help, no arguments, unknown command, HOME not set", () => {
  const p = exampleProject({ git: false });
  const none = cg(p, []);
  strictEqual(none.code, 2);
  strictEqual(none.stdout, "", "usage is no answer: it goes to stderr");
  strictEqual(none.stderr, `${HELP}❌ FAILED EXIT:2\n`);
  for (const h of ["help", "-h", "--help"]) {
    const r = cg(p, [h], { HOME: undefined });
    strictEqual(r.code, 0);
    strictEqual(r.stdout, HELP);
  }
  dies(cg(p, ["frobnicate"]), 2, "❌ unknown command: frobnicate");
  dies(cg(p, ["snapshoot"]), 2, "❌ unknown command: snapshoot; did you mean snapshot?");
  dies(cg(p, ["list"], { HOME: undefined }), 2, "❌ HOME is not set");
});

Deno.test("context-guard: argument errors exit 2 with their exact message", () => {
  const p = exampleProject({ git: false });
  mkdirSync(`${p.base}/rd/orig`, { recursive: true });
  const cases: [string[], string][] = [
    [["snapshot", "--run-dir"], "❌ --run-dir needs a value"],
    [["snapshot", "--run-dir", ""], "❌ --run-dir needs a value"],
    [["verify", "--ledger"], "❌ --ledger needs a value"],
    [["verify", "--ledger", ""], "❌ --ledger needs a value"],
    [["restore", "--run-dir"], "❌ --run-dir needs a value"],
    [["rollback", "--run-dir", ""], "❌ --run-dir needs a value"],
    [["snapshot", "--bogus", "CLAUDE.md"], "❌ unknown option: --bogus"],
    [["snapshot", "-"], "❌ unknown option: -"],
    [["rollback", "--global"], "❌ --global does not apply to rollback"],
    [
      ["verify", "--tokens=full", "CLAUDE.md"],
      "❌ unknown token alphabet: full (want base or ext)",
    ],
    [["snapshot"], "❌ snapshot needs at least one file"],
    [["snapshot", "--global"], "❌ snapshot needs at least one file"],
    [["verify", "--run-dir", `${p.base}/rd`], "❌ verify needs at least one file"],
    [["verify", "CLAUDE.md"], `❌ no backups under ${p.backups}`],
    [["restore"], `❌ no backups under ${p.backups}`],
    [["rollback"], `❌ no backups under ${p.backups}`],
    [["snapshot", "nope.md"], "❌ not a file: nope.md"],
  ];
  for (const [args, message] of cases) {
    const r = cg(p, args);
    dies(r, 2, message);
    strictEqual(r.stdout, "", args.join(" "));
  }
});

Deno.test("worked example, snapshot: clean, one tracked + one untracked target, byte for byte", () => {
  const p = exampleProject();
  const r = cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(errLines(r), []);
  const rd = outLines(r)[6].slice("RUN_DIR: ".length);
  const ts = rd.slice(`${p.backups}/`.length, `${p.backups}/`.length + 15);
  strictEqual(rd, `${p.backups}/${ts}-project_context-slim`);
  strictEqual(
    r.stdout,
    [
      "SNAPSHOT-ONLY: 1 untracked/git-ignored target(s), no git recovery - the manifest is the only one: .claude/rules/style.md",
      "GIT-COVERED: 1 tracked target(s), clean",
      `ROOT: ${p.proj}`,
      "SNAPSHOT: 2 files",
      "  CLAUDE.md",
      "  .claude/rules/style.md",
      `RUN_DIR: ${rd}`,
      `MANIFEST: ${rd}/manifest.json`,
      "",
    ].join("\n"),
  );
  // restore_cmd runs as printed: the absolute runtime and script (references/output.md#printed-commands).
  const q = (w: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w}'`);
  const restoreCmd = selfCommandWords("context-guard", ["--allow-all"]).map(q).join(" ");
  const manifest = read(`${rd}/manifest.json`);
  const created = JSON.parse(manifest).created;
  ok(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(created), created);
  strictEqual(
    manifest,
    `{
  "timestamp": "${ts}",
  "mode": "snapshot",
  "layer": "project",
  "root": "${p.proj}",
  "root_physical": "${p.proj}",
  "run_dir": "${rd}",
  "restore_cmd": "${restoreCmd} restore --project --run-dir ${rd}",
  "created": "${created}",
  "seq": 1,
  "files": [
    {"path": ".claude/rules/style.md", "size": 84, "sha256": "8b4dec71020f4ba2a086bdcfeb529a982b648d430f45705543835bac5cb069ee", "mode": "0644"},
    {"path": "CLAUDE.md", "size": 196, "sha256": "4dfb016affccd0d26c12bc20be33f443b924adb52dd42e4b1f1abe60e5ef0ed3", "mode": "0644"}
  ]
}
`,
  );
  strictEqual(modeOf(`${rd}/manifest.json`), 0o600);
  for (const d of [rd, `${rd}/orig`, `${rd}/orig/.claude`, `${rd}/orig/.claude/rules`]) {
    strictEqual(modeOf(d), 0o700, d);
  }
  strictEqual(modeOf(`${rd}/orig/CLAUDE.md`), 0o600);
  strictEqual(modeOf(`${rd}/orig/.claude/rules/style.md`), 0o600);
  strictEqual(read(`${p.proj}/.gitignore`), ".claude/reports/\n");
  ok(git(p.proj, "status", "--porcelain").split("\n").includes("?? .gitignore"));
});

Deno.test("snapshot: a repeated argument gives one manifest entry, SNAPSHOT: 2 files", () => {
  const p = exampleProject();
  const r = cg(p, ["snapshot", "--run-dir", `${p.base}/rd`, "CLAUDE.md", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    "GIT-COVERED: 2 tracked target(s), clean",
    `ROOT: ${p.proj}`,
    "SNAPSHOT: 2 files",
    "  CLAUDE.md",
    "  CLAUDE.md",
    `RUN_DIR: ${p.base}/rd`,
    `MANIFEST: ${p.base}/rd/manifest.json`,
  ]);
  ok(
    read(`${p.base}/rd/manifest.json`).includes(`"files": [
    {"path": "CLAUDE.md", "size": 196, "sha256": "4dfb016affccd0d26c12bc20be33f443b924adb52dd42e4b1f1abe60e5ef0ed3", "mode": "0644"}
  ]`),
  );
});

Deno.test("worked example, verify: passes; fails and rolls the whole run back", () => {
  const p = exampleProject();
  const rd = snapshotBoth(p);
  writeFileSync(`${p.proj}/CLAUDE.md`, CLAUDE_V2);
  writeFileSync(`${p.proj}/.claude/rules/style.md`, STYLE_V2);
  let r = cg(p, ["verify", "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(errLines(r), []);
  deepStrictEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILE: .claude/rules/style.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILES_FAILED: 0",
  ]);
  // 8.3 without checkpoints: refused, both files keep their bytes.
  writeFileSync(`${p.proj}/CLAUDE.md`, CLAUDE_V3);
  r = cg(p, ["verify", "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(r.code, 1);
  const gateLines = [
    "FILE: CLAUDE.md",
    "MISSING: 1",
    "  - num:30",
    "GATE: FAIL",
    "ACTION: kept",
    "FILE: .claude/rules/style.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILES_FAILED: 1",
    `ROLLBACK: whole run (gate failed) ${rd}`,
  ];
  deepStrictEqual(outLines(r), gateLines);
  deepStrictEqual(errLines(r), [
    ...refusedLines(
      "context-guard",
      rd,
      ".claude/rules/style.md",
      `${p.proj}/.claude/rules/style.md`,
    ),
    ...refusedLines("context-guard", rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`),
    `ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${rd})`,
    `RUN: FAILED - recovery incomplete; inspect preserved current files in ${rd}`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_V3);
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_V2);
  // 8.3 with both drafts checkpointed through text-guard.
  const cp = tg(p, ["checkpoint", "--run-dir", rd, "CLAUDE.md", ".claude/rules/style.md"]);
  deepStrictEqual(outLines(cp), ["CHECKPOINT: CLAUDE.md", "CHECKPOINT: .claude/rules/style.md"]);
  r = cg(p, ["verify", "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(r.code, 1);
  deepStrictEqual(errLines(r), []);
  deepStrictEqual(outLines(r), [
    ...gateLines,
    "RESTORED: .claude/rules/style.md",
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    `RUN: FAILED - every file of ${rd} is back at its pre-edit bytes`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
});

Deno.test("worked example, restore: refused for missing draft ownership, nothing written", () => {
  const p = exampleProject();
  const rd = snapshotBoth(p);
  appendFileSync(`${p.proj}/.claude/rules/style.md`, "Another line.\n");
  const before = treeState(p.proj);
  const r = cg(p, ["restore"]);
  strictEqual(r.code, 1);
  strictEqual(r.stdout, "");
  deepStrictEqual(errLines(r), [
    ...refusedLines(
      "context-guard",
      rd,
      ".claude/rules/style.md",
      `${p.proj}/.claude/rules/style.md`,
    ),
    `RESTORE_VERIFIED: FAILED - restoration refused; current bytes preserved (${rd})`,
  ]);
  deepStrictEqual(treeState(p.proj), before);
  // Already-original files need no record: restoring CLAUDE.md alone succeeds and reports it.
  const one = cg(p, ["restore", "CLAUDE.md"]);
  strictEqual(one.code, 0, one.stderr);
  deepStrictEqual(outLines(one), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
  ]);
});

/** A `git` first on PATH that appends its arguments to `<dir>/git.log`, then runs the real git. */
function loggingGit(dir: string): { path: string; calls: () => string[] } {
  const real = spawnSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).stdout.trim();
  ok(real !== "", "no git on PATH");
  const bin = `${dir}/bin`;
  mkdirSync(bin);
  writeFileSync(
    `${bin}/git`,
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${dir}/git.log'\nexec '${real}' "$@"\n`,
    { mode: 0o755 },
  );
  const log = `${dir}/git.log`;
  return {
    path: `${bin}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    calls: () => existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [],
  };
}

Deno.test({
  name:
    "snapshot outside a git repository starts git once, and once inside a clean one per question",
  // The logging git is a shell script.
  ignore: Deno.build.os === "windows",
  fn: () => {
    const plain = exampleProject({ git: false });
    const outside = loggingGit(makeTempDir());
    const r = cg(plain, ["snapshot", "CLAUDE.md"], { PATH: outside.path });
    strictEqual(r.code, 0, r.stderr);
    deepStrictEqual(outside.calls(), [
      `-C ${plain.proj} rev-parse --is-inside-work-tree --git-dir`,
    ]);
    const p = exampleProject();
    const inside = loggingGit(makeTempDir());
    const r2 = cg(p, ["snapshot", "CLAUDE.md"], { PATH: inside.path });
    strictEqual(r2.code, 0, r2.stderr);
    deepStrictEqual(inside.calls(), [
      `-C ${p.proj} rev-parse --is-inside-work-tree --git-dir`,
      `-C ${p.proj} ls-files -z -- CLAUDE.md`,
      `-C ${p.proj} status --porcelain -- CLAUDE.md`,
    ]);
  },
});

Deno.test("snapshot gate: non-git, loose only, dirty tracked, --allow-dirty, global", () => {
  // Non-git project.
  const plain = exampleProject({ git: false });
  let r = cg(plain, ["snapshot", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  strictEqual(
    outLines(r)[0],
    `SNAPSHOT-ONLY: ${plain.proj} is not a git repo - the manifest is the only recovery path`,
  );
  ok(!existsSync(`${plain.proj}/.gitignore`));
  // Loose only: no GIT-COVERED line.
  const p = exampleProject();
  writeTree(p.proj, { "notes.md": "n 1\n" });
  r = cg(p, ["snapshot", ".claude/rules/style.md", "notes.md"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).slice(0, 2), [
    "SNAPSHOT-ONLY: 2 untracked/git-ignored target(s), no git recovery - the manifest is the only one: .claude/rules/style.md notes.md",
    `ROOT: ${p.proj}`,
  ]);
  // Dirty tracked: exit 3 with git's lines, nothing written.
  const d = exampleProject();
  writeFileSync(`${d.proj}/CLAUDE.md`, CLAUDE_MD + "x\n");
  const before = treeState(d.proj);
  r = cg(d, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(r.code, 3);
  deepStrictEqual(outLines(r), [
    "SNAPSHOT-ONLY: 1 untracked/git-ignored target(s), no git recovery - the manifest is the only one: .claude/rules/style.md",
  ]);
  deepStrictEqual(errLines(r), [
    "❌ uncommitted changes in TRACKED targets - refusing to rewrite in place:",
    " M CLAUDE.md",
    "   Commit or stash exactly these paths, then re-run (--allow-dirty accepts the risk).",
  ]);
  deepStrictEqual(treeState(d.proj), before);
  ok(!existsSync(d.backups));
  // --allow-dirty waives it with one warning line.
  r = cg(d, ["snapshot", "--allow-dirty", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).slice(0, 2), [
    "⚠️ --allow-dirty: the git clean-tree check on tracked targets is waived",
    `ROOT: ${d.proj}`,
  ]);
  // Global layer: no git call even inside a dirty repository.
  const g = exampleProject();
  const gl = `${g.home}/.claude`;
  writeTree(gl, { "CLAUDE.md": "global 1\n" });
  git(gl, "init", "-q");
  git(gl, "add", "CLAUDE.md");
  git(gl, "commit", "-qm", "g");
  writeFileSync(`${gl}/CLAUDE.md`, "global 2\n");
  r = cg(g, ["snapshot", "--global", `${gl}/CLAUDE.md`], { PATH: pathWithoutGit() });
  strictEqual(r.code, 0, r.stderr);
  const rd = outLines(r)[4].slice("RUN_DIR: ".length);
  ok(/\/backups\/\d{8}-\d{6}-global_context-slim$/.test(rd), rd);
  deepStrictEqual(outLines(r).slice(0, 4), [
    `⚠️ global layer: no git tree - the manifest is the only recovery path for ${gl}`,
    `ROOT: ${gl}`,
    "SNAPSHOT: 1 files",
    "  CLAUDE.md",
  ]);
  ok(read(`${rd}/manifest.json`).includes(`"layer": "global",`));
  // The global root sits in a git work tree: it gains the .gitignore line (documented quirk)
  // when git is available.
  r = cg(g, ["snapshot", "--global", `${gl}/CLAUDE.md`]);
  strictEqual(r.code, 0, r.stderr);
  strictEqual(read(`${gl}/.gitignore`), ".claude/reports/\n");
});

Deno.test("only git is spawned: without git on PATH project snapshots are SNAPSHOT-ONLY", () => {
  const p = exampleProject();
  const r = cg(p, ["snapshot", "CLAUDE.md"], { PATH: pathWithoutGit() });
  strictEqual(r.code, 0, r.stderr);
  strictEqual(
    outLines(r)[0],
    `SNAPSHOT-ONLY: ${p.proj} is not a git repo - the manifest is the only recovery path`,
  );
  ok(!existsSync(`${p.proj}/.gitignore`));
  const t = runTool("text-guard", ["snapshot", "CLAUDE.md"], {
    cwd: p.proj,
    env: { ...p.env, PATH: pathWithoutGit() },
  });
  strictEqual(t.code, 3);
});

Deno.test("naming: -project, -global, collision -2/-3, --run-dir must be absent or empty", () => {
  const p = exampleProject();
  // Occupy the base and -2 names of the next seconds: the snapshot must take -3.
  const start = Date.now();
  for (let s = 0; s < 8; s++) {
    const stamp = stampOf(new Date(start + s * 1000));
    mkdirSync(`${p.backups}/${stamp}-project_context-slim`, { recursive: true });
    mkdirSync(`${p.backups}/${stamp}-project-2_context-slim`, { recursive: true });
  }
  const rd = snapshotBoth(p);
  ok(/\/\d{8}-\d{6}-project-3_context-slim$/.test(rd), rd);
  // Non-empty --run-dir refused before the stage.
  mkdirSync(`${p.base}/full`);
  writeFileSync(`${p.base}/full/x`, "");
  let r = cg(p, ["snapshot", "--run-dir", `${p.base}/full`, "CLAUDE.md"]);
  dies(
    r,
    2,
    `❌ --run-dir is not empty: ${p.base}/full (refusing to overwrite an existing snapshot)`,
  );
  // Empty existing one: refused by the stage, with both lines.
  mkdirSync(`${p.base}/empty`);
  r = cg(p, ["snapshot", "--run-dir", `${p.base}/empty`, "CLAUDE.md"]);
  dies(
    r,
    2,
    `❌ snapshot directory already exists: ${p.base}/empty`,
    "❌ snapshot failed (text-guard exit 2)",
  );
  deepStrictEqual(readdirSync(`${p.base}/empty`), []);
});

Deno.test("retention: 7 backups with the new one → two PRUNED lines, oldest last", () => {
  const p = exampleProject();
  const names = [1, 2, 3, 4, 5, 6].map((i) => `20200101-00000${i}-project_context-slim`);
  for (const n of names) fakeBackup(p.backups, n, p.proj, { "CLAUDE.md": CLAUDE_MD });
  const r = cg(p, ["snapshot", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  const rd = outLines(r).find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  deepStrictEqual(outLines(r).slice(-2), [
    `PRUNED: ${p.backups}/${names[1]}`,
    `PRUNED: ${p.backups}/${names[0]}`,
  ]);
  deepStrictEqual(readdirSync(p.backups).sort(), [
    ...names.slice(2),
    rd.slice(p.backups.length + 1),
  ]);
  // A run dir outside B: four remain in B.
  fakeBackup(p.backups, "20200101-000000-global_context-slim", p.proj, { "CLAUDE.md": CLAUDE_MD });
  const r2 = cg(p, ["snapshot", "--run-dir", `${p.base}/elsewhere`, "CLAUDE.md"]);
  strictEqual(r2.code, 0, r2.stderr);
  deepStrictEqual(outLines(r2).filter((l) => l.startsWith("PRUNED: ")), [
    `PRUNED: ${p.backups}/${names[2]}`,
    `PRUNED: ${p.backups}/20200101-000000-global_context-slim`,
  ]);
  strictEqual(readdirSync(p.backups).length, 4);
  ok(existsSync(`${rd}/manifest.json`), "the newest run is kept");
});

Deno.test("same second: last, restore, newest run and retention pick -3 first", () => {
  const p = exampleProject();
  const ts = "20261012-140307";
  const mk = (suffix: string, layer: string, content: string) =>
    fakeBackup(
      p.backups,
      `${ts}-${layer}${suffix}_context-slim`,
      layer === "global" ? `${p.home}/.claude` : p.proj,
      { "CLAUDE.md": content },
      layer,
    );
  mk("", "project", "v1 1\n");
  mk("-2", "project", "v2 2\n");
  mk("-3", "project", "v3 3\n");
  mkdirSync(`${p.home}/.claude`, { recursive: true });
  writeFileSync(`${p.home}/.claude/CLAUDE.md`, "g 9\n");
  mk("", "global", "g 9\n");
  const list = cg(p, ["list"]);
  deepStrictEqual(outLines(list), [
    "| Backup | Files | Layer |",
    "|--------|-------|-------|",
    `| ${ts}-project-3_context-slim | 1 | project |`,
    `| ${ts}-project-2_context-slim | 1 | project |`,
    `| ${ts}-project_context-slim | 1 | project |`,
    `| ${ts}-global_context-slim | 1 | global |`,
  ]);
  // verify with no selector: the newest of any layer, -3.
  writeFileSync(`${p.proj}/CLAUDE.md`, "v3 3\n");
  let r = cg(p, ["verify", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  r = cg(p, ["verify", "last", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  // restore --project last → -3 (already original there).
  r = cg(p, ["restore", "--project", "last"]);
  deepStrictEqual(outLines(r), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/${ts}-project-3_context-slim)`,
  ]);
  // rollback with no args: the newest run alone — runs are grouped by creation order (a project
  // run and the global run after it), never by the second in their names.
  r = cg(p, ["rollback"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).filter((l) => l.startsWith("ROLLBACK")), [
    `ROLLBACK: ${p.backups}/${ts}-project-3_context-slim`,
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/${ts}-project-3_context-slim)`,
    "ROLLBACK_RESULT: 1 layer(s), ok",
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), "v3 3\n");
  // Retention after a new snapshot in a later second keeps -3 among the four newest others.
  const s = cg(p, ["snapshot", "--allow-dirty", "CLAUDE.md"]);
  strictEqual(s.code, 0, s.stderr);
  deepStrictEqual(outLines(s).filter((l) => l.startsWith("PRUNED: ")), []);
  fakeBackup(p.backups, "20000101-000000-project_context-slim", p.proj, { "CLAUDE.md": "x\n" });
  const s2 = cg(p, ["snapshot", "--allow-dirty", "--run-dir", `${p.base}/out`, "CLAUDE.md"]);
  // Retention counts per root and layer: the global run is not the project's to prune.
  deepStrictEqual(outLines(s2).filter((l) => l.startsWith("PRUNED: ")), [
    `PRUNED: ${p.backups}/20000101-000000-project_context-slim`,
  ]);
  ok(existsSync(`${p.backups}/${ts}-global_context-slim`));
  ok(existsSync(`${p.backups}/${ts}-project-3_context-slim`));
});

Deno.test("selection: --global last, <ts> prefix, unknown <ts>, restore <ts> across layers", () => {
  const p = exampleProject();
  const gl = `${p.home}/.claude`;
  writeTree(gl, { "CLAUDE.md": "g 1\n" });
  fakeBackup(p.backups, "20261012-140307-project_context-slim", p.proj, { "CLAUDE.md": CLAUDE_MD });
  fakeBackup(
    p.backups,
    "20261012-140307-global_context-slim",
    gl,
    { "CLAUDE.md": "g 1\n" },
    "global",
  );
  fakeBackup(p.backups, "20261012-140308-project_context-slim", p.proj, { "CLAUDE.md": CLAUDE_MD });
  let r = cg(p, ["restore", "--global", "last"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/20261012-140307-global_context-slim)`,
  ]);
  r = cg(p, ["restore", "20261012-140307"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).filter((l) => l.startsWith("RESTORE_VERIFIED")), [
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/20261012-140307-project_context-slim)`,
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/20261012-140307-global_context-slim)`,
  ]);
  r = cg(p, ["restore", "2026"]);
  strictEqual(outLines(r).filter((l) => l.startsWith("RESTORE_VERIFIED")).length, 3);
  r = cg(p, ["restore", "--project", "20261012-140307"]);
  deepStrictEqual(
    outLines(r).at(-1),
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/20261012-140307-project_context-slim)`,
  );
  dies(
    cg(p, ["restore", "--global", "20991231-000000"]),
    2,
    `❌ no run matches 20991231-000000 under ${p.backups}`,
  );
  dies(
    cg(p, ["verify", "20991231-000000", "CLAUDE.md"]),
    2,
    `❌ no run matches 20991231-000000 under ${p.backups}`,
  );
  dies(cg(p, ["restore", "2099"]), 2, `❌ no run matches 2099 under ${p.backups}`);
  // A run dir at the conventional name, however incomplete, is still what the stamp names.
  mkdirSync(`${p.backups}/20991231-000000-project_context-slim`);
  dies(
    cg(p, ["verify", "20991231-000000", "CLAUDE.md"]),
    2,
    `⚠️ ignoring 1 incomplete run dir(s) without a valid manifest in ${p.backups}`,
    `❌ no snapshot dir: ${p.backups}/20991231-000000-project_context-slim/orig`,
  );
  rmSync(`${p.backups}/20991231-000000-project_context-slim`, { recursive: true });
  // rollback takes literal paths only.
  dies(cg(p, ["rollback", "last"]), 2, "❌ no snapshot dir: last/orig");
  // verify --global resolves in the global layer and rejects project files.
  r = cg(p, ["verify", "--global", `${gl}/CLAUDE.md`]);
  strictEqual(r.code, 0, r.stderr);
  r = cg(p, ["verify", "--global", "CLAUDE.md"]);
  dies(r, 2, `❌ CLAUDE.md is outside the global root ${gl}`);
});

Deno.test("manifest reading: every manifest message in order, exit 2, nothing written", () => {
  const p = exampleProject();
  writeFileSync(`${p.proj}/CLAUDE.md`, "draft\n");
  const before = treeState(p.proj);
  const rd = `${p.base}/rd`;
  const m = `${rd}/manifest.json`;
  const check = (manifest: string | undefined, message: string) => {
    rmSync(rd, { recursive: true, force: true });
    writeTree(`${rd}/orig`, { "CLAUDE.md": CLAUDE_MD });
    if (manifest !== undefined) writeFileSync(m, manifest);
    const r = cg(p, ["restore", "--run-dir", rd]);
    dies(r, 2, message);
    strictEqual(r.stdout, "");
    deepStrictEqual(treeState(p.proj), before);
  };
  const entry = (path: string) =>
    `{"path": ${JSON.stringify(path)}, "sha256": "${fileHashOfText(CLAUDE_MD)}"}`;
  const doc = (root: unknown, ...paths: string[]) =>
    JSON.stringify({ root, files: paths.map((x) => JSON.parse(entry(x))) });
  dies(
    cg(p, ["restore", "--run-dir", `${p.base}/nothing`]),
    2,
    `❌ no snapshot dir: ${p.base}/nothing/orig`,
  );
  check(undefined, `❌ no manifest: ${m}`);
  check("{", `❌ unreadable manifest (invalid JSON?): ${m}`);
  check("[]", `❌ unreadable manifest (invalid JSON?): ${m}`);
  check(`{"root": "${p.proj}", "files": {}}`, `❌ unreadable manifest (invalid JSON?): ${m}`);
  check(`{"root": "${p.proj}", "files": [1]}`, `❌ unreadable manifest (invalid JSON?): ${m}`);
  check(
    `{"root": "${p.proj}", "files": [{"path": 1}]}`,
    `❌ unreadable manifest (invalid JSON?): ${m}`,
  );
  check(doc(undefined, "CLAUDE.md"), `❌ manifest has no root: ${m}`);
  check(doc(null, "CLAUDE.md"), `❌ manifest has no root: ${m}`);
  check(doc("", "CLAUDE.md"), `❌ manifest has no root: ${m}`);
  check(doc("proj", "CLAUDE.md"), `❌ manifest root is not an absolute path: ${m}`);
  check(doc(5, "CLAUDE.md"), `❌ manifest root is not an absolute path: ${m}`);
  check(doc(p.proj), `❌ empty snapshot: ${m} lists no files`);
  for (const bad of ["../x", "/etc/x", "a/./b", "a//b", "", "a/.."]) {
    check(doc(p.proj, "CLAUDE.md", bad), `❌ unsafe manifest path: ${bad} (${m})`);
  }
  // A name with a control character is printed escaped (references/output.md#printed-names).
  check(doc(p.proj, "CLAUDE.md", "x\u0000y"), `❌ unsafe manifest path: "x\\x00y" (${m})`);
  check(doc(p.proj, "CLAUDE.md", "CLAUDE.md"), `❌ duplicate manifest path: CLAUDE.md (${m})`);
  // A symlinked parent escaping the root.
  mkdirSync(`${p.base}/outside`);
  symlinkSync(`${p.base}/outside`, `${p.proj}/esc`);
  writeTree(`${rd}/orig`, { "esc/x.md": "x\n" });
  rmSync(rd, { recursive: true, force: true });
  writeTree(`${rd}/orig`, { "esc/x.md": "x\n" });
  writeFileSync(
    m,
    JSON.stringify({ root: p.proj, files: [{ path: "esc/x.md", sha256: fileHashOfText("x\n") }] }),
  );
  dies(cg(p, ["restore", "--run-dir", rd]), 2, `❌ unsafe manifest path: esc/x.md (${m})`);
  deepStrictEqual(readdirSync(`${p.base}/outside`), []);
});

Deno.test("restore integrity: checksum mismatch and missing copy → exit 1; bad file arguments → exit 2", () => {
  const p = exampleProject();
  const rd = snapshotBoth(p);
  writeFileSync(`${p.proj}/CLAUDE.md`, "draft\n");
  tg(p, ["checkpoint", "--run-dir", rd, "CLAUDE.md"]);
  writeFileSync(`${rd}/orig/CLAUDE.md`, "tampered\n");
  renameSync(`${rd}/orig/.claude/rules/style.md`, `${p.base}/moved`);
  let r = cg(p, ["rollback", "--run-dir", rd]);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r), [`ROLLBACK: ${rd}`, "ROLLBACK_RESULT: 1 layer(s), FAILED"]);
  deepStrictEqual(errLines(r), [
    `❌ MISSING FROM SNAPSHOT: .claude/rules/style.md (manifest lists it, ${rd}/orig has no copy)`,
    "❌ SNAPSHOT CHECKSUM MISMATCH: CLAUDE.md",
    `ROLLBACK_VERIFIED: FAILED - snapshot incomplete or damaged; current bytes preserved (${rd})`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), "draft\n");
  // Named files: not in the manifest / outside the root.
  writeFileSync(`${p.proj}/other.md`, "o\n");
  dies(cg(p, ["restore", "--run-dir", rd, "other.md"]), 2, "❌ not in the manifest: other.md");
  writeFileSync(`${p.base}/out.md`, "o\n");
  dies(
    cg(p, ["restore", "--run-dir", rd, `${p.base}/out.md`]),
    2,
    `❌ ${p.base}/out.md is outside the snapshot root ${p.proj}`,
  );
  // A directory that is gone is no reason to refuse (a deleted skill directory comes back, issue
  // 22 item 16): the file must be in the manifest; a directory part that is a file stays unresolved.
  dies(cg(p, ["restore", "--run-dir", rd, "no/dir.md"]), 2, "❌ not in the manifest: no/dir.md");
  dies(
    cg(p, ["restore", "--run-dir", rd, "CLAUDE.md/x.md"]),
    2,
    "❌ cannot resolve CLAUDE.md/x.md",
  );
  // The damaged copy repaired: the named file alone restores.
  writeFileSync(`${rd}/orig/CLAUDE.md`, CLAUDE_MD);
  r = cg(p, ["restore", "--run-dir", rd, "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("rollback: a symlinked current file is refused by the stage, bytes preserved", () => {
  const p = exampleProject();
  const rd = snapshotBoth(p);
  writeFileSync(`${p.base}/victim`, "victim\n");
  unlinkSync(`${p.proj}/CLAUDE.md`);
  symlinkSync(`${p.base}/victim`, `${p.proj}/CLAUDE.md`);
  const r = cg(p, ["rollback", "--run-dir", rd]);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r), [`ROLLBACK: ${rd}`, "ROLLBACK_RESULT: 1 layer(s), FAILED"]);
  deepStrictEqual(errLines(r), [
    `❌ symbolic-link target: ${p.proj}/CLAUDE.md - name the intended real file explicitly: ${p.base}/victim`,
    `ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${rd})`,
  ]);
  strictEqual(read(`${p.base}/victim`), "victim\n");
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
});

Deno.test("verify: gate failure with a missing manifest exits 2 after the ROLLBACK: line", () => {
  const p = exampleProject();
  const rd = snapshotBoth(p);
  writeFileSync(`${p.proj}/CLAUDE.md`, CLAUDE_V3);
  unlinkSync(`${rd}/manifest.json`);
  const r = cg(p, ["verify", "--run-dir", rd, "CLAUDE.md"]);
  strictEqual(r.code, 2);
  deepStrictEqual(outLines(r).slice(-2), [
    "FILES_FAILED: 1",
    `ROLLBACK: whole run (gate failed) ${rd}`,
  ]);
  deepStrictEqual(errLines(r), [`❌ no manifest: ${rd}/manifest.json`]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_V3);
});

Deno.test("verify: pre-flight errors exit 2 without rollback", () => {
  const p = exampleProject();
  const rd = snapshotBoth(p);
  writeFileSync(`${p.proj}/CLAUDE.md`, "gone 1\n");
  tg(p, ["checkpoint", "--run-dir", rd, "CLAUDE.md"]);
  unlinkSync(`${p.proj}/.claude/rules/style.md`);
  // `last` names the run: a vanished file is otherwise taken for the selector (the selector heuristic).
  const r = cg(p, ["verify", "last", "CLAUDE.md", ".claude/rules/style.md"]);
  dies(r, 2, "❌ target vanished: .claude/rules/style.md");
  strictEqual(r.stdout, "");
  strictEqual(read(`${p.proj}/CLAUDE.md`), "gone 1\n");
});

Deno.test("rollback: both layers of the newest run, ok; one refused → FAILED", () => {
  const p = exampleProject();
  const gl = `${p.home}/.claude`;
  writeTree(gl, { "CLAUDE.md": "global NEVER 7\n" });
  const prd = snapshotBoth(p);
  const g = cg(p, ["snapshot", "--global", `${gl}/CLAUDE.md`]);
  strictEqual(g.code, 0, g.stderr);
  const grd = outLines(g).find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  if (
    prd.slice(p.backups.length + 1, p.backups.length + 16) !==
      grd.slice(p.backups.length + 1, p.backups.length + 16)
  ) {
    // Different seconds: name them explicitly instead.
  }
  writeFileSync(`${p.proj}/CLAUDE.md`, "p draft\n");
  writeFileSync(`${gl}/CLAUDE.md`, "g draft\n");
  tg(p, ["checkpoint", "--run-dir", prd, "CLAUDE.md"]);
  runTool("text-guard", ["checkpoint", "--run-dir", grd, `${gl}/CLAUDE.md`], {
    cwd: p.proj,
    env: { ...p.env, CLAUDE_PROJECT_DIR: gl },
  });
  let r = cg(p, ["rollback", "--run-dir", prd, grd]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    `ROLLBACK: ${prd}`,
    "RESTORED: .claude/rules/style.md",
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${prd})`,
    `ROLLBACK: ${grd}`,
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${grd})`,
    "ROLLBACK_RESULT: 2 layer(s), ok",
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${gl}/CLAUDE.md`), "global NEVER 7\n");
  // A concurrent edit in the global layer: that layer is refused, the other still restored.
  writeFileSync(`${p.proj}/CLAUDE.md`, "p draft\n");
  writeFileSync(`${gl}/CLAUDE.md`, "someone else\n");
  r = cg(p, ["rollback", "--run-dir", prd, "--run-dir", grd]);
  strictEqual(r.code, 1);
  strictEqual(outLines(r).at(-1), "ROLLBACK_RESULT: 2 layer(s), FAILED");
  deepStrictEqual(errLines(r), [
    ...refusedLines("context-guard", grd, "CLAUDE.md", `${gl}/CLAUDE.md`),
    `ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${grd})`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${gl}/CLAUDE.md`), "someone else\n");
});

Deno.test("rollback with no arguments takes every layer of the newest run, paired by creation order", () => {
  const p = exampleProject();
  const gl = `${p.home}/.claude`;
  writeTree(gl, { "CLAUDE.md": "g 1\n" });
  fakeBackup(p.backups, "20261012-140307-project_context-slim", p.proj, { "CLAUDE.md": CLAUDE_MD });
  fakeBackup(
    p.backups,
    "20261012-140307-global_context-slim",
    gl,
    { "CLAUDE.md": "g 1\n" },
    "global",
  );
  fakeBackup(p.backups, "20261012-140306-project_context-slim", p.proj, { "CLAUDE.md": "old\n" });
  // In creation order (these older runs carry no record: their names order them, project before
  // global within a second) the global run follows the 140306 project run, so it belongs to that
  // run; the newest run is 140307's project run alone.
  let r = cg(p, ["rollback"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).filter((l) => !l.startsWith("RESTORED")), [
    `ROLLBACK: ${p.backups}/20261012-140307-project_context-slim`,
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/20261012-140307-project_context-slim)`,
    "ROLLBACK_RESULT: 1 layer(s), ok",
  ]);
  // A global run taken after the newest project run (a later second) pairs with it.
  fakeBackup(
    p.backups,
    "20261012-140309-global_context-slim",
    gl,
    { "CLAUDE.md": "g 1\n" },
    "global",
  );
  r = cg(p, ["rollback"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).filter((l) => !l.startsWith("RESTORED")), [
    `ROLLBACK: ${p.backups}/20261012-140307-project_context-slim`,
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/20261012-140307-project_context-slim)`,
    `ROLLBACK: ${p.backups}/20261012-140309-global_context-slim`,
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${p.backups}/20261012-140309-global_context-slim)`,
    "ROLLBACK_RESULT: 2 layer(s), ok",
  ]);
});

Deno.test("list: header, newest first, ? layer, 0 files without orig/", () => {
  const p = exampleProject();
  fakeBackup(p.backups, "20261012-140307-project_context-slim", p.proj, {
    "a.md": "a\n",
    "b/c.md": "c\n",
  });
  mkdirSync(`${p.backups}/20261012-140308-global_context-slim`, { recursive: true });
  writeFileSync(
    `${p.backups}/20261012-140308-global_context-slim/manifest.json`,
    '{"layer": "Global"}',
  );
  mkdirSync(`${p.backups}/20261012-140309-project_context-slim/orig`, { recursive: true });
  writeFileSync(`${p.backups}/20261012-140309-project_context-slim/manifest.json`, "not json");
  // A word or flag list does not take is an error, never ignored (it took --json silently before).
  dies(cg(p, ["list", "ignored", "--args"]), 2, "❌ unexpected argument: ignored");
  dies(cg(p, ["list", "--jsno"]), 2, "❌ unknown option: --jsno; did you mean --json?");
  const r = cg(p, ["list"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    "| Backup | Files | Layer |",
    "|--------|-------|-------|",
    "| 20261012-140309-project_context-slim | 0 | ? |",
    "| 20261012-140308-global_context-slim | 0 | ? |",
    "| 20261012-140307-project_context-slim | 2 | project |",
  ]);
  const empty = exampleProject();
  deepStrictEqual(outLines(cg(empty, ["list"])), [
    "| Backup | Files | Layer |",
    "|--------|-------|-------|",
  ]);
});

Deno.test("CLAUDE_CONFIG_DIR moves the global and backup roots", () => {
  const p = exampleProject();
  const cfg = `${p.base}/cfg`;
  writeTree(cfg, { "CLAUDE.md": "cfg ALWAYS\n" });
  let r = cg(p, ["snapshot", "--global", `${cfg}/CLAUDE.md`], { CLAUDE_CONFIG_DIR: `${cfg}/` });
  strictEqual(r.code, 0, r.stderr);
  strictEqual(
    outLines(r)[0],
    `⚠️ global layer: no git tree - the manifest is the only recovery path for ${cfg}`,
  );
  ok(outLines(r).find((l) => l.startsWith("RUN_DIR: "))!.startsWith(`RUN_DIR: ${cfg}/backups/`));
  ok(!existsSync(p.backups));
  // Relative CLAUDE_CONFIG_DIR joins the logical cwd.
  r = cg(p, ["list"], { CLAUDE_CONFIG_DIR: "cfg" }, p.base);
  strictEqual(outLines(r).length, 3);
  // Unset: $HOME/.claude.
  r = cg(p, ["snapshot", "CLAUDE.md"]);
  ok(
    outLines(r).find((l) => l.startsWith("RUN_DIR: "))!.startsWith(
      `RUN_DIR: ${p.home}/.claude/backups/`,
    ),
  );
});

Deno.test("dotfiles: ~/.claude linked elsewhere works; linked backups or run dir refused", () => {
  const p = exampleProject();
  const dot = `${p.base}/dotfiles/claude`;
  mkdirSync(dot, { recursive: true });
  symlinkSync(dot, `${p.home}/.claude`);
  let r = cg(p, ["snapshot", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  const rd = outLines(r).find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  ok(rd.startsWith(`${p.home}/.claude/backups/`));
  ok(existsSync(`${dot}/backups/${rd.slice(`${p.home}/.claude/backups/`.length)}/manifest.json`));
  writeFileSync(`${p.proj}/CLAUDE.md`, "x\n");
  tg(p, ["checkpoint", "--run-dir", rd, "CLAUDE.md"]);
  r = cg(p, ["restore"]);
  strictEqual(r.code, 0, r.stderr);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  // A symlinked backups dir is refused, nothing written there.
  const q = exampleProject();
  mkdirSync(`${q.home}/.claude`, { recursive: true });
  mkdirSync(`${q.base}/elsewhere`);
  symlinkSync(`${q.base}/elsewhere`, `${q.home}/.claude/backups`);
  r = cg(q, ["snapshot", "CLAUDE.md"]);
  strictEqual(r.code, 2);
  deepStrictEqual(errLines(r), [
    `❌ symbolic-link snapshot path: ${q.home}/.claude/backups`,
    "❌ snapshot failed (text-guard exit 2)",
  ]);
  deepStrictEqual(readdirSync(`${q.base}/elsewhere`), []);
  // A symlinked run dir (explicit, inside B) is refused.
  unlinkSync(`${q.home}/.claude/backups`);
  mkdirSync(`${q.home}/.claude/backups`);
  symlinkSync(`${q.base}/elsewhere`, `${q.home}/.claude/backups/x_context-slim`);
  r = cg(q, ["snapshot", "--run-dir", `${q.home}/.claude/backups/x_context-slim`, "CLAUDE.md"]);
  strictEqual(r.code, 2);
  deepStrictEqual(errLines(r), [
    `❌ symbolic-link snapshot path: ${q.home}/.claude/backups/x_context-slim`,
    "❌ snapshot failed (text-guard exit 2)",
  ]);
  deepStrictEqual(readdirSync(`${q.base}/elsewhere`), []);
});

Deno.test("snapshot: a logical path that physically lies outside the root is refused by the stage", () => {
  const p = exampleProject();
  mkdirSync(`${p.base}/ext`);
  writeFileSync(`${p.base}/ext/x.md`, "x 1\n");
  symlinkSync(`${p.base}/ext`, `${p.proj}/linked`);
  const r = cg(p, ["snapshot", "--allow-dirty", "linked/x.md"]);
  strictEqual(r.code, 2);
  deepStrictEqual(errLines(r), [
    `❌ linked/x.md is outside the project root ${p.proj}`,
    "❌ snapshot failed (text-guard exit 2)",
  ]);
  dies(
    cg(p, ["snapshot", `${p.base}/ext/x.md`]),
    2,
    `❌ ${p.base}/ext/x.md is outside the snapshot root ${p.proj}`,
  );
  ok(!existsSync(p.backups));
});

Deno.test("restore_cmd quotes paths with shell-special characters", () => {
  const p = exampleProject();
  const rd = `${p.base}/run dir's`;
  const r = cg(p, ["snapshot", "--run-dir", rd, "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  ok(
    read(`${rd}/manifest.json`).includes(
      `restore --project --run-dir '${p.base}/run dir'\\\\''s'"`,
    ),
  );
});

Deno.test("names with a backslash or newline give valid JSON manifests", () => {
  const p = exampleProject({ git: false });
  writeTree(p.proj, { "a\\b.md": "a 1\n", "c\nd.md": "c 2\n" });
  const r = cg(p, ["snapshot", "--run-dir", `${p.base}/rd`, "a\\b.md", "c\nd.md"]);
  strictEqual(r.code, 0, r.stderr);
  const doc = JSON.parse(read(`${p.base}/rd/manifest.json`));
  deepStrictEqual(doc.files.map((f: { path: string }) => f.path), ["a\\b.md", "c\nd.md"]);
  writeFileSync(`${p.proj}/a\\b.md`, "changed\n");
  tg(p, ["checkpoint", "--run-dir", `${p.base}/rd`, "a\\b.md"]);
  const back = cg(p, ["restore", "--run-dir", `${p.base}/rd`]);
  strictEqual(back.code, 0, back.stderr);
  strictEqual(read(`${p.proj}/a\\b.md`), "a 1\n");
});

Deno.test("concurrent snapshots never share a run dir and all add the ignore line once", async () => {
  const p = exampleProject();
  rmSync(`${p.proj}/.gitignore`, { force: true });
  // Four at most: a fifth concurrent run could already prune an in-flight one (retention keeps 5).
  const runs = await Promise.all(
    [1, 2, 3, 4].map(() =>
      runToolAsync("context-guard", ["snapshot", "CLAUDE.md"], { cwd: p.proj, env: p.env })
    ),
  );
  const dirs = runs.map((r) => {
    strictEqual(r.code, 0, r.stderr);
    return outLines(r).find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  });
  strictEqual(new Set(dirs).size, 4);
  for (const d of dirs) strictEqual(read(`${d}/orig/CLAUDE.md`), CLAUDE_MD);
  const ignore = read(`${p.proj}/.gitignore`).split("\n");
  strictEqual(ignore.filter((l) => l === ".claude/reports/").length, 1);
});

Deno.test("verify without a layer flag takes the newest run of the layer its files are in", () => {
  const p = exampleProject();
  const gl = `${p.home}/.claude`;
  writeTree(gl, { "rules.md": "g 1\n" });
  fakeBackup(p.backups, "20261012-140307-project_context-slim", p.proj, { "CLAUDE.md": CLAUDE_MD });
  const grd = fakeBackup(
    p.backups,
    "20261012-140308-global_context-slim",
    gl,
    { "rules.md": "g 1\n" },
    "global",
  );
  // The newest run is global, but CLAUDE.md lies in the project: its newest project run.
  const implied = cg(p, ["verify", "CLAUDE.md"]);
  strictEqual(implied.code, 0, implied.stderr);
  deepStrictEqual(outLines(implied).at(-1), "FILES_FAILED: 0");
  // A file of the global root implies the global run.
  const g = cg(p, ["verify", `${gl}/rules.md`]);
  strictEqual(g.code, 0, g.stderr);
  ok(grd.length > 0);
  // --project last finds the project run.
  const r = cg(p, ["verify", "--project", "CLAUDE.md"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).at(-1), "FILES_FAILED: 0");
});

Deno.test("restore naming only global files, no layer flag: the newest global run (deviation: Layer of named files)", () => {
  const p = exampleProject();
  const gl = `${p.home}/.claude`;
  writeTree(gl, { "CLAUDE.md": "Global: NEVER force-push.\n" });
  const gs = cg(p, ["snapshot", "--global", `${gl}/CLAUDE.md`]);
  strictEqual(gs.code, 0, gs.stderr);
  const grd = outLines(gs).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
  snapshotBoth(p); // a newer project run: the newest run of all is not the global one
  writeFileSync(`${gl}/CLAUDE.md`, "Global.\n");
  const ck = runTool("text-guard", ["checkpoint", "--run-dir", grd, "CLAUDE.md"], {
    cwd: gl,
    env: { ...p.env, CLAUDE_PROJECT_DIR: gl },
  });
  strictEqual(ck.code, 0, ck.stderr);
  // --project pins the project layer, as the original's default did: a global path is outside it.
  dies(
    cg(p, ["restore", "--project", `${gl}/CLAUDE.md`]),
    2,
    `❌ ${gl}/CLAUDE.md is outside the snapshot root ${p.proj}`,
  );
  strictEqual(read(`${gl}/CLAUDE.md`), "Global.\n");
  // No flag: the file's own layer (the original took --project and exited 2 the same way).
  const r = cg(p, ["restore", `${gl}/CLAUDE.md`]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${grd})`,
  ]);
  strictEqual(read(`${gl}/CLAUDE.md`), "Global: NEVER force-push.\n");
});

Deno.test("verify --tokens=ext gates the extended classes and rolls the run back", () => {
  const p = exampleProject({ git: false });
  writeTree(p.proj, { "ru.md": "сожми контекст, ещё 40%\n" });
  const s = cg(p, ["snapshot", "ru.md"]);
  strictEqual(s.code, 0, s.stderr);
  const rd = outLines(s).find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  writeFileSync(`${p.proj}/ru.md`, "сожми 40%\n");
  tg(p, ["checkpoint", "--run-dir", rd, "ru.md"]);
  let r = cg(p, ["verify", "ru.md"]);
  strictEqual(r.code, 0, r.stderr);
  r = cg(p, ["verify", "--tokens=ext", "ru.md"]);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r), [
    "FILE: ru.md",
    "MISSING: 2",
    "  - cyr:ещё",
    "  - cyr:контекст",
    "GATE: FAIL",
    "ACTION: kept",
    "FILES_FAILED: 1",
    `ROLLBACK: whole run (gate failed) ${rd}`,
    "RESTORED: ru.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    `RUN: FAILED - every file of ${rd} is back at its pre-edit bytes`,
  ]);
  strictEqual(read(`${p.proj}/ru.md`), "сожми контекст, ещё 40%\n");
});

Deno.test("project root P: the git toplevel (as context-scan and text-guard); CLAUDE_PROJECT_DIR normalised lexically", () => {
  const p = exampleProject();
  const sub = `${p.proj}/.claude/rules`;
  // No CLAUDE_PROJECT_DIR: inside a git work tree P is its top level (the original took the cwd).
  const fromSub = cg(p, ["snapshot", "--allow-dirty", "style.md"], {
    CLAUDE_PROJECT_DIR: undefined,
  }, sub);
  strictEqual(fromSub.code, 0, fromSub.stderr);
  ok(outLines(fromSub).includes(`ROOT: ${p.proj}`), fromSub.stdout);
  ok(outLines(fromSub).includes("  .claude/rules/style.md"), fromSub.stdout);
  // Outside a git tree it is the logical cwd.
  const loose = exampleProject({ git: false });
  const looseSub = `${loose.proj}/.claude/rules`;
  const fromLoose = cg(loose, ["snapshot", "--allow-dirty", "style.md"], {
    CLAUDE_PROJECT_DIR: undefined,
  }, looseSub);
  strictEqual(fromLoose.code, 0, fromLoose.stderr);
  ok(outLines(fromLoose).includes(`ROOT: ${looseSub}`), fromLoose.stdout);
  // A relative value with a trailing `/` and `..` resolves against the logical cwd.
  const rel = cg(p, ["snapshot", "--allow-dirty", "proj/CLAUDE.md"], {
    CLAUDE_PROJECT_DIR: "./proj/../proj/",
  }, p.home);
  strictEqual(rel.code, 0, rel.stderr);
  ok(outLines(rel).includes(`ROOT: ${p.proj}`), rel.stdout);
  ok(outLines(rel).includes("  CLAUDE.md"), rel.stdout);
});
