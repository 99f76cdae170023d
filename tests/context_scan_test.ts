/**
 * context-scan CLI acceptance tests (`references/context-scan.md`): every test is named after the rule it checks and
 * runs the tool as a child process (sources, or the bundle with CTXKIT_TEST_TARGET=bundle).
 */
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { Buffer } from "node:buffer";
import { spawnSync } from "node:child_process";
import { git, makeTempDir, shownProgram, skipWithoutDenoFlags, writeTree } from "./_helpers.ts";
import {
  buildExample,
  link,
  scan,
  type ScanRun,
  slugOf,
  writeRawName,
} from "./context_scan_fixtures.ts";
import type { ScanDocument, ScanRow } from "../lib/scan/schema.ts";

const HELP = [
  "context-scan - discover potential context inventory and byte-size proxies.",
  "",
  `  ${
    shownProgram("context-scan")
  } [--root PATH] [--global] [--tier T] [--loaded] [--observe] [--format F] [--budget N] [--json] [--help] [--version]`,
  "",
  "  --root PATH   project root to scan (default: CLAUDE_PROJECT_DIR, else git toplevel, else cwd)",
  "  --global      also scan the global root (CLAUDE_CONFIG_DIR when set, else $HOME/.claude)",
  "  --tier T      always-on | per-spawn | per-invocation | all   (default: all)",
  "  --loaded      add a MODEL of what Claude Code loads, from rules observed on it (as of Claude",
  "                Code 2.1.332): loaded_bytes, loaded_tokens, limits; ~/.claude only with --global",
  "  --observe     run the real claude once, offline, and report what it sent (observed: measured,",
  "                not modelled); needs --allow-run --allow-net=127.0.0.1 --allow-write=<tmp dir>",
  "  --claude PATH / --observe-timeout S (60) / --observe-hooks (run SessionStart hooks) /",
  "  --observe-tiers (also invoke each skill and command, spawn each agent, read a file per",
  "  rule) / --observe-unsandboxed   options of --observe; --plugin-dir DIR (repeatable) for both",
  "  --format F    json (default; also --json) | table (a report a person can read; alias: report)",
  "  --budget N    exit 1 when tokens exceed N: the observed total with --observe, else the --tier",
  "                tier's total (always-on for all; loaded with --loaded); names the top contributors",
  "  --version     print the version and commit. Options take --opt V or --opt=V; -- ends them",
  "",
  "Tiers are inventory buckets, not observed loading: always-on includes conditional/imported",
  "instructions and memory; per-spawn inventories agent files; per-invocation inventories skills",
  "and lazy references. Totals are potential sizes; --loaded's are modelled; only --observe measures.",
  "",
  "Exit: 0 complete inventory | 1 over --budget | 2 usage/state/discovery/observation error (partial JSON has scan_issues; no project writes).",
].join("\n") + "\n";

const OK = "✅ EXIT:0\n";

/** Assert a usage error: one stderr line + the exit line, empty stdout, exit 2. */
function assertUsageError(r: ScanRun, line: string): void {
  assert.equal(r.stderr, `${line}\n❌ FAILED EXIT:2\n`);
  assert.equal(r.stdout, "");
  assert.equal(r.code, 2);
}

/** A clean run: exit 0, stderr exactly the exit line, a schema-valid document. */
function clean(r: ScanRun): ScanDocument {
  assert.equal(r.stderr, OK, r.stderr);
  assert.equal(r.code, 0);
  assert.ok(r.doc, "stdout is a valid scan document");
  return r.doc;
}

/** Rows as `path-relative-to-base tier kind bytes loading` strings. */
function brief(rows: ScanRow[], base: string): string[] {
  return rows.map((row) => {
    const rel = row.path.startsWith(base + "/") ? row.path.slice(base.length + 1) : row.path;
    return `${rel} ${row.tier} ${row.kind} ${row.bytes} ${row.loading}`;
  });
}

/** Scan `root` with `--root` and a HOME of its own; returns the run. */
function scanRoot(root: string, extra: string[] = [], env: Record<string, string> = {}): ScanRun {
  const home = makeTempDir("ctxkit-scan-home-");
  return scan(["--root", root, ...extra], { env: { HOME: home, ...env } });
}

// command line ------------------------------------------------------------------------------------

Deno.test("--help/-h/help: exact 24 lines on stdout, exit 0; --bogus --help → unknown option, exit 2", () => {
  assert.equal(HELP.split("\n").length - 1, 24);
  for (const flag of ["--help", "-h", "help"]) {
    const r = scan([flag]);
    assert.equal(r.stdout, HELP);
    assert.equal(r.stderr, OK);
    assert.equal(r.code, 0);
  }
  // later args are unchecked; an earlier bad arg wins
  const later = scan(["--help", "--bogus"]);
  assert.equal(later.stdout, HELP);
  assert.equal(later.code, 0);
  assertUsageError(scan(["--bogus", "--help"]), "❌ unknown option: --bogus");
  assertUsageError(scan(["--tier", "x", "-h"]), "❌ unknown tier: x");
  // help needs no HOME
  assert.equal(scan(["help"], { env: { HOME: undefined } }).code, 0);
});

Deno.test("--root missing/empty → --root needs a value, exit 2, empty stdout; --root=/x is --root /x", () => {
  assertUsageError(scan(["--root"]), "❌ --root needs a value");
  assertUsageError(scan(["--root", ""]), "❌ --root needs a value");
  assertUsageError(scan(["--root="]), "❌ --root needs a value");
  assertUsageError(scan(["--global", "--root"]), "❌ --root needs a value");
  assertUsageError(scan(["--root=/x/missing"]), "❌ not a directory: /x/missing");
  assertUsageError(scan(["--verbose"]), "❌ unknown option: --verbose");
  assertUsageError(scan(["../demo"]), "❌ unexpected argument: ../demo");
});

Deno.test("--root /missing → not a directory: /missing, exit 2", () => {
  const dir = makeTempDir("ctxkit-scan-");
  assertUsageError(scan(["--root", `${dir}/missing`]), `❌ not a directory: ${dir}/missing`);
  writeFileSync(`${dir}/file`, "x");
  assertUsageError(scan(["--root", "file"], { cwd: dir }), "❌ not a directory: file");
  // --root takes the next argument whatever it is
  assertUsageError(scan(["--root", "--global"], { cwd: dir }), "❌ not a directory: --global");
});

Deno.test("--tier bogus → unknown tier, trailing --tier → needs a value; --json accepted; repeated flag → last wins", () => {
  assertUsageError(scan(["--tier", "bogus"]), "❌ unknown tier: bogus");
  assertUsageError(scan(["--tier=bogus"]), "❌ unknown tier: bogus");
  assertUsageError(scan(["--tier"]), "❌ --tier needs a value");
  assertUsageError(scan(["--tier", "All"]), "❌ unknown tier: All");
  const a = makeTempDir("ctxkit-scan-a-");
  const b = makeTempDir("ctxkit-scan-b-");
  const r = scanRoot(a, ["--json", "--tier", "per-spawn", "--root", b, "--tier", "all", "--json"]);
  const doc = clean(r);
  assert.equal(doc.tier_filter, "all");
  assert.equal(doc.roots.project, b);
  assert.equal(doc.roots.global, null);
  for (const t of ["always-on", "per-spawn", "per-invocation", "all"]) {
    assert.equal(clean(scanRoot(a, ["--tier", t])).tier_filter, t);
  }
});

Deno.test("HOME and CLAUDE_CONFIG_DIR both unset → HOME is not set, exit 2 (D8)", () => {
  const dir = makeTempDir("ctxkit-scan-");
  assertUsageError(
    scan(["--root", dir], { env: { HOME: undefined, CLAUDE_CONFIG_DIR: undefined } }),
    "❌ HOME is not set",
  );
  assertUsageError(scan(["--root", dir], { env: { HOME: "" } }), "❌ HOME is not set");
  const withConfig = scan(["--root", dir, "--global"], {
    env: { HOME: undefined, CLAUDE_CONFIG_DIR: `${dir}/cfg` },
  });
  assert.equal(clean(withConfig).roots.global, `${dir}/cfg`);
});

// roots -------------------------------------------------------------------------------------------

Deno.test("Root order: --root beats CLAUDE_PROJECT_DIR; symlinked CLAUDE_PROJECT_DIR stays logical; unusable one → git toplevel (physical); no git → logical $PWD", () => {
  const t = makeTempDir("ctxkit-scan-roots-");
  mkdirSync(`${t}/real/repo/sub`, { recursive: true });
  mkdirSync(`${t}/other`);
  symlinkSync(`${t}/real`, `${t}/lnk`);
  git(`${t}/real/repo`, "init", "-q");
  const home = makeTempDir("ctxkit-scan-home-");

  const byArg = scan(["--root", `${t}/other`], {
    cwd: `${t}/real/repo/sub`,
    env: { HOME: home, CLAUDE_PROJECT_DIR: `${t}/real` },
  });
  assert.equal(clean(byArg).roots.project, `${t}/other`);

  const byEnv = scan([], {
    cwd: `${t}/other`,
    env: { HOME: home, CLAUDE_PROJECT_DIR: `${t}/lnk/repo/` },
  });
  assert.equal(clean(byEnv).roots.project, `${t}/lnk/repo`);

  // unusable CLAUDE_PROJECT_DIR (missing) → git toplevel, physical even when $PWD is logical
  for (const projectDir of [`${t}/missing`, ""]) {
    const byGit = scan([], {
      cwd: `${t}/real/repo/sub`,
      env: { HOME: home, PWD: `${t}/lnk/repo/sub`, CLAUDE_PROJECT_DIR: projectDir },
    });
    assert.equal(clean(byGit).roots.project, `${t}/real/repo`);
  }

  // no git → the logical $PWD
  mkdirSync(`${t}/real/plain`);
  const byPwd = scan([], { cwd: `${t}/real/plain`, env: { HOME: home, PWD: `${t}/lnk/plain` } });
  assert.equal(clean(byPwd).roots.project, `${t}/lnk/plain`);
  // a $PWD that is not the cwd is ignored → physical cwd
  const stale = scan([], { cwd: `${t}/real/plain`, env: { HOME: home, PWD: `${t}/other` } });
  assert.equal(clean(stale).roots.project, `${t}/real/plain`);
});

Deno.test("--root lnk/repo/.. resolves lexically; trailing / dropped", () => {
  const t = makeTempDir("ctxkit-scan-lex-");
  mkdirSync(`${t}/real/repo`, { recursive: true });
  mkdirSync(`${t}/deep/a/b`, { recursive: true });
  mkdirSync(`${t}/deep/w`, { recursive: true });
  symlinkSync(`${t}/real`, `${t}/lnk`);
  symlinkSync(`${t}/deep/a/b`, `${t}/jump`);
  const home = makeTempDir("ctxkit-scan-home-");
  const run = (root: string) => clean(scan(["--root", root], { cwd: t, env: { HOME: home } }));
  assert.equal(run("lnk/repo/..").roots.project, `${t}/lnk`);
  assert.equal(run("lnk/repo/").roots.project, `${t}/lnk/repo`);
  assert.equal(run(".").roots.project, t);
  assert.equal(run(`${t}//lnk/./repo/`).roots.project, `${t}/lnk/repo`);
  // the OS resolves jump/../../w to deep/w; lexically t/w does not exist → physical path
  assert.equal(run("jump/../../w").roots.project, `${t}/deep/w`);
});

// worked example ----------------------------------------------------------------------------------

Deno.test("worked example byte for byte, plus its --tier per-spawn and --tier always-on totals", () => {
  const ex = buildExample();
  const env = { HOME: ex.home };
  const r = scan(["--root", ".", "--global"], { cwd: ex.demo, env });
  assert.equal(r.stderr, OK);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, ex.expected);

  const spawn = clean(
    scan(["--root", ".", "--global", "--tier", "per-spawn"], { cwd: ex.demo, env }),
  );
  assert.deepEqual(spawn.files.map((f) => f.loading), ["selected-agent", "selected-agent"]);
  assert.equal(spawn.tier_filter, "per-spawn");
  assert.deepEqual(spawn.totals, {
    "always-on": { files: 0, bytes: 0, tokens: 0 },
    "per-spawn": { files: 2, bytes: 141, tokens: 34 },
    "per-invocation": { files: 0, bytes: 0, tokens: 0 },
    grand: { files: 2, bytes: 141, tokens: 34 },
  });

  const always = clean(
    scan(["--root", ".", "--global", "--tier", "always-on"], { cwd: ex.demo, env }),
  );
  assert.equal(always.files.length, 10);
  assert.deepEqual(always.totals["always-on"], { files: 10, bytes: 230, tokens: 53 });
  assert.deepEqual(always.totals.grand, { files: 10, bytes: 230, tokens: 53 });
  assert.deepEqual(always.totals["per-spawn"], { files: 0, bytes: 0, tokens: 0 });

  // dangling /home/u/demo/rules link: rows unchanged, exit 2, the exact issue
  symlinkSync(`${ex.prefix}/nowhere`, `${ex.demo}/rules`);
  const dangling = scan(["--root", ".", "--global"], { cwd: ex.demo, env });
  assert.equal(dangling.code, 2);
  assert.equal(dangling.stderr, "❌ FAILED EXIT:2\n");
  const issue =
    `{"root":"project","path":"${ex.demo}/rules","kind":"discovery-incomplete","exit_status":1,"detail":"Instruction directory link does not resolve to a directory"}`;
  assert.equal(
    dangling.stdout,
    ex.expected.replace('  "scan_issues": [\n  ],', `  "scan_issues": [\n    ${issue}\n  ],`),
  );
});

Deno.test("Empty arrays render as [⏎  ],; stdout ends }⏎; clean tree → exit 0, stderr is exactly ✅ EXIT:0", () => {
  const root = makeTempDir("ctxkit-scan-empty-");
  const home = makeTempDir("ctxkit-scan-home-");
  const r = scan(["--root", root], { env: { HOME: home } });
  assert.equal(r.stderr, "✅ EXIT:0\n");
  assert.equal(r.code, 0);
  assert.equal(
    r.stdout,
    `{
  "roots": {"project": "${root}", "global": null},
  "tier_filter": "all",
  "token_model": "chars/4",
  "measurement": {"scope": "potential-inventory", "token_proxy": "bytes/4", "actual_loading_observed": false},
  "files": [
  ],
  "scan_issues": [
  ],
  "totals": {
    "always-on": {"files": 0, "bytes": 0, "tokens": 0},
    "per-spawn": {"files": 0, "bytes": 0, "tokens": 0},
    "per-invocation": {"files": 0, "bytes": 0, "tokens": 0},
    "grand": {"files": 0, "bytes": 0, "tokens": 0}
  }
}
`,
  );
  assert.ok(r.stdout.endsWith("}\n"));
  // exit line opt-out
  const quiet = scan(["--root", root], { env: { HOME: home, CTXKIT_EXIT_LINE: "0" } });
  assert.equal(quiet.stderr, "");
});

// rule scoping ------------------------------------------------------------------------------------

Deno.test("Rule scoping: every rule-scoping case (CRLF fence, fence + trailing spaces, no closing fence, after fence, indented, Paths:, pathsx:, leading blank, ----)", () => {
  const root = makeTempDir("ctxkit-scan-rules-");
  const cases: Record<string, [string, string]> = {
    "a-basic.md": ['---\npaths: ["src/**"]\n---\nBody.\n', "path-scoped-rule"],
    "b-bare.md": ["---\npaths:\n---\n", "path-scoped-rule"],
    "c-crlf.md": ["---\r\npaths: x\r\n---\r\nBody\r\n", "path-scoped-rule"],
    "d-trailing.md": ["---  \t\nname: x\npaths: y\n--- \n", "path-scoped-rule"],
    "e-unclosed.md": ["---\nname: x\n\nmore\npaths: y\n", "path-scoped-rule"],
    "f-after.md": ["---\nname: x\n---\npaths: y\n", "unscoped-rule"],
    "g-indented.md": ["---\n  paths: y\n---\n", "unscoped-rule"],
    "h-upper.md": ["---\nPaths: y\n---\n", "unscoped-rule"],
    "i-pathsx.md": ["---\npathsx: y\n---\n", "unscoped-rule"],
    "j-blank.md": ["\n---\npaths: y\n---\n", "unscoped-rule"],
    "k-dashes.md": ["----\npaths: y\n----\n", "unscoped-rule"],
    "l-none.md": ["paths: y\n", "unscoped-rule"],
    "m-fence-crlf-close.md": ["---\r\nname: x\r\n---\r\npaths: y\r\n", "unscoped-rule"],
    "n-tab-close.md": ["---\nname: x\n---\t\npaths: y\n", "unscoped-rule"],
  };
  const files: Record<string, string> = {};
  for (const [name, [content]] of Object.entries(cases)) files[`.claude/rules/${name}`] = content;
  writeTree(root, files);
  const doc = clean(scanRoot(root));
  assert.deepEqual(
    doc.files.map((f) => [f.path.slice(root.length + 1), f.loading]),
    Object.entries(cases).map(([name, [, loading]]) => [`.claude/rules/${name}`, loading]),
  );
});

Deno.test("Rules from rules/ and .claude/rules/ (nested) form one byte-sorted list", () => {
  const root = makeTempDir("ctxkit-scan-rules-");
  writeTree(root, {
    "rules/b.md": "b\n",
    "rules/a/z.md": "az\n",
    "rules/a-b.md": "ab\n",
    "rules/notes.txt": "not md\n",
    ".claude/rules/z.md": "z\n",
    ".claude/rules/deep/er/x.md": "x\n",
    ".claude/rules/.hidden.md": "h\n",
  });
  const doc = clean(scanRoot(root));
  assert.deepEqual(doc.files.map((f) => f.path.slice(root.length + 1)), [
    ".claude/rules/.hidden.md",
    ".claude/rules/deep/er/x.md",
    ".claude/rules/z.md",
    "rules/a-b.md",
    "rules/a/z.md",
    "rules/b.md",
  ]);
  assert.ok(doc.files.every((f) => f.loading === "unscoped-rule" && f.tier === "always-on"));
});

Deno.test("Symlinked rules root, nested rule dir, rule file, reference dir and reference file → logical paths; prune names inside linked trees excluded", () => {
  const t = makeTempDir("ctxkit-scan-links-");
  const root = `${t}/proj`;
  writeTree(t, {
    "shared/rules/one.md": "one\n",
    "shared/rules/build/skip.md": "pruned\n",
    "shared/rules/node_modules/skip.md": "pruned\n",
    "shared/nested/two.md": "two\n",
    "shared/nested/dist/skip.md": "pruned\n",
    "shared/file.md": "file\n",
    "shared/refs/r1.md": "r1\n",
    "shared/refs/reports/skip.md": "pruned\n",
    "shared/ref-file.md": "rf\n",
    "proj/rules/local.md": "local\n",
    "proj/skills/s/SKILL.md": "skill\n",
    "proj/skills/s2/SKILL.md": "skill2\n",
    "proj/skills/s2/references/own.md": "own\n",
  });
  link(`${t}/shared/rules`, `${root}/.claude/rules`);
  link(`${t}/shared/nested`, `${root}/rules/nested`);
  link(`${t}/shared/file.md`, `${root}/rules/linked.md`);
  link(`${t}/shared/nested`, `${root}/rules/tmp`); // a link named like a prune name
  link(`${t}/shared/refs`, `${root}/skills/s/references`);
  link(`${t}/shared/ref-file.md`, `${root}/skills/s2/references/linked.md`);
  const doc = clean(scanRoot(root));
  assert.deepEqual(brief(doc.files, root), [
    ".claude/rules/one.md always-on file 4 unscoped-rule",
    "rules/linked.md always-on file 5 unscoped-rule",
    "rules/local.md always-on file 6 unscoped-rule",
    "rules/nested/two.md always-on file 4 unscoped-rule",
    "skills/s/SKILL.md per-invocation file 6 invoked-skill",
    "skills/s/references/r1.md per-invocation file 3 on-demand",
    "skills/s2/SKILL.md per-invocation file 7 invoked-skill",
    "skills/s2/references/linked.md per-invocation file 3 on-demand",
    "skills/s2/references/own.md per-invocation file 4 on-demand",
  ]);
});

Deno.test("Dangling .claude/rules link and references → file link each give the exact issue, full JSON, exit 2", () => {
  const t = makeTempDir("ctxkit-scan-dangle-");
  const root = `${t}/proj`;
  writeTree(t, {
    "proj/CLAUDE.md": "hi\n",
    "proj/skills/s/SKILL.md": "skill\n",
    "target.md": "a file\n",
  });
  link(`${t}/missing`, `${root}/.claude/rules`);
  link(`${t}/target.md`, `${root}/skills/s/references`);
  const r = scanRoot(root);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "❌ FAILED EXIT:2\n");
  assert.ok(r.doc);
  assert.deepEqual(r.doc.scan_issues, [
    {
      root: "project",
      path: `${root}/.claude/rules`,
      kind: "discovery-incomplete",
      exit_status: 1,
      detail: "Instruction directory link does not resolve to a directory",
    },
    {
      root: "project",
      path: `${root}/skills/s/references`,
      kind: "discovery-incomplete",
      exit_status: 1,
      detail: "Instruction directory link does not resolve to a directory",
    },
  ]);
  assert.deepEqual(brief(r.doc.files, root), [
    "CLAUDE.md always-on file 3 startup-instruction",
    "skills/s/SKILL.md per-invocation file 6 invoked-skill",
  ]);
  assert.equal(r.doc.totals.grand.files, 2);
  // an ordinary file named rules is simply nothing
  writeFileSync(`${root}/rules`, "not a dir\n");
  assert.equal(scanRoot(root).doc?.scan_issues.length, 2);
});

Deno.test("Rule-dir loop → one issue on the instruction root, no rows under the loop, other rows intact", () => {
  const root = makeTempDir("ctxkit-scan-loop-");
  writeTree(root, {
    "CLAUDE.md": "hi\n",
    ".claude/rules/a.md": "a\n",
    ".claude/rules/sub/b.md": "bb\n",
  });
  symlinkSync("..", `${root}/.claude/rules/sub/loop`);
  symlinkSync(".", `${root}/.claude/rules/self`);
  const r = scanRoot(root);
  assert.equal(r.code, 2);
  assert.ok(r.doc);
  assert.deepEqual(brief(r.doc.files, root), [
    "CLAUDE.md always-on file 3 startup-instruction",
    ".claude/rules/a.md always-on file 2 unscoped-rule",
    ".claude/rules/sub/b.md always-on file 3 unscoped-rule",
  ]);
  assert.equal(r.doc.scan_issues.length, 1);
  const [issue] = r.doc.scan_issues;
  assert.equal(issue.path, `${root}/.claude/rules`);
  assert.equal(issue.root, "project");
  assert.equal(issue.exit_status, 1);
  const problems = issue.detail.split("\n");
  assert.equal(problems.length, 2);
  assert.ok(problems.some((p) => p.includes(`'${root}/.claude/rules/sub/loop'`)), issue.detail);
  assert.ok(problems.some((p) => p.includes(`'${root}/.claude/rules/self'`)), issue.detail);
  assert.ok(problems.every((p) => p.startsWith("File system loop detected;")));
});

Deno.test("Unrelated linked dir under R; symlinked SKILL.md, agent, hook, memory files → not counted", () => {
  const t = makeTempDir("ctxkit-scan-nolinks-");
  const root = `${t}/proj`;
  writeTree(t, {
    "elsewhere/agents/a.md": "---\ndescription: x\n---\n",
    "elsewhere/SKILL.md": "skill\n",
    "elsewhere/hooks/h.mjs": 'const LONG_TEXT = "abc";\n',
    "file.md": "---\ndescription: y\n---\n",
    "hook.mjs": 'const LONG_TEXT = "abc";\n',
    "proj/agents/real.md": "body\n",
    "proj/.claude/memory/real.md": "mem\n",
    "proj/hooks/keep.txt": "",
    "proj/skills/s/keep.txt": "",
  });
  link(`${t}/elsewhere`, `${root}/linked`);
  link(`${t}/elsewhere/agents`, `${root}/.claude/agents`);
  link(`${t}/file.md`, `${root}/agents/linked.md`);
  link(`${t}/file.md`, `${root}/skills/s/SKILL.md`);
  link(`${t}/hook.mjs`, `${root}/hooks/linked.mjs`);
  link(`${t}/file.md`, `${root}/.claude/memory/linked.md`);
  const doc = clean(scanRoot(root));
  assert.deepEqual(brief(doc.files, root), [
    ".claude/memory/real.md always-on file 4 on-demand",
    "agents/real.md per-spawn file 5 selected-agent",
  ]);
});

const PRUNE = [
  ".git",
  "node_modules",
  "dist",
  "build",
  ".next",
  "vendor",
  ".codex",
  "tmp",
  "web",
  "plugins",
  "projects",
  ".template-baseline",
  "backups",
  "reports",
  "worktrees",
];

Deno.test("Each of the 15 prune names excluded at depth in root and reference walks, not in memory walks", () => {
  const root = makeTempDir("ctxkit-scan-prune-");
  const files: Record<string, string> = { "skills/s/SKILL.md": "skill\n" };
  for (const name of PRUNE) {
    files[`${name}/agents/a.md`] = "agent\n";
    files[`x/y/${name}/agents/a.md`] = "agent\n";
    files[`x/${name}/SKILL.md`] = "skill\n";
    files[`x/${name}/hooks/h.mjs`] = 'const LONG_NAME = "v";\n';
    files[`skills/s/references/${name}/r.md`] = "ref\n";
    files[`skills/s/references/a/${name}/r.md`] = "ref\n";
    files[`.claude/rules/${name}/r.md`] = "rule\n";
    files[`.claude/memory/${name}/m.md`] = "mem\n";
    files[`.claude/memory/a/${name}/m.md`] = "mem\n";
  }
  writeTree(root, files);
  const doc = clean(scanRoot(root));
  const expectedMemory = PRUNE.flatMap((name) => [
    `.claude/memory/${name}/m.md`,
    `.claude/memory/a/${name}/m.md`,
  ]).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  assert.deepEqual(
    doc.files.map((f) => f.path.slice(root.length + 1)),
    [...expectedMemory, "skills/s/SKILL.md"],
  );
  // the walk start itself is never pruned (D6): a root named like a prune name still yields rows
  for (const name of ["build", "tmp", "node_modules"]) {
    const pruneRoot = `${makeTempDir("ctxkit-scan-prune-")}/${name}`;
    writeTree(pruneRoot, { "agents/a.md": "agent\n" });
    assert.equal(clean(scanRoot(pruneRoot)).files.length, 1);
  }
});

Deno.test("Agents at any depth under agents/; excluded under skills/; body row then description row", () => {
  const root = makeTempDir("ctxkit-scan-agents-");
  writeTree(root, {
    "agents/a.md": "---\ndescription: abc\n---\nbody\n",
    "agents/sub/deep/b.md": "no description\n",
    ".claude/agents/c.md": "description: x\n",
    "x/agents/notes.txt": "not md\n",
    "skills/foo/agents/skip.md": "description: skipped\n",
    "agents/skills/skip.md": "description: skipped\n",
    "myagents/skip.md": "description: skipped\n",
    "agents.md": "description: skipped\n",
  });
  const doc = clean(scanRoot(root));
  assert.deepEqual(brief(doc.files, root), [
    ".claude/agents/c.md per-spawn file 15 selected-agent",
    ".claude/agents/c.md always-on field:description 2 runtime-dependent",
    "agents/a.md per-spawn file 30 selected-agent",
    "agents/a.md always-on field:description 4 runtime-dependent",
    "agents/sub/deep/b.md per-spawn file 15 selected-agent",
  ]);
  assert.ok(doc.files.every((f) => f.estimated === false));
});

Deno.test("Description sizes: all agent-description rows + no frontmatter, empty value (1), unterminated line, second description ignored", () => {
  const root = makeTempDir("ctxkit-scan-desc-");
  const cases: [string, number][] = [
    ['---\ndescription: "Small helper"\n---\n', 15],
    ["---\ndescription: |\n  Reviews diffs.\n  Flags risk.\n\nmodel: opus\n---\n", 32],
    ["---\r\ndescription: ab\r\n---\r\n", 4],
    ["---\ndescription: >-\n\tTabbed\n   spaced  \n\n\nname: x\n", 22],
    ["---\ndescription: |\n  one\n---\n  two\n", 6],
    ["---\nname: a\n---\ndescription: after\n", 0],
    ["# Title\nprose\ndescription: plain\n", 6],
    ["description: first line\n", 11],
    ["---\ndescription:\n---\n", 1],
    ["---\ndescription:   \n---\n", 1],
    ["---\ndescription: tail", 5],
    ["---\ndescription: one\ndescription: second one\n---\n", 4],
    ["---\ndescription: |\n  a\n---\ndescription: later\n", 4],
    ["---\ndescription:|keep\n  x\n", 4],
    ["---\ndescription: >\n  x", 4],
    ["---\n description: indented\n---\n", 0],
  ];
  const files: Record<string, string> = {};
  cases.forEach(([content], i) => files[`agents/${String(i).padStart(2, "0")}.md`] = content);
  writeTree(root, files);
  const doc = clean(scanRoot(root, ["--tier", "always-on"]));
  const got = new Map(doc.files.map((f) => [f.path.slice(root.length + 1), f.bytes]));
  cases.forEach(([content, bytes], i) => {
    const key = `agents/${String(i).padStart(2, "0")}.md`;
    assert.equal(got.get(key) ?? 0, bytes, `${JSON.stringify(content)} → ${bytes}`);
  });
  assert.ok(doc.files.every((f) => f.kind === "field:description"));
});

Deno.test("Hook estimate: the documented example, one-letter name, CRLF ;, = ; → no row, TS annotation, .mjs outside hooks", () => {
  const root = makeTempDir("ctxkit-scan-hooks-");
  writeTree(root, {
    "hooks/a-example.mjs":
      'export const REMINDER_TEXT = "Run tests";\nconst X = 1;\nconst MAX_TRIES = 3;\n',
    "hooks/b-one-letter.mjs": "const X = 'long value here';\n",
    "hooks/c-crlf.mjs": "const MAX = 3;\r\n",
    "hooks/d-empty.mjs": "const AB = ;\n",
    "hooks/e-ts.mjs": "const X_Y: string = 'abc';\nconst LIMIT=5;\nlet ZZ = 1;\n",
    "hooks/f-number.mjs": "const MAX = 3;\n",
    "hooks/g-comment.mjs": 'const AB = "a"; // c\n',
    "hooks/h-multi.mjs": "export const LIST = [\n  'a',\n  'b',\n];\n",
    "hooks/i-indented.mjs": "  const AB = 'x';\nexport  const CD = 'y';\nconst aB = 'z';\n",
    "hooks/j-unterminated.mjs": "const AB = xyz",
    "hooks/lib/deep/k.mjs": "const LONG_NAME = 'v';\n",
    "hooks/l.js": "const LONG_NAME = 'not mjs';\n",
    "myhooks/x.mjs": "const LONG_NAME = 'no';\n",
    "hooks.mjs": "const LONG_NAME = 'no';\n",
    "src/x.mjs": "const LONG_NAME = 'no';\n",
  });
  const doc = clean(scanRoot(root));
  assert.deepEqual(brief(doc.files, root), [
    "hooks/a-example.mjs always-on hook-payload 14 runtime-dependent",
    "hooks/c-crlf.mjs always-on hook-payload 4 runtime-dependent",
    "hooks/f-number.mjs always-on hook-payload 2 runtime-dependent",
    "hooks/g-comment.mjs always-on hook-payload 10 runtime-dependent",
    "hooks/h-multi.mjs always-on hook-payload 2 runtime-dependent",
    "hooks/j-unterminated.mjs always-on hook-payload 4 runtime-dependent",
    "hooks/lib/deep/k.mjs always-on hook-payload 4 runtime-dependent",
  ]);
  assert.ok(doc.files.every((f) => f.estimated === true));
  assert.equal(doc.files[0].tokens, 3);
});

Deno.test("Memory: MEMORY.md at any depth → memory-index-limited; .claude/memory/tmp included; per-project rows labelled project, between project steps and global", () => {
  const t = makeTempDir("ctxkit-scan-mem-");
  const home = `${t}/home`;
  const root = `${t}/proj`;
  writeTree(t, {
    "proj/CLAUDE.md": "p\n",
    "proj/agents/a.md": "agent\n",
    "proj/.claude/memory/MEMORY.md": "index\n",
    "proj/.claude/memory/tmp/t.md": "tmp\n",
    "proj/.claude/memory/deep/er/MEMORY.md": "deep index\n",
    "proj/.claude/memory/x.MEMORY.md": "not index\n",
    "proj/.claude/memory/notes.txt": "not md\n",
    [`home/.claude/projects/${slugOf(root)}/memory/MEMORY.md`]: "pm\n",
    "home/.claude/CLAUDE.md": "g\n",
    "home/.claude/.claude/memory/g.md": "gm\n",
  });
  const doc = clean(scan(["--root", root, "--global"], { env: { HOME: home } }));
  assert.deepEqual(
    doc.files.map((f) => `${f.root} ${f.path.slice(t.length + 1)} ${f.loading}`),
    [
      "project proj/CLAUDE.md startup-instruction",
      "project proj/.claude/memory/MEMORY.md memory-index-limited",
      "project proj/.claude/memory/deep/er/MEMORY.md memory-index-limited",
      "project proj/.claude/memory/tmp/t.md on-demand",
      "project proj/.claude/memory/x.MEMORY.md on-demand",
      "project proj/agents/a.md selected-agent",
      `project home/.claude/projects/${slugOf(root)}/memory/MEMORY.md memory-index-limited`,
      "global home/.claude/CLAUDE.md startup-instruction",
      "global home/.claude/.claude/memory/g.md on-demand",
    ],
  );
  // a linked .claude/memory start is entered (D6)
  const other = `${t}/proj2`;
  writeTree(t, { "memsrc/m.md": "linked mem\n" });
  link(`${t}/memsrc`, `${other}/.claude/memory`);
  assert.deepEqual(brief(clean(scanRoot(other)).files, other), [
    ".claude/memory/m.md always-on file 11 on-demand",
  ]);
});

Deno.test("Per-project memory walk: unpruned at depth, symlinked files not counted", () => {
  const home = makeTempDir("ctxkit-scan-pmhome-");
  const root = makeTempDir("ctxkit-scan-pm-");
  const memory = `${home}/.claude/projects/${slugOf(root)}/memory`;
  const files: Record<string, string> = { "elsewhere.md": "linked\n" };
  for (const name of PRUNE) files[`${memory.slice(home.length + 1)}/${name}/m.md`] = "mem\n";
  writeTree(home, files);
  link(`${home}/elsewhere.md`, `${memory}/linked.md`);
  const doc = clean(scan(["--root", root], { env: { HOME: home } }));
  const expected = PRUNE.map((name) => `${memory}/${name}/m.md`)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  assert.deepEqual(doc.files.map((f) => f.path), expected);
  assert.ok(doc.files.every((f) => f.root === "project" && f.loading === "on-demand"));
});

Deno.test("Per-project memory found under both slugs (root path containing _ and .), no duplicates", () => {
  const t = makeTempDir("ctxkit-scan-slug-");
  const home = `${t}/home`;
  const root = `${t}/my_app.v2`;
  mkdirSync(root);
  const slug1 = slugOf(root);
  const slug2 = root.replace(/[^A-Za-z0-9]/g, "-");
  assert.notEqual(slug1, slug2);
  writeTree(home, {
    [`.claude/projects/${slug1}/memory/MEMORY.md`]: "one\n",
    [`.claude/projects/${slug2}/memory/MEMORY.md`]: "two!\n",
    [`.claude/projects/${slug2}/memory/more.md`]: "more\n",
  });
  const doc = clean(scan(["--root", root, "--global"], { env: { HOME: home } }));
  assert.deepEqual(brief(doc.files, `${home}/.claude/projects`), [
    `${slug1}/memory/MEMORY.md always-on file 4 memory-index-limited`,
    `${slug2}/memory/MEMORY.md always-on file 5 memory-index-limited`,
    `${slug2}/memory/more.md always-on file 5 on-demand`,
  ]);
  assert.ok(doc.files.every((f) => f.root === "project"));
  // a plain root has one slug: its memory is listed once
  const plain = `${t}/plain`;
  mkdirSync(plain);
  writeTree(home, { [`.claude/projects/${slugOf(plain)}/memory/MEMORY.md`]: "x\n" });
  assert.equal(clean(scan(["--root", plain], { env: { HOME: home } })).files.length, 1);
  // a linked per-project memory directory is entered (D6)
  const linked = `${t}/linked`;
  mkdirSync(linked);
  link(
    `${home}/.claude/projects/${slugOf(plain)}/memory`,
    `${home}/.claude/projects/${slugOf(linked)}/memory`,
  );
  assert.equal(clean(scan(["--root", linked], { env: { HOME: home } })).files.length, 1);
});

Deno.test("CLAUDE_CONFIG_DIR drives roots.global, global rows and memory location; unset → $HOME/.claude", () => {
  const t = makeTempDir("ctxkit-scan-cfg-");
  const root = `${t}/proj`;
  mkdirSync(root);
  writeTree(t, {
    "home/.claude/CLAUDE.md": "home global\n",
    [`home/.claude/projects/${slugOf(root)}/memory/m.md`]: "home mem\n",
    "cfg/CLAUDE.md": "cfg\n",
    [`cfg/projects/${slugOf(root)}/memory/m.md`]: "cfg mem\n",
  });
  const withCfg = clean(scan(["--root", root, "--global"], {
    env: { HOME: `${t}/home`, CLAUDE_CONFIG_DIR: `${t}/cfg/` },
  }));
  assert.equal(withCfg.roots.global, `${t}/cfg`);
  assert.deepEqual(brief(withCfg.files, `${t}/cfg`), [
    `projects/${slugOf(root)}/memory/m.md always-on file 8 on-demand`,
    "CLAUDE.md always-on file 4 startup-instruction",
  ]);
  // relative CLAUDE_CONFIG_DIR joins the logical cwd
  const relative = clean(scan(["--root", root, "--global"], {
    cwd: t,
    env: { HOME: `${t}/home`, CLAUDE_CONFIG_DIR: "cfg" },
  }));
  assert.equal(relative.roots.global, `${t}/cfg`);
  const unset = clean(scan(["--root", root, "--global"], { env: { HOME: `${t}/home` } }));
  assert.equal(unset.roots.global, `${t}/home/.claude`);
  assert.deepEqual(brief(unset.files, `${t}/home/.claude`), [
    `projects/${slugOf(root)}/memory/m.md always-on file 9 on-demand`,
    "CLAUDE.md always-on file 12 startup-instruction",
  ]);
  // HOME with a trailing slash is used verbatim
  const slashed = clean(scan(["--root", root, "--global"], { env: { HOME: `${t}/home/` } }));
  assert.equal(slashed.roots.global, `${t}/home//.claude`);
  // without --global: null, but per-project memory still comes from G
  const noGlobal = clean(scan(["--root", root], { env: { HOME: `${t}/home` } }));
  assert.equal(noGlobal.roots.global, null);
  assert.equal(noGlobal.files.length, 1);
  // G not a directory → nothing, no error
  const absent = clean(scan(["--root", root, "--global"], {
    env: { HOME: `${t}/home`, CLAUDE_CONFIG_DIR: `${t}/absent` },
  }));
  assert.equal(absent.roots.global, `${t}/absent`);
  assert.equal(absent.files.length, 0);
});

Deno.test("Conventions: one level, any extension, no dot-names or subdirs, symlinked files included", () => {
  const t = makeTempDir("ctxkit-scan-conv-");
  const root = `${t}/proj`;
  writeTree(t, {
    "proj/.claude/convention/b.txt": "bb\n",
    "proj/.claude/convention/a.md": "a\n",
    "proj/.claude/convention/noext": "n\n",
    "proj/.claude/convention/.hidden": "h\n",
    "proj/.claude/convention/sub/deep.md": "d\n",
    "shared.yaml": "k: v\n",
  });
  link(`${t}/shared.yaml`, `${root}/.claude/convention/linked.yaml`);
  link(`${t}/missing`, `${root}/.claude/convention/dangling.md`);
  link(`${t}/proj/.claude/convention/sub`, `${root}/.claude/convention/dirlink`);
  const doc = clean(scanRoot(root));
  assert.deepEqual(brief(doc.files, root), [
    ".claude/convention/a.md always-on file 2 import-or-read-required",
    ".claude/convention/b.txt always-on file 3 import-or-read-required",
    ".claude/convention/linked.yaml always-on file 5 import-or-read-required",
    ".claude/convention/noext always-on file 2 import-or-read-required",
  ]);
});

Deno.test("Zero-byte file → no row; Привет 🌱⏎ → 18 bytes, 4 tokens; tier tokens = sum of per-row floors", () => {
  const root = makeTempDir("ctxkit-scan-bytes-");
  writeTree(root, {
    "CLAUDE.md": "",
    "CLAUDE.local.md": "Привет 🌱\n",
    "AGENTS.md": "abc",
    ".claude/AGENTS.md": "xyz",
    "agents/empty.md": "",
    "skills/s/SKILL.md": "",
  });
  const doc = clean(scanRoot(root));
  assert.deepEqual(brief(doc.files, root), [
    "CLAUDE.local.md always-on file 18 startup-instruction",
    "AGENTS.md always-on file 3 client-or-import-dependent",
    ".claude/AGENTS.md always-on file 3 client-or-import-dependent",
  ]);
  assert.deepEqual(doc.files.map((f) => f.tokens), [4, 0, 0]);
  assert.deepEqual(doc.totals["always-on"], { files: 3, bytes: 24, tokens: 4 }); // not floor(24/4)=6
  assert.deepEqual(doc.totals.grand, { files: 3, bytes: 24, tokens: 4 });
});

Deno.test("Sort: .hidden.md < MEMORY.md < Z.md < a-b.md < a/b.md < é.md < ｚ.md < 𝔸.md", () => {
  const root = makeTempDir("ctxkit-scan-sort-");
  const names = [".hidden.md", "MEMORY.md", "Z.md", "a-b.md", "a/b.md", "é.md", "ｚ.md", "𝔸.md"];
  const files: Record<string, string> = {};
  for (const name of [...names].reverse()) {
    files[`.claude/memory/${name}`] = "m\n";
    files[`rules/${name}`] = "r\n";
  }
  writeTree(root, files);
  const doc = clean(scanRoot(root));
  assert.deepEqual(doc.files.map((f) => f.path.slice(root.length + 1)), [
    ...names.map((n) => `rules/${n}`),
    ...names.map((n) => `.claude/memory/${n}`),
  ]);
});

Deno.test('--root "$G" --global → only project rows, no duplicates', () => {
  const t = makeTempDir("ctxkit-scan-same-");
  const g = `${t}/home/.claude`;
  writeTree(g, {
    "CLAUDE.md": "g\n",
    "agents/a.md": "---\ndescription: d\n---\n",
    "skills/s/SKILL.md": "s\n",
    ".claude/rules/r.md": "r\n",
    "projects/x/memory/skip.md": "pruned from the root walk\n",
  });
  const doc = clean(scan(["--root", g, "--global"], { env: { HOME: `${t}/home` } }));
  assert.equal(doc.roots.project, g);
  assert.equal(doc.roots.global, g);
  assert.deepEqual(brief(doc.files, g), [
    "CLAUDE.md always-on file 2 startup-instruction",
    ".claude/rules/r.md always-on file 2 unscoped-rule",
    "agents/a.md per-spawn file 23 selected-agent",
    "agents/a.md always-on field:description 2 runtime-dependent",
    "skills/s/SKILL.md per-invocation file 2 invoked-skill",
  ]);
  assert.ok(doc.files.every((f) => f.root === "project"));
  assert.equal(doc.totals.grand.files, 5);
});

Deno.test("Tier filter zeroes other tiers' totals yet reports their issues (exit 2)", () => {
  const t = makeTempDir("ctxkit-scan-filter-");
  const root = `${t}/proj`;
  writeTree(root, { "CLAUDE.md": "hello\n", "agents/a.md": "agent body\n" });
  link(`${t}/missing`, `${root}/rules`);
  const r = scanRoot(root, ["--tier", "per-spawn"]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "❌ FAILED EXIT:2\n");
  assert.ok(r.doc);
  assert.deepEqual(brief(r.doc.files, root), ["agents/a.md per-spawn file 11 selected-agent"]);
  assert.deepEqual(r.doc.totals["always-on"], { files: 0, bytes: 0, tokens: 0 });
  assert.deepEqual(r.doc.totals.grand, { files: 1, bytes: 11, tokens: 2 });
  assert.deepEqual(r.doc.scan_issues.map((i) => i.path), [`${root}/rules`]);
});

Deno.test('Names with ", \\, TAB, newline, \\x01, \\x1b → parseable JSON; non-UTF-8 name (Linux) → issue + valid JSON', () => {
  const root = makeTempDir("ctxkit-scan-names-");
  const names = [
    'q"uote.md',
    "back\\slash.md",
    "tab\there.md",
    "new\nline.md",
    "c\x01.md",
    "e\x1b.md",
  ];
  const files: Record<string, string> = {};
  for (const name of names) files[`agents/${name}`] = "body\n";
  writeTree(root, files);
  const r = scanRoot(root);
  const doc = clean(r);
  const expected = names.map((n) => `${root}/agents/${n}`).sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b))
  );
  assert.deepEqual(doc.files.map((f) => f.path), expected);
  assert.ok(r.stdout.includes("tab\\there.md") && r.stdout.includes("e\\u001b.md"));
  assert.ok(r.stdout.includes("c\\u0001.md") && r.stdout.includes("new\\nline.md"));
  const raw = [...r.stdout].filter((c) => c.charCodeAt(0) < 0x20 && c !== "\n");
  assert.deepEqual(raw, [], "no raw control characters");

  if (Deno.build.os !== "linux") return;
  const bad = makeTempDir("ctxkit-scan-bad-");
  writeTree(bad, { "agents/good.md": "good\n", "CLAUDE.md": "hi\n" });
  writeRawName(`${bad}/agents`, "bad\\377.md", "bad\n");
  writeRawName(`${bad}/agents`, "ignored\\376.txt", "not a row\n");
  mkdirSync(`${bad}/.claude/rules`, { recursive: true });
  writeRawName(`${bad}/.claude/rules`, "r\\351.md", "rule\n");
  const rb = scanRoot(bad);
  assert.equal(rb.code, 2);
  assert.equal(rb.stderr, "❌ FAILED EXIT:2\n");
  assert.ok(rb.doc, "valid JSON document");
  assert.deepEqual(brief(rb.doc.files, bad), [
    "CLAUDE.md always-on file 3 startup-instruction",
    "agents/good.md per-spawn file 5 selected-agent",
  ]);
  assert.deepEqual(rb.doc.scan_issues.map((i) => [i.root, i.path, i.detail]), [
    [
      "project",
      `${bad}/.claude/rules`,
      `'${bad}/.claude/rules/r\uFFFD.md': name is not valid UTF-8`,
    ],
    ["project", bad, `'${bad}/agents/bad\uFFFD.md': name is not valid UTF-8`],
  ]);
  // a genuine U+FFFD in a valid name is an ordinary row
  const fine = makeTempDir("ctxkit-scan-fffd-");
  writeTree(fine, { "agents/ok\uFFFD.md": "x\n" });
  assert.equal(clean(scanRoot(fine)).files.length, 1);
  // a directory whose name is not valid UTF-8 cannot be entered: a problem of the walk meeting it
  const dirs = makeTempDir("ctxkit-scan-baddir-");
  writeTree(dirs, { ".claude/memory/ok.md": "ok\n", "src/keep.txt": "" });
  spawnSync("bash", ["-c", 'mkdir "$1/.claude/memory/$(printf "d\\377")"', "_", dirs]);
  spawnSync("bash", ["-c", 'mkdir "$1/src/$(printf "e\\376")"', "_", dirs]);
  const rd = scanRoot(dirs);
  assert.equal(rd.code, 2);
  assert.ok(rd.doc);
  assert.deepEqual(brief(rd.doc.files, dirs), [".claude/memory/ok.md always-on file 3 on-demand"]);
  assert.deepEqual(rd.doc.scan_issues.map((i) => [i.path, i.detail]), [
    [`${dirs}/.claude/memory`, `'${dirs}/.claude/memory/d\uFFFD': name is not valid UTF-8`],
    [
      dirs,
      `'${dirs}/.claude/memory/d\uFFFD': name is not valid UTF-8\n'${dirs}/src/e\uFFFD': name is not valid UTF-8`,
    ],
  ]);
});

Deno.test("Root via symlink, root named build, root under …/skills/… or …/agents/… → same rows as at a neutral path", () => {
  const t = makeTempDir("ctxkit-scan-where-");
  const tree: Record<string, string> = {
    "CLAUDE.md": "top\n",
    "agents/a.md": "---\ndescription: agent\n---\n",
    "tools/hooks/h.mjs": "const LONG_TEXT = 'abc';\n",
    "skills/s/SKILL.md": "skill\n",
    "skills/s/references/r.md": "ref\n",
    ".claude/memory/m.md": "mem\n",
  };
  const neutralRoot = `${t}/neutral/proj`;
  writeTree(neutralRoot, tree);
  const neutral = brief(clean(scanRoot(neutralRoot)).files, neutralRoot);
  assert.equal(neutral.length, 7);
  link(neutralRoot, `${t}/via-link`);
  const roots = [
    `${t}/via-link`,
    `${t}/x/build`,
    `${t}/x/skills/proj`,
    `${t}/x/agents/proj`,
    `${t}/x/tmp`,
  ];
  for (const root of roots.slice(1)) writeTree(root, tree);
  for (const root of roots) {
    assert.deepEqual(brief(clean(scanRoot(root)).files, root), neutral, root);
  }
});

Deno.test("Runs with read, env and run=git permissions only (the documented runtime line)", () => {
  if (skipWithoutDenoFlags()) return;
  const ex = buildExample();
  const r = scan(["--root", ".", "--global"], {
    cwd: ex.demo,
    env: { HOME: ex.home },
    permissions: ["--allow-read", "--allow-env", "--allow-run=git"],
  });
  assert.equal(r.stderr, OK);
  assert.equal(r.stdout, ex.expected);
  // git toplevel discovery needs only run=git
  const repo = makeTempDir("ctxkit-scan-git-");
  git(repo, "init", "-q");
  mkdirSync(`${repo}/sub`);
  const viaGit = scan([], {
    cwd: `${repo}/sub`,
    env: { HOME: ex.home },
    permissions: ["--allow-read", "--allow-env", "--allow-run=git"],
  });
  assert.equal(clean(viaGit).roots.project, repo);
});

Deno.test("Probes follow links; dangling link, directory or FIFO → nothing; nested SKILL.md in references is on-demand only", () => {
  const t = makeTempDir("ctxkit-scan-probe-");
  const root = `${t}/proj`;
  writeTree(t, {
    "shared.md": "shared\n",
    "proj/AGENTS.md/inner.md": "a directory named AGENTS.md\n",
    "proj/skills/a/SKILL.md": "outer\n",
    "proj/skills/a/references/SKILL.md": "nested skill\n",
    "proj/skills/a/references/b.md": "b\n",
  });
  link(`${t}/shared.md`, `${root}/CLAUDE.md`);
  link(`${t}/missing.md`, `${root}/CLAUDE.local.md`);
  spawnSyncOk("mkfifo", [`${root}/.claude/AGENTS.md`], `${root}/.claude`);
  const doc = clean(scanRoot(root));
  assert.deepEqual(brief(doc.files, root), [
    "CLAUDE.md always-on file 7 startup-instruction",
    "skills/a/SKILL.md per-invocation file 6 invoked-skill",
    "skills/a/references/SKILL.md per-invocation file 13 on-demand",
    "skills/a/references/b.md per-invocation file 2 on-demand",
  ]);
});

function spawnSyncOk(cmd: string, args: string[], dir: string): void {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync(cmd, args);
  assert.equal(r.status, 0, `${cmd} failed`);
}

Deno.test("Missing read permission → one ❌ missing Deno permission line, exit 2, no JSON", () => {
  if (skipWithoutDenoFlags()) return;
  const root = makeTempDir("ctxkit-scan-perm-");
  for (
    const permissions of [["--allow-env", "--allow-run=git"], [
      `--allow-read=${root}`,
      "--allow-env",
    ]]
  ) {
    const r = scan(["--root", root], { permissions });
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    const errLines = r.stderr.split("\n");
    assert.equal(errLines.length, 3, r.stderr);
    assert.match(errLines[0], /^❌ missing Deno permission: /);
    assert.equal(errLines[1], "❌ FAILED EXIT:2");
  }
});
