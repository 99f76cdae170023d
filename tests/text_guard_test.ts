/**
 * text-guard CLI acceptance tests (`references/context-guard.md#text-guard`): exit codes, exact lines, files on
 * disk, bytes and modes.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { git, makeTempDir, type RunResult, runTool, shownProgram } from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
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

const HELP = `text-guard - preservation guard for in-place text optimization.

The optimizer rewrites files IN PLACE. This tool puts both sides of the
quality gate on DISK so the gate survives a context compaction, and it undoes
a rewrite that loses a critical fact.

usage: ${shownProgram("text-guard")} <command> [options] [--] [<file>...]
  (--opt V or --opt=V; -- ends the options; --help, --version)

  snapshot [--allow-dirty] [--quiet] [--run-dir D] <file>...   copy originals, print RUN_DIR
  verify   [--no-restore] [--tokens=base|ext] --run-dir D <file>...   token gate; restore unless disabled
  restore  [--force] --run-dir D <file>...           put the snapshot back
  checkpoint --run-dir D <file>...                  record owned draft hashes
  status   --run-dir D                               list what is snapshotted

Every command takes --json (one JSON document on stdout instead of the result lines).

Exit: 0 ok | 1 gate failed (restored unless --no-restore) | 2 usage/state error | 3 precondition
(dirty tree, or no git recovery path) - nothing was written.
`;

function tg(args: string[], cwd: string, env: Record<string, string | undefined> = {}): RunResult {
  return runTool("text-guard", args, { cwd, env });
}

/** A git project (CLAUDE.md and style.md both committed) and a run dir outside it. */
function project() {
  const p = exampleProject();
  git(p.proj, "add", ".claude/rules/style.md");
  git(p.proj, "commit", "-qm", "style");
  return { ...p, rd: `${p.base}/run` };
}

function assertDies(r: RunResult, code: number, ...stderr: string[]) {
  strictEqual(r.code, code, r.stderr);
  deepStrictEqual(errLines(r), stderr);
}

Deno.test("text-guard: help, no arguments, unknown command", () => {
  const cwd = makeTempDir();
  const none = tg([], cwd);
  strictEqual(none.code, 2);
  strictEqual(none.stdout, "", "usage is no answer: it goes to stderr");
  strictEqual(none.stderr, `${HELP}❌ FAILED EXIT:2\n`);
  for (const h of ["help", "-h", "--help"]) {
    const r = tg([h], cwd);
    strictEqual(r.code, 0);
    strictEqual(r.stdout, HELP);
    deepStrictEqual(errLines(r), []);
  }
  const bad = tg(["frobnicate"], cwd);
  assertDies(bad, 2, "❌ unknown command: frobnicate");
  strictEqual(bad.stdout, "");
});

Deno.test("text-guard: argument errors exit 2 with their exact message", () => {
  const cwd = makeTempDir();
  const cases: [string[], string][] = [
    [["snapshot", "--run-dir"], "❌ --run-dir needs a value"],
    [["snapshot", "--run-dir", ""], "❌ --run-dir needs a value"],
    [["snapshot", "--bogus", "x"], "❌ unknown option: --bogus"],
    [["snapshot", "-"], "❌ unknown option: -"],
    [["snapshot", "--"], "❌ snapshot needs at least one file"], // `--` ends options
    [["snapshot", "--tokens=ext", "x"], "❌ --tokens does not apply to snapshot"],
    [["snapshot"], "❌ snapshot needs at least one file"],
    [["snapshot", "--allow-dirty"], "❌ snapshot needs at least one file"],
    [["checkpoint", "a"], "❌ checkpoint needs --run-dir and files"],
    [["checkpoint", "--run-dir", "d"], "❌ checkpoint needs --run-dir and files"],
    [["verify", "a"], "❌ verify needs --run-dir"],
    [["verify", "--run-dir", "d"], "❌ verify needs at least one file"],
    [
      ["verify", "--tokens=full", "--run-dir", "d", "a"],
      "❌ unknown token alphabet: full (want base or ext)",
    ],
    [["verify", "--no-restore", "--run-dir", "d", "a"], "❌ no snapshot dir: d/orig"],
    [["restore", "a"], "❌ restore needs --run-dir"],
    [["restore", "--run-dir", "d"], "❌ restore needs at least one file"],
    [["status"], "❌ status needs --run-dir"],
    [["status", "--run-dir"], "❌ --run-dir needs a value"],
    [["status", "--run-dir", "d", "x"], "❌ unexpected argument: x"],
    [["status", "--all"], "❌ unknown option: --all"],
    [["status", "--run-dir", "d"], "❌ no snapshot dir: d/orig"],
  ];
  for (const [args, message] of cases) {
    const r = tg(args, cwd);
    assertDies(r, 2, message);
    strictEqual(r.stdout, "", args.join(" "));
  }
});

Deno.test("text-guard: a value option takes the next argument verbatim", () => {
  const p = project();
  const r = tg(["snapshot", "--run-dir", "--weird", "CLAUDE.md"], p.proj, p.env);
  strictEqual(r.code, 0, r.stderr);
  ok(outLines(r).includes("RUN_DIR: --weird"));
  ok(existsSync(`${p.proj}/--weird/orig/CLAUDE.md`));
});

Deno.test("text-guard: root order is physical CLAUDE_PROJECT_DIR, git toplevel, physical cwd", () => {
  const p = project();
  // CLAUDE_PROJECT_DIR through a link: ROOT is the physical path.
  symlinkSync(p.proj, `${p.base}/link`);
  let r = tg(["snapshot", "--run-dir", `${p.base}/r1`, `${p.proj}/CLAUDE.md`], p.base, {
    CLAUDE_PROJECT_DIR: `${p.base}/link`,
  });
  strictEqual(r.code, 0, r.stderr);
  strictEqual(outLines(r)[0], `ROOT: ${p.proj}`);
  // No CLAUDE_PROJECT_DIR: the git toplevel of a subdirectory cwd.
  r = tg(["snapshot", "--run-dir", `${p.base}/r2`, "style.md"], `${p.proj}/.claude/rules`);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).slice(0, 3), [
    `ROOT: ${p.proj}`,
    "SNAPSHOT: 1 files",
    "  .claude/rules/style.md",
  ]);
  // Outside git: the physical cwd.
  const plain = makeTempDir();
  writeTree(plain, { "a.md": "x 1\n" });
  symlinkSync(plain, `${p.base}/plainlink`);
  r = tg(["snapshot", "--allow-dirty", "--run-dir", `${p.base}/r3`, "a.md"], `${p.base}/plainlink`);
  strictEqual(r.code, 0, r.stderr);
  strictEqual(outLines(r)[0], `ROOT: ${plain}`);
  ok(!existsSync(`${plain}/.gitignore`), "a non-git root gets no .gitignore");
  // Invalid CLAUDE_PROJECT_DIR.
  r = tg(["snapshot", "CLAUDE.md"], p.proj, { CLAUDE_PROJECT_DIR: `${p.base}/nope` });
  assertDies(r, 2, `❌ invalid CLAUDE_PROJECT_DIR: ${p.base}/nope`);
});

Deno.test("text-guard snapshot: lines, owner-only modes, copies, .gitignore created once", () => {
  const p = project();
  chmodSync(`${p.proj}/CLAUDE.md`, 0o755);
  git(p.proj, "add", "CLAUDE.md");
  git(p.proj, "commit", "-qm", "mode");
  const r = tg(
    ["snapshot", "CLAUDE.md", ".claude/rules/style.md", "CLAUDE.md"],
    p.proj,
    { CLAUDE_PROJECT_DIR: undefined },
  );
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(errLines(r), []);
  const out = outLines(r);
  const runDir = out[5].slice("RUN_DIR: ".length);
  ok(/\/\.claude\/reports\/\d{8}-\d{6}_text-optimize$/.test(runDir), runDir);
  deepStrictEqual(out, [
    `ROOT: ${p.proj}`,
    "SNAPSHOT: 3 files",
    "  CLAUDE.md",
    "  .claude/rules/style.md",
    "  CLAUDE.md",
    `RUN_DIR: ${runDir}`,
  ]);
  strictEqual(read(`${runDir}/orig/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${runDir}/orig/.claude/rules/style.md`), STYLE_MD);
  strictEqual(
    modeOf(`${runDir}/orig/CLAUDE.md`),
    0o600,
    "an executable source still gives a 0600 copy",
  );
  strictEqual(modeOf(`${runDir}/orig/.claude/rules/style.md`), 0o600);
  for (
    const d of [
      `${p.proj}/.claude/reports`,
      runDir,
      `${runDir}/orig`,
      `${runDir}/orig/.claude/rules`,
    ]
  ) {
    strictEqual(modeOf(d), 0o700, d);
  }
  strictEqual(read(`${p.proj}/.gitignore`), ".claude/reports/\n");
  // A second snapshot does not append the line again.
  const again = tg(["snapshot", "--run-dir", `${p.base}/r2`, "CLAUDE.md"], p.proj, p.env);
  strictEqual(again.code, 0, again.stderr);
  strictEqual(read(`${p.proj}/.gitignore`), ".claude/reports/\n");
});

Deno.test("text-guard snapshot: .gitignore appended newline-safe, link refused", () => {
  const p = project();
  writeFileSync(`${p.proj}/.gitignore`, "node_modules");
  git(p.proj, "add", ".gitignore");
  git(p.proj, "commit", "-qm", "ignore");
  let r = tg(
    ["snapshot", "--allow-dirty", "--run-dir", `${p.base}/r1`, "CLAUDE.md"],
    p.proj,
    p.env,
  );
  strictEqual(r.code, 0, r.stderr);
  strictEqual(read(`${p.proj}/.gitignore`), "node_modules\n.claude/reports/\n");
  // Link refused, nothing written.
  unlinkSync(`${p.proj}/.gitignore`);
  writeFileSync(`${p.base}/real-ignore`, "x\n");
  symlinkSync(`${p.base}/real-ignore`, `${p.proj}/.gitignore`);
  r = tg(["snapshot", "--allow-dirty", "--run-dir", `${p.base}/r2`, "CLAUDE.md"], p.proj, p.env);
  assertDies(r, 2, `❌ refusing to update symbolic-link ignore file: ${p.proj}/.gitignore`);
  strictEqual(read(`${p.base}/real-ignore`), "x\n");
  ok(!existsSync(`${p.base}/r2`));
});

Deno.test("text-guard gate: dirty tracked, untracked and non-git exit 3 with nothing written", () => {
  const p = project();
  writeFileSync(`${p.proj}/CLAUDE.md`, CLAUDE_MD + "more\n");
  writeFileSync(`${p.proj}/new.md`, "new 1\n");
  const before = treeState(p.proj);
  let r = tg(["snapshot", "CLAUDE.md", "new.md", ".claude/rules/style.md"], p.proj, p.env);
  assertDies(
    r,
    3,
    "❌ uncommitted changes in the optimize targets - refusing to rewrite in place:",
    " M CLAUDE.md",
    "?? new.md",
    "   Commit or stash them, or re-run with --allow-dirty.",
  );
  strictEqual(r.stdout, "");
  deepStrictEqual(treeState(p.proj), before);
  // Untracked alone.
  r = tg(["snapshot", "new.md"], p.proj, p.env);
  assertDies(
    r,
    3,
    "❌ uncommitted changes in the optimize targets - refusing to rewrite in place:",
    "?? new.md",
    "   Commit or stash them, or re-run with --allow-dirty.",
  );
  deepStrictEqual(treeState(p.proj), before);
  // --allow-dirty passes.
  r = tg(
    ["snapshot", "--allow-dirty", "--run-dir", `${p.base}/ok`, "CLAUDE.md", "new.md"],
    p.proj,
    p.env,
  );
  strictEqual(r.code, 0, r.stderr);
  strictEqual(read(`${p.base}/ok/orig/CLAUDE.md`), CLAUDE_MD + "more\n");
  // Non-git root.
  const plain = makeTempDir();
  writeTree(plain, { "a.md": "a 1\n" });
  r = tg(["snapshot", "a.md"], plain);
  assertDies(
    r,
    3,
    `❌ ${plain} is not a git repository - no recoverable pre-state.`,
    "   Commit the targets under git, or re-run with --allow-dirty to accept the risk.",
  );
  deepStrictEqual(treeState(plain), ["a.md " + fileHash(`${plain}/a.md`) + " 644"]);
});

Deno.test("text-guard gate: without git on PATH the root is no repository", () => {
  const p = project();
  const noGit = pathWithoutGit();
  const r = tg(["snapshot", "CLAUDE.md"], p.proj, { ...p.env, PATH: noGit });
  assertDies(
    r,
    3,
    `❌ ${p.proj} is not a git repository - no recoverable pre-state.`,
    "   Commit the targets under git, or re-run with --allow-dirty to accept the risk.",
  );
  const ok2 = tg(["snapshot", "--allow-dirty", "--run-dir", `${p.base}/r`, "CLAUDE.md"], p.proj, {
    ...p.env,
    PATH: noGit,
  });
  strictEqual(ok2.code, 0, ok2.stderr);
  ok(!existsSync(`${p.proj}/.gitignore`), "no git: no .gitignore change");
});

Deno.test("text-guard snapshot: symlinked target, linked run-dir ancestor, existing run dir, outside root", () => {
  const p = project();
  symlinkSync(`${p.proj}/CLAUDE.md`, `${p.proj}/link.md`);
  let r = tg(["snapshot", "--run-dir", `${p.base}/r`, "link.md"], p.proj, p.env);
  assertDies(
    r,
    2,
    `❌ symbolic-link target: link.md - name the intended real file explicitly: ${p.proj}/CLAUDE.md`,
  );
  mkdirSync(`${p.base}/real`);
  symlinkSync(`${p.base}/real`, `${p.base}/lnk`);
  r = tg(["snapshot", "--run-dir", `${p.base}/lnk/sub/run`, "CLAUDE.md"], p.proj, p.env);
  assertDies(r, 2, `❌ symbolic-link snapshot path: ${p.base}/lnk`);
  deepStrictEqual(treeState(`${p.base}/real`), []);
  mkdirSync(`${p.base}/exists`);
  r = tg(["snapshot", "--run-dir", `${p.base}/exists`, "CLAUDE.md"], p.proj, p.env);
  assertDies(r, 2, `❌ snapshot directory already exists: ${p.base}/exists`);
  writeFileSync(`${p.base}/outside.md`, "x\n");
  r = tg(["snapshot", "--run-dir", `${p.base}/r`, `${p.base}/outside.md`], p.proj, p.env);
  assertDies(r, 2, `❌ ${p.base}/outside.md is outside the project root ${p.proj}`);
  r = tg(["snapshot", "--run-dir", `${p.base}/r`, "nodir/x.md"], p.proj, p.env);
  assertDies(r, 2, "❌ not a file: nodir/x.md");
  r = tg(["snapshot", "--run-dir", `${p.base}/r`, ".claude"], p.proj, p.env);
  assertDies(r, 2, "❌ not a file: .claude");
  ok(!existsSync(`${p.base}/r`));
  ok(!existsSync(`${p.proj}/.gitignore`));
});

Deno.test("text-guard snapshot: default run dirs of one second get -2, -3", () => {
  const p = project();
  const reports = `${p.proj}/.claude/reports`;
  // Occupy the base and -2 names of the next several seconds, so the run must take -3.
  const start = Date.now();
  for (let s = 0; s < 8; s++) {
    const stamp = stampOf(new Date(start + s * 1000));
    mkdirSync(`${reports}/${stamp}_text-optimize`, { recursive: true });
    mkdirSync(`${reports}/${stamp}_text-optimize-2`, { recursive: true });
  }
  const r = tg(["snapshot", "CLAUDE.md"], p.proj, p.env);
  strictEqual(r.code, 0, r.stderr);
  const runDir = outLines(r).at(-1)!.slice("RUN_DIR: ".length);
  ok(/_text-optimize-3$/.test(runDir), runDir);
  strictEqual(read(`${runDir}/orig/CLAUDE.md`), CLAUDE_MD);
});

function snapshotRun(p: ReturnType<typeof project>, ...files: string[]) {
  const r = tg(["snapshot", "--run-dir", p.rd, ...files], p.proj, p.env);
  strictEqual(r.code, 0, r.stderr);
}

Deno.test("text-guard checkpoint: hash or MISSING records, all files checked first", () => {
  const p = project();
  snapshotRun(p, "CLAUDE.md", ".claude/rules/style.md");
  writeFileSync(`${p.proj}/CLAUDE.md`, "draft 30 3 20.11\n");
  unlinkSync(`${p.proj}/.claude/rules/style.md`);
  let r = tg(
    ["checkpoint", "--run-dir", p.rd, "CLAUDE.md", ".claude/rules/style.md"],
    p.proj,
    p.env,
  );
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), ["CHECKPOINT: CLAUDE.md", "CHECKPOINT: .claude/rules/style.md"]);
  strictEqual(read(`${p.rd}/draft/CLAUDE.md.sha256`), fileHash(`${p.proj}/CLAUDE.md`) + "\n");
  strictEqual(read(`${p.rd}/draft/.claude/rules/style.md.sha256`), "MISSING\n");
  strictEqual(modeOf(`${p.rd}/draft/CLAUDE.md.sha256`), 0o600);
  strictEqual(modeOf(`${p.rd}/draft/.claude/rules`), 0o700);
  // A bad second file: exit 2, no record written for the first.
  rmSync(`${p.rd}/draft`, { recursive: true });
  writeFileSync(`${p.proj}/other.md`, "x\n");
  r = tg(["checkpoint", "--run-dir", p.rd, "CLAUDE.md", "other.md"], p.proj, p.env);
  assertDies(r, 2, "❌ no snapshot for other.md");
  strictEqual(r.stdout, "");
  ok(!existsSync(`${p.rd}/draft`));
  mkdirSync(`${p.proj}/.claude/rules/style.md`);
  r = tg(["checkpoint", "--run-dir", p.rd, "CLAUDE.md", ".claude/rules/style.md"], p.proj, p.env);
  assertDies(r, 2, "❌ not a regular draft: .claude/rules/style.md");
  ok(!existsSync(`${p.rd}/draft`));
});

Deno.test("text-guard verify: PASS, FAIL with sorted misses, restored with a checkpoint", () => {
  const p = project();
  snapshotRun(p, "CLAUDE.md", ".claude/rules/style.md");
  // Pass: rewritten, every token kept.
  writeFileSync(`${p.proj}/CLAUDE.md`, CLAUDE_MD.replace("# Project rules\n\n", ""));
  let r = tg(["verify", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILES_FAILED: 0",
  ]);
  // Fail, checkpointed: restored.
  const draft = "Use Node and run build before every release.\nYou MUST NOT push; NEVER skip.\n";
  writeFileSync(`${p.proj}/CLAUDE.md`, draft);
  tg(["checkpoint", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  r = tg(["verify", "--run-dir", p.rd, "CLAUDE.md", ".claude/rules/style.md"], p.proj, p.env);
  strictEqual(r.code, 1);
  deepStrictEqual(errLines(r), []);
  deepStrictEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 5",
    "  - neg:!=prod",
    "  - num:20.11",
    "  - num:3",
    "  - num:30",
    "  - path:scripts/build.sh",
    "GATE: FAIL",
    "ACTION: restored",
    "FILE: .claude/rules/style.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILES_FAILED: 1",
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("text-guard verify: restore refused without ownership, --no-restore keeps", () => {
  const p = project();
  snapshotRun(p, "CLAUDE.md");
  const draft = "no numbers here\n";
  writeFileSync(`${p.proj}/CLAUDE.md`, draft);
  let r = tg(["verify", "--no-restore", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r).slice(-3), ["GATE: FAIL", "ACTION: kept", "FILES_FAILED: 1"]);
  deepStrictEqual(errLines(r), []);
  strictEqual(read(`${p.proj}/CLAUDE.md`), draft);
  r = tg(["verify", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r).slice(-3), [
    "GATE: FAIL",
    "ACTION: kept (restore refused)",
    "FILES_FAILED: 1",
  ]);
  deepStrictEqual(errLines(r), [
    ...refusedLines("text-guard", p.rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`, p.proj),
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), draft);
  // A concurrent edit after the checkpoint is not owned either.
  tg(["checkpoint", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  writeFileSync(`${p.proj}/CLAUDE.md`, draft + "someone else\n");
  r = tg(["verify", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  strictEqual(r.code, 1);
  deepStrictEqual(errLines(r), [
    ...refusedLines("text-guard", p.rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`, p.proj),
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), draft + "someone else\n");
});

Deno.test("text-guard verify: pre-flight stops before any report or restore", () => {
  const p = project();
  snapshotRun(p, "CLAUDE.md", ".claude/rules/style.md");
  writeFileSync(`${p.proj}/CLAUDE.md`, "lost\n");
  tg(["checkpoint", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  unlinkSync(`${p.proj}/.claude/rules/style.md`);
  let r = tg(["verify", "--run-dir", p.rd, "CLAUDE.md", ".claude/rules/style.md"], p.proj, p.env);
  assertDies(r, 2, "❌ target vanished: .claude/rules/style.md");
  strictEqual(r.stdout, "");
  strictEqual(read(`${p.proj}/CLAUDE.md`), "lost\n");
  writeFileSync(`${p.proj}/other.md`, "x\n");
  r = tg(["verify", "--run-dir", p.rd, "CLAUDE.md", "other.md"], p.proj, p.env);
  assertDies(r, 2, `❌ no snapshot for other.md in ${p.rd} - run 'snapshot' before editing`);
  strictEqual(read(`${p.proj}/CLAUDE.md`), "lost\n");
});

Deno.test("text-guard verify: NUL-bearing files are scanned, CRLF lines keep tokens", () => {
  const p = project();
  writeTree(p.proj, {
    "bin.md": new Uint8Array([
      0x76,
      0x31,
      0x2e,
      0x32,
      0x00,
      0x0a,
      0x4e,
      0x45,
      0x56,
      0x45,
      0x52,
      0x0d,
      0x0a,
    ]),
  });
  const r0 = tg(["snapshot", "--allow-dirty", "--run-dir", p.rd, "bin.md"], p.proj, p.env);
  strictEqual(r0.code, 0, r0.stderr);
  writeFileSync(`${p.proj}/bin.md`, new Uint8Array([0x00, 0x0a]));
  const r = tg(["verify", "--no-restore", "--run-dir", p.rd, "bin.md"], p.proj, p.env);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r), [
    "FILE: bin.md",
    "MISSING: 2",
    "  - kw:NEVER",
    "  - num:1.2",
    "GATE: FAIL",
    "ACTION: kept",
    "FILES_FAILED: 1",
  ]);
});

Deno.test("text-guard verify --tokens=ext adds the extended classes", () => {
  const p = project();
  writeTree(p.proj, { "ru.md": "сожми контекст на 40%, ещё\nsee x.mdx\n" });
  tg(["snapshot", "--allow-dirty", "--run-dir", p.rd, "ru.md"], p.proj, p.env);
  writeFileSync(`${p.proj}/ru.md`, "40%\n");
  let r = tg(["verify", "--no-restore", "--run-dir", p.rd, "ru.md"], p.proj, p.env);
  strictEqual(r.code, 0, r.stdout);
  r = tg(["verify", "--no-restore", "--tokens=ext", "--run-dir", p.rd, "ru.md"], p.proj, p.env);
  strictEqual(r.code, 1);
  deepStrictEqual(outLines(r).slice(0, 8), [
    "FILE: ru.md",
    "MISSING: 5",
    "  - cyr:ещё",
    "  - cyr:контекст",
    "  - cyr:на",
    "  - cyr:сожми",
    "  - file:x.mdx",
    "GATE: FAIL",
  ]);
});

Deno.test("text-guard restore: all or nothing, every refusal named, MISSING record restores a deleted file", () => {
  const p = project();
  writeTree(p.proj, { "c.md": "c 1\n" });
  git(p.proj, "add", "c.md");
  git(p.proj, "commit", "-qm", "c");
  snapshotRun(p, "CLAUDE.md", ".claude/rules/style.md", "c.md");
  writeFileSync(`${p.proj}/CLAUDE.md`, "one\n");
  writeFileSync(`${p.proj}/.claude/rules/style.md`, "two\n");
  let before = treeState(p.proj);
  let r = tg(
    ["restore", "--run-dir", p.rd, "c.md", "CLAUDE.md", ".claude/rules/style.md"],
    p.proj,
    p.env,
  );
  assertDies(
    r,
    1,
    ...refusedLines("text-guard", p.rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`, p.proj),
    ...refusedLines(
      "text-guard",
      p.rd,
      ".claude/rules/style.md",
      `${p.proj}/.claude/rules/style.md`,
      p.proj,
    ),
  );
  strictEqual(r.stdout, "");
  deepStrictEqual(treeState(p.proj), before);
  // Ownership for both; style.md deleted after its checkpoint was MISSING.
  chmodSync(`${p.proj}/CLAUDE.md`, 0o640);
  tg(["checkpoint", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  unlinkSync(`${p.proj}/.claude/rules/style.md`);
  tg(["checkpoint", "--run-dir", p.rd, ".claude/rules/style.md"], p.proj, p.env);
  before = treeState(p.proj);
  r = tg(
    ["restore", "--run-dir", p.rd, "c.md", "CLAUDE.md", ".claude/rules/style.md"],
    p.proj,
    p.env,
  );
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    "RESTORED: c.md",
    "RESTORED: CLAUDE.md",
    "RESTORED: .claude/rules/style.md",
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(modeOf(`${p.proj}/CLAUDE.md`), 0o640, "a replaced file keeps its mode");
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
  strictEqual(
    modeOf(`${p.proj}/.claude/rules/style.md`) & 0o077,
    0,
    "a re-created file is owner-only",
  );
  strictEqual(read(`${p.proj}/c.md`), "c 1\n");
});

Deno.test("text-guard restore: a link planted at the target after the snapshot is refused", () => {
  const p = project();
  snapshotRun(p, "CLAUDE.md");
  writeFileSync(`${p.base}/victim`, "victim\n");
  unlinkSync(`${p.proj}/CLAUDE.md`);
  symlinkSync(`${p.base}/victim`, `${p.proj}/CLAUDE.md`);
  const r = tg(["restore", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  assertDies(
    r,
    2,
    `❌ symbolic-link target: CLAUDE.md - name the intended real file explicitly: ${p.base}/victim`,
  );
  strictEqual(read(`${p.base}/victim`), "victim\n");
  // A directory at the target is refused, not written into.
  unlinkSync(`${p.proj}/CLAUDE.md`);
  mkdirSync(`${p.proj}/CLAUDE.md`);
  const r2 = tg(["restore", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  assertDies(
    r2,
    1,
    ...refusedLines("text-guard", p.rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`, p.proj),
  );
  deepStrictEqual(treeState(`${p.proj}/CLAUDE.md`), []);
});

Deno.test("text-guard restore: a hard-linked target is replaced, not written through", () => {
  const p = project();
  snapshotRun(p, "CLAUDE.md");
  writeFileSync(`${p.proj}/CLAUDE.md`, "draft\n");
  tg(["checkpoint", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  Deno.linkSync(`${p.proj}/CLAUDE.md`, `${p.base}/hardlink`);
  const r = tg(["restore", "--run-dir", p.rd, "CLAUDE.md"], p.proj, p.env);
  strictEqual(r.code, 0, r.stderr);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${p.base}/hardlink`), "draft\n");
});

Deno.test("text-guard status lists the snapshot's regular files, sorted", () => {
  const p = project();
  writeTree(p.proj, { "b.md": "b\n", "a/z.md": "z\n", "B.md": "B\n" });
  tg(
    ["snapshot", "--allow-dirty", "--run-dir", p.rd, "b.md", "a/z.md", "B.md", "CLAUDE.md"],
    p.proj,
    p.env,
  );
  const r = tg(["status", "--run-dir", p.rd], makeTempDir());
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    `RUN_DIR: ${p.rd}`,
    "SNAPSHOT: 4 files",
    "  B.md",
    "  CLAUDE.md",
    "  a/z.md",
    "  b.md",
  ]);
  ok(readFileSync(`${p.rd}/orig/b.md`).length === 2);
});
