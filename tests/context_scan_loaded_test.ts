// deno-lint-ignore-file no-control-regex -- the tests match ANSI colour escapes on purpose
/**
 * context-scan `--loaded`, `--format table` and `--budget` (`references/context-scan.md#loaded-figures`,
 * `#table-report`, `#budget`): every loading rule on a fixture, the report at 80 and 120 columns,
 * colour only on a terminal without NO_COLOR, and the budget line and exit codes. Runs the tool as a
 * child process (sources, or the bundle with CTXKIT_TEST_TARGET=bundle).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { baseEnv, isolatedCommand, makeTempDir, toolArgv, writeTree } from "./_helpers.ts";
import { buildExample, scan, type ScanRun, slugOf } from "./context_scan_fixtures.ts";
import type { ScanDocument, ScanRow } from "../lib/scan/schema.ts";

const OK = "✅ EXIT:0\n";

/** The worked example with `--loaded` (paths under `/home/u`, as in the default snapshot). */
const EXAMPLE_LOADED = `{
  "roots": {"project": "/home/u/demo", "global": "/home/u/.claude"},
  "tier_filter": "all",
  "token_model": "chars/4",
  "measurement": {"scope": "potential-inventory", "token_proxy": "bytes/4", "actual_loading_observed": false},
  "files": [
    {"path":"/home/u/demo/CLAUDE.md","root":"project","tier":"always-on","kind":"file","bytes":17,"tokens":4,"estimated":false,"loading":"startup-instruction","loaded_bytes":16,"loaded_tokens":4,"limits":[],"category":"memory-files"},
    {"path":"/home/u/demo/.claude/rules/api/scoped.md","root":"project","tier":"always-on","kind":"file","bytes":46,"tokens":11,"estimated":false,"loading":"path-scoped-rule","loaded_bytes":0,"loaded_tokens":0,"limits":["path-scoped"],"category":"memory-files","on_access_bytes":16},
    {"path":"/home/u/demo/.claude/rules/style.md","root":"project","tier":"always-on","kind":"file","bytes":18,"tokens":4,"estimated":false,"loading":"unscoped-rule","loaded_bytes":17,"loaded_tokens":4,"limits":[],"category":"memory-files"},
    {"path":"/home/u/demo/.claude/convention/naming.txt","root":"project","tier":"always-on","kind":"file","bytes":19,"tokens":4,"estimated":false,"loading":"import-or-read-required","loaded_bytes":0,"loaded_tokens":0,"limits":["import-only"],"category":"memory-files"},
    {"path":"/home/u/demo/tools/hooks/lib/inject.mjs","root":"project","tier":"always-on","kind":"hook-payload","bytes":14,"tokens":3,"estimated":true,"loading":"runtime-dependent","loaded_bytes":0,"loaded_tokens":0,"limits":["not-loaded"],"category":"hooks"},
    {"path":"/home/u/demo/.claude/agents/reviewer.md","root":"project","tier":"per-spawn","kind":"file","bytes":99,"tokens":24,"estimated":false,"loading":"selected-agent","loaded_bytes":16,"loaded_tokens":4,"limits":["frontmatter-stripped"],"category":null},
    {"path":"/home/u/demo/.claude/agents/reviewer.md","root":"project","tier":"always-on","kind":"field:description","bytes":32,"tokens":8,"estimated":false,"loading":"agent-listing","loaded_bytes":59,"loaded_tokens":14,"limits":[],"category":"agents","name":"reviewer"},
    {"path":"/home/u/demo/tools/agents/helper.md","root":"project","tier":"per-spawn","kind":"file","bytes":42,"tokens":10,"estimated":false,"loading":"selected-agent","loaded_bytes":0,"loaded_tokens":0,"limits":["not-loaded"],"category":null},
    {"path":"/home/u/demo/tools/agents/helper.md","root":"project","tier":"always-on","kind":"field:description","bytes":15,"tokens":3,"estimated":false,"loading":"agent-listing","loaded_bytes":0,"loaded_tokens":0,"limits":["not-loaded"],"category":"agents"},
    {"path":"/home/u/demo/tools/skills/demo/SKILL.md","root":"project","tier":"per-invocation","kind":"file","bytes":32,"tokens":8,"estimated":false,"loading":"invoked-skill","loaded_bytes":0,"loaded_tokens":0,"limits":["not-loaded"],"category":null},
    {"path":"/home/u/demo/tools/skills/demo/SKILL.md","root":"project","tier":"always-on","kind":"field:description","bytes":21,"tokens":5,"estimated":false,"loading":"skill-listing","loaded_bytes":0,"loaded_tokens":0,"limits":["not-loaded"],"category":"skills"},
    {"path":"/home/u/demo/tools/skills/demo/references/guide.md","root":"project","tier":"per-invocation","kind":"file","bytes":18,"tokens":4,"estimated":false,"loading":"on-demand","loaded_bytes":0,"loaded_tokens":0,"limits":["not-loaded"],"category":null},
    {"path":"/home/u/.claude/projects/-home-u-demo/memory/MEMORY.md","root":"project","tier":"always-on","kind":"file","bytes":20,"tokens":5,"estimated":false,"loading":"memory-index-limited","loaded_bytes":19,"loaded_tokens":4,"limits":[],"category":"memory-files"},
    {"path":"/home/u/.claude/projects/-home-u-demo/memory/topic.md","root":"project","tier":"always-on","kind":"file","bytes":31,"tokens":7,"estimated":false,"loading":"on-demand","loaded_bytes":0,"loaded_tokens":0,"limits":["on-demand"],"category":"memory-files"},
    {"path":"/home/u/.claude/CLAUDE.md","root":"global","tier":"always-on","kind":"file","bytes":18,"tokens":4,"estimated":false,"loading":"startup-instruction","loaded_bytes":17,"loaded_tokens":4,"limits":[],"category":"memory-files"}
  ],
  "scan_issues": [
  ],
  "totals": {
    "always-on": {"files": 11, "bytes": 251, "tokens": 58, "loaded": {"files": 5, "bytes": 128, "tokens": 30}},
    "per-spawn": {"files": 2, "bytes": 141, "tokens": 34, "loaded": {"files": 1, "bytes": 16, "tokens": 4}},
    "per-invocation": {"files": 2, "bytes": 50, "tokens": 12, "loaded": {"files": 0, "bytes": 0, "tokens": 0}},
    "grand": {"files": 15, "bytes": 442, "tokens": 104, "loaded": {"files": 6, "bytes": 144, "tokens": 34}}
  },
  "categories": {
    "system-prompt": {"files": 0, "bytes": 0, "tokens": 0},
    "memory-files": {"files": 4, "bytes": 69, "tokens": 16},
    "skills": {"files": 0, "bytes": 0, "tokens": 0},
    "agents": {"files": 1, "bytes": 59, "tokens": 14},
    "hooks": {"files": 0, "bytes": 0, "tokens": 0}
  }
}
`;

/** The worked example's report at 80 columns (HOME is the example's home, so paths show `~`). */
const TABLE_80 = `context-scan ~/demo
global root  ~/.claude
tokens = bytes/4; loaded = what Claude Code 2.1.332 sends (observed rules)

TIER              FILES     TOKENS     LOADED
always-on            11         58         30
per-spawn             2         34          4
per-invocation        2         12          0
total                15        104         34

AT SESSION START, AS /context GROUPS IT
CATEGORY        SOURCES     LOADED
Memory files          4         16
Skills                0          0
Custom agents         1         14
Hooks' context        0          0
  (system prompt and tools: only --observe can see them)

HEAVIEST 10 ROWS (by loaded tokens)
             tokens   loaded  tier            path
  ████████        8       14  always-on       …/agents/reviewer.md [listing]
  ██             24        4  per-spawn       .claude/agents/reviewer.md
  ██              5        4  always-on       …SLUG/memory/MEMORY.md
  ██              4        4  always-on       CLAUDE.md
  ██              4        4  always-on       .claude/rules/style.md
  ██              4        4  always-on       ~/.claude/CLAUDE.md
                 11        0  always-on       .claude/rules/api/scoped.md
                 10        0  per-spawn       tools/agents/helper.md
                  8        0  per-invocation  tools/skills/demo/SKILL.md
                  7        0  always-on       …SLUG/memory/topic.md

LIMITS THAT FIRED
  not-loaded                6  outside Claude Code's layout: never loaded
  frontmatter-stripped      1  YAML frontmatter not sent
  import-only               1  not auto-loaded, only via @import; 0 at start
  on-demand                 1  loads only when read; 0 at start-up
  path-scoped               1  loads when a matching file is read; 0 at start

WHEN IT LOADS (tokens: the model's, then what Claude Code sent)
      model  observed  source
         30         -  at start-up: the files' text (observed: whole request)
          -         -  with every prompt: 0 hook files (sized only when run)
  PER SPAWN (agents): 1 file, 4 tokens
          4         -  .claude/agents/reviewer.md
  ON ACCESS (rules and subfolders' files): 1 file, 4 tokens
          4         -  .claude/rules/api/scoped.md

SCAN ISSUES (0)
  none: the inventory is complete
`;

/** The worked example's report at 120 columns, without `--loaded`. */
const TABLE_120 = `context-scan ~/demo
global root  ~/.claude
tokens = bytes/4 of whole files (potential inventory; --loaded models loading)

TIER              FILES     TOKENS
always-on            10         53
per-spawn             2         34
per-invocation        2         12
total                14         99

HEAVIEST 10 ROWS (by potential tokens)
                 tokens  tier            path
  ████████████       24  per-spawn       .claude/agents/reviewer.md
  ██████             11  always-on       .claude/rules/api/scoped.md
  █████              10  per-spawn       tools/agents/helper.md
  ████                8  always-on       .claude/agents/reviewer.md [description]
  ████                8  per-invocation  tools/skills/demo/SKILL.md
  ████                7  always-on       …SLUG/memory/topic.md
  ███                 5  always-on       …SLUG/memory/MEMORY.md
  ██                  4  always-on       CLAUDE.md
  ██                  4  always-on       .claude/rules/style.md
  ██                  4  always-on       .claude/convention/naming.txt

SCAN ISSUES (0)
  none: the inventory is complete
`;

function clean(r: ScanRun): ScanDocument {
  assert.equal(r.stderr, OK, r.stderr);
  assert.equal(r.code, 0);
  assert.ok(r.doc, "stdout is a valid scan document");
  return r.doc;
}

/** Rows as `relative-path kind loaded_bytes limits…`. */
function loaded(rows: ScanRow[], base: string): string[] {
  return rows.map((row) => {
    const rel = row.path.startsWith(base + "/") ? row.path.slice(base.length + 1) : row.path;
    return [rel, row.kind, row.loaded_bytes, ...(row.limits ?? [])].join(" ");
  });
}

Deno.test("--loaded on the worked example: exact document; without it the default document is unchanged", () => {
  const ex = buildExample();
  const expected = EXAMPLE_LOADED
    .replaceAll("-home-u-demo", slugOf(ex.demo))
    .replaceAll('"/home/u', `"${ex.home}`);
  const r = scan(["--root", ".", "--global", "--loaded"], {
    cwd: ex.demo,
    env: { HOME: ex.home },
  });
  assert.equal(r.stderr, OK);
  assert.equal(r.stdout, expected);
  assert.ok(r.doc, "the schema accepts the optional keys");
  const plain = scan(["--root", ".", "--global", "--loaded", "--json", "--format", "json"], {
    cwd: ex.demo,
    env: { HOME: ex.home },
  });
  assert.equal(plain.stdout, expected);
  const without = scan(["--root", ".", "--global"], { cwd: ex.demo, env: { HOME: ex.home } });
  assert.equal(without.stdout, ex.expected);
});

Deno.test("--loaded rules: each import its own row, 4 hops, imports in code, cycles, AGENTS.md by import, path-scoped nested rules, memory folders, skill listings", () => {
  const root = makeTempDir("ctxkit-loaded-");
  const config = makeTempDir("ctxkit-loaded-config-");
  const chain: Record<string, string> = {};
  for (const [i, name] of ["a", "b", "c", "d", "e", "f"].entries()) {
    const next = ["b", "c", "d", "e", "f", "g"][i];
    chain[`docs/${name}.md`] = `${name}\n@${next}.md @a.md\n`; // every file also imports a (a cycle)
  }
  const memory = Array.from({ length: 300 }, (_, i) => `- note ${i}\n`).join("");
  const longDescription = "d".repeat(3000);
  writeTree(root, {
    "CLAUDE.md":
      "# P\n<!-- hidden -->\n@docs/a.md\n```\n@docs/fenced.md\n```\n`@docs/span.md` @AGENTS.md\n",
    "AGENTS.md": "agents text\n",
    ...chain,
    "docs/g.md": "six hops away\n",
    "docs/fenced.md": "never imported\n",
    "docs/span.md": "never imported\n",
    ".claude/rules/plain.md": "rule <!-- inline comment --> text\n",
    ".claude/rules/nested/deep/scoped.md": '---\npaths: ["src/**"]\n---\nscoped\n',
    ".claude/memory/MEMORY.md": "not Claude Code's memory folder\n",
    ".claude/skills/long/SKILL.md":
      `---\nname: long\ndescription: ${longDescription}\nwhen_to_use: when\n---\nbody\n`,
    ".claude/skills/manual/SKILL.md":
      "---\nname: manual\ndescription: by hand\ndisable-model-invocation: true\n---\nbody\n",
    ".claude/skills/plain/SKILL.md": "---\ndescription: short one\n---\nbody\n",
  });
  const slug = root.replace(/[^A-Za-z0-9]/g, "-");
  writeTree(`${config}/projects/${slug}/memory`, {
    "MEMORY.md": `---\ntitle: index\n---\n<!-- note -->\n${memory}`,
    "topic.md": "topic\n",
  });
  const env = { HOME: makeTempDir(), CLAUDE_CONFIG_DIR: config };
  const doc = clean(scan(["--root", root, "--loaded"], { env }));
  const size = (rel: string) => Deno.statSync(`${root}/${rel}`).size;
  const trimmed = (rel: string) => size(rel) - 1; // the final newline is not sent
  const memoryPath = `${config}/projects/${slug}/memory`;
  // MEMORY.md: frontmatter and comment gone, notes 0..199, then the warning line
  const kept = Array.from({ length: 200 }, (_, i) => `- note ${i}`).join("\n");
  const warning =
    '> WARNING: MEMORY.md is 300 lines (limit: 200). Only part of it was loaded: 100 of 300 lines were cut off, starting at line 201 ("- note 200"). Keep index entries to one line under ~200 chars; move detail into topic files.';
  assert.deepEqual(loaded(doc.files, root), [
    // CLAUDE.md less its comment; a..d are hops 1–4 (e is hop 5); fenced and code-span imports
    // are not followed; AGENTS.md comes in as an import
    `CLAUDE.md file ${trimmed("CLAUDE.md") - "<!-- hidden -->\n".length} html-comments-hidden`,
    `docs/a.md file ${trimmed("docs/a.md")}`,
    `docs/b.md file ${trimmed("docs/b.md")}`,
    `docs/c.md file ${trimmed("docs/c.md")}`,
    `docs/d.md file ${trimmed("docs/d.md")} import-depth-exceeded`,
    `AGENTS.md file ${trimmed("AGENTS.md")}`,
    ".claude/rules/nested/deep/scoped.md file 0 path-scoped",
    `.claude/rules/plain.md file ${trimmed(".claude/rules/plain.md")}`,
    ".claude/memory/MEMORY.md file 0 not-loaded",
    // The body an invocation sends ("body\n"), not the file.
    ".claude/skills/long/SKILL.md file 5 frontmatter-stripped",
    // "- long: " + 1,535 units + "…" (3 bytes) + "\n"
    `.claude/skills/long/SKILL.md field:description ${8 + 1535 + 3 + 1} description-capped`,
    ".claude/skills/manual/SKILL.md file 5 frontmatter-stripped user-invoked-only",
    ".claude/skills/manual/SKILL.md field:description 0 not-listed",
    ".claude/skills/plain/SKILL.md file 5 frontmatter-stripped",
    ".claude/skills/plain/SKILL.md field:description 19", // "- plain: short one\n"
    `${memoryPath}/MEMORY.md file ${
      kept.length + 2 + warning.length
    } frontmatter-stripped html-comments-hidden memory-truncated`,
    `${memoryPath}/topic.md file 0 on-demand`,
  ]);
  const byPath = (rel: string) => doc.files.find((f) => f.path === `${root}/${rel}`)!;
  assert.equal(byPath("docs/b.md").imported_by, `${root}/docs/a.md`);
  assert.equal(byPath("AGENTS.md").imported_by, `${root}/CLAUDE.md`);
  assert.equal(byPath("CLAUDE.md").imported_by, undefined);
  assert.equal(byPath("CLAUDE.md").category, "memory-files");
  const listing = doc.files.find((f) => f.loading === "skill-listing")!;
  assert.equal(listing.name, "long");
  assert.equal(listing.bytes, 8 + 3000 + 3 + 4 + 1); // the potential: uncut, " - " + when_to_use
  assert.equal(listing.category, "skills");
  assert.deepEqual(doc.totals["always-on"].loaded, {
    files: 10,
    bytes: doc.files.filter((f) => f.tier === "always-on")
      .reduce((n, f) => n + (f.loaded_bytes ?? 0), 0),
    tokens: doc.files.filter((f) => f.tier === "always-on")
      .reduce((n, f) => n + (f.loaded_tokens ?? 0), 0),
  });
  const categories = doc.categories!;
  assert.equal(categories["memory-files"].files, 8);
  assert.equal(categories.skills.files, 2);
  assert.equal(
    categories["memory-files"].bytes + categories.skills.bytes,
    doc.totals["always-on"].loaded!.bytes,
  );
  // --tier filters the listing rows like any always-on row
  const invocation = clean(
    scan(["--root", root, "--loaded", "--tier", "per-invocation"], { env }),
  );
  assert.ok(invocation.files.every((f) => f.tier === "per-invocation"));
  assert.deepEqual(invocation.totals["always-on"].loaded, { files: 0, bytes: 0, tokens: 0 });
});

Deno.test("--format table: the report at 80 columns with --loaded and at 120 without; report is an alias; same exit codes", () => {
  const ex = buildExample();
  const env = { HOME: ex.home, COLUMNS: "80" };
  // memory paths hold the temp dir's slug: shortened or not, they read `…SLUG/memory/…`
  const normalise = (out: string) =>
    out.replace(/(…|~\/\.claude\/projects\/)\S*\/memory\//g, "…SLUG/memory/");
  const t80 = scan(["--root", ".", "--global", "--loaded", "--format", "table"], {
    cwd: ex.demo,
    env,
  });
  assert.equal(t80.stderr, OK);
  // the memory path is cut from the left, at a folder, keeping its file
  const memoryLine = t80.stdout.split("\n").find((l) => l.includes("memory/MEMORY.md"))!;
  assert.ok(memoryLine.endsWith("  …/memory/MEMORY.md"), memoryLine);
  assert.equal(normalise(t80.stdout), TABLE_80);
  assert.ok(t80.stdout.split("\n").every((line) => [...line].length <= 80));
  const t120 = scan(["--root", ".", "--global", "--format", "report"], {
    cwd: ex.demo,
    env: { ...env, COLUMNS: "120" },
  });
  assert.equal(t120.stderr, OK);
  assert.equal(normalise(t120.stdout), TABLE_120);
  // not a terminal and no COLUMNS: 80 columns
  const plain = scan(["--root", ".", "--global", "--loaded", "--format", "table"], {
    cwd: ex.demo,
    env: { HOME: ex.home },
  });
  assert.equal(plain.stdout, t80.stdout);
  // issues: exit 2, listed at the end of the report
  const broken = makeTempDir("ctxkit-table-");
  writeTree(broken, { "CLAUDE.md": "x\n" });
  Deno.symlinkSync(`${broken}/missing`, `${broken}/rules`);
  const r = scan(["--root", broken, "--format", "table"], { env: { HOME: makeTempDir() } });
  assert.equal(r.code, 2);
  assert.equal(r.stderr, "❌ FAILED EXIT:2\n");
  assert.ok(
    r.stdout.endsWith(
      "SCAN ISSUES (1)\n  rules\n    Instruction directory link does not resolve to a directory\n",
    ),
    r.stdout,
  );
});

/** Run the tool under a pseudo-terminal (`script`), with `env` exactly. */
function scanOnTerminal(args: string[], env: Record<string, string>): string {
  const [program, programArgs] = isolatedCommand(env, [
    ...toolArgv("context-scan"),
    ...args,
  ]);
  const line = [program, ...programArgs].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const r = spawnSync("script", ["-qec", line, "/dev/null"], { env: { ...env, COLUMNS: "90" } });
  return new TextDecoder().decode(r.stdout);
}

Deno.test("--format table: colour only on a terminal, never with NO_COLOR", () => {
  const ex = buildExample();
  const env = baseEnv();
  delete (env as Record<string, string | undefined>).NO_COLOR;
  const args = ["--root", ex.demo, "--format", "table"];
  const base = { ...env, HOME: ex.home, PWD: ex.demo };
  const coloured = scanOnTerminal(args, base);
  assert.match(coloured, /\x1b\[1mcontext-scan /);
  assert.match(coloured, /\x1b\[33malways-on/);
  const noColor = scanOnTerminal(args, { ...base, NO_COLOR: "1" });
  assert.doesNotMatch(noColor, /\x1b\[/);
  assert.match(noColor, /^context-scan ~\/demo\r?\n/);
  // not a terminal: no colour even without NO_COLOR
  const piped = scan(args, { env: { HOME: ex.home, NO_COLOR: undefined } });
  assert.doesNotMatch(piped.stdout, /\x1b\[/);
});

Deno.test("--budget N: one BUDGET line on stderr (numbers formatted, the top contributors named); exit 1 when the always-on total (loaded with --loaded) exceeds N", () => {
  const ex = buildExample();
  const run = (args: string[]) =>
    scan(["--root", ex.demo, "--global", ...args], { env: { HOME: ex.home } });
  const over = run(["--budget", "50"]);
  assert.equal(over.code, 1);
  const topic = `~/.claude/projects/${slugOf(ex.demo)}/memory/topic.md`;
  assert.equal(
    over.stderr,
    `BUDGET: exceeded always-on 53 > 50 tokens (top: .claude/rules/api/scoped.md 11, .claude/agents/reviewer.md 8, ${topic} 7)\n❌ FAILED EXIT:1\n`,
  );
  assert.equal(over.stdout, ex.expected); // the document is still printed
  const ok = run(["--loaded", "--budget", "50"]);
  assert.equal(ok.code, 0);
  assert.equal(ok.stderr, "BUDGET: ok always-on loaded 30 <= 50 tokens\n✅ EXIT:0\n");
  const exact = run(["--budget", "53", "--format", "table"]);
  assert.equal(exact.code, 0);
  assert.equal(exact.stderr, "BUDGET: ok always-on 53 <= 53 tokens\n✅ EXIT:0\n");
  const tight = run(["--loaded", "--budget", "0"]);
  assert.equal(
    tight.stderr,
    "BUDGET: exceeded always-on loaded 30 > 0 tokens (top: .claude/agents/reviewer.md 14, CLAUDE.md 4, .claude/rules/style.md 4)\n❌ FAILED EXIT:1\n",
  );
  // an incomplete inventory keeps exit 2
  const broken = makeTempDir("ctxkit-budget-");
  Deno.symlinkSync(`${broken}/missing`, `${broken}/rules`);
  writeTree(broken, { "CLAUDE.md": "x".repeat(40) });
  const issues = scan(["--root", broken, "--budget", "1"], { env: { HOME: makeTempDir() } });
  assert.equal(issues.code, 2);
  assert.equal(
    issues.stderr,
    "BUDGET: exceeded always-on 10 > 1 tokens (top: CLAUDE.md 10)\n❌ FAILED EXIT:2\n",
  );
});

Deno.test("--budget and --format usage errors: one line, exit 2, nothing on stdout", () => {
  for (
    const [args, line] of [
      [["--budget"], "❌ --budget needs a value"],
      [["--budget="], "❌ --budget needs a whole number of tokens: "],
      [["--budget", "-1"], "❌ --budget needs a whole number of tokens: -1"],
      [["--budget", "1.5"], "❌ --budget needs a whole number of tokens: 1.5"],
      [["--budget", "1e3"], "❌ --budget needs a whole number of tokens: 1e3"],
      [
        ["--budget", "99999999999999999999"],
        "❌ --budget needs a whole number of tokens: 99999999999999999999",
      ],
      [["--format"], "❌ --format needs a value"],
      [["--format", ""], "❌ unknown format: "],
      [["--format", "yaml"], "❌ unknown format: yaml"],
      [["--format", "x\ny"], '❌ unknown format: "x\\ny"'],
      [["--loaded=1"], "❌ --loaded takes no value"],
    ] as const
  ) {
    const r = scan([...args]);
    assert.equal(r.stderr, `${line}\n❌ FAILED EXIT:2\n`, args.join(" "));
    assert.equal(r.stdout, "");
    assert.equal(r.code, 2);
  }
});

Deno.test("--budget under --tier per-spawn checks the per-spawn total (not a silent 0)", () => {
  const ex = buildExample();
  const r = scan(["--root", ex.demo, "--tier", "per-spawn", "--budget", "1"], {
    env: { HOME: ex.home },
  });
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr,
    "BUDGET: exceeded per-spawn 34 > 1 tokens (top: .claude/agents/reviewer.md 24, tools/agents/helper.md 10)\n❌ FAILED EXIT:1\n",
  );
});

Deno.test("--plugin-dir DIR (repeatable): a plugin's listing entries, namespaced; its layout not loaded as a project; not a directory is exit 2", () => {
  const base = makeTempDir("ctxkit-plugin-");
  writeTree(base, {
    "proj/CLAUDE.md": "p\n",
    "plug/.claude-plugin/plugin.json": '{"name": "plug"}',
    "plug/skills/alpha/SKILL.md": "---\ndescription: Alpha\n---\nb\n",
    "plug/commands/go.md": "---\ndescription: Go\n---\nb\n",
    "plug/agents/pa.md": "---\nname: pa\ndescription: Plugin agent\ntools: Read\n---\nb\n",
    "plug/hooks/hooks.json": JSON.stringify({
      hooks: {
        SessionStart: [{
          hooks: [
            { type: "command", command: "echo ready" },
            { type: "command", command: '"${CLAUDE_PLUGIN_ROOT}/hooks/start.sh"' },
          ],
        }],
      },
    }),
    "plug/CLAUDE.md": "never loaded\n",
    "other/skills/beta/SKILL.md": "---\ndescription: Beta\n---\nb\n",
  });
  const env = { HOME: `${base}/home`, CLAUDE_CONFIG_DIR: `${base}/cfg` };
  const doc = clean(
    scan(["--root", "proj", "--loaded", "--plugin-dir", "plug", "--plugin-dir", `${base}/other`], {
      cwd: base,
      env,
    }),
  );
  // (Each SKILL.md's listing row follows its per-invocation row: context_scan_loaded_setups_test.ts.)
  const plugin = doc.files.filter((f) => f.root === "plugin" && f.tier === "always-on");
  assert.deepEqual(
    plugin.map((f) => [f.path.slice(base.length), f.loading, f.name, f.loaded_bytes, f.category]),
    [
      ["/plug/skills/alpha/SKILL.md", "skill-listing", "plug:alpha", 20, "skills"],
      ["/other/skills/beta/SKILL.md", "skill-listing", "other:beta", 19, "skills"],
      ["/plug/commands/go.md", "command-listing", "plug:go", 14, "skills"],
      ["/plug/agents/pa.md", "agent-listing", "plug:pa", 38, "agents"],
      // "SessionStart:startup hook success: ready" and a blank line; the script's output is unknown
      ["/plug/hooks/hooks.json", "hook-context", undefined, 42, "hooks"],
    ],
  );
  // What invoking each skill and command, and spawning the agent, sends (the body "b\n").
  assert.deepEqual(
    doc.files.filter((f) => f.root === "plugin" && f.tier !== "always-on")
      .map((f) => [f.path.slice(base.length), f.loading, f.loaded_bytes]),
    [
      ["/plug/skills/alpha/SKILL.md", "invoked-skill", 2],
      ["/plug/agents/pa.md", "selected-agent", 1],
      ["/other/skills/beta/SKILL.md", "invoked-skill", 2],
      ["/plug/commands/go.md", "invoked-command", 2],
    ],
  );
  const hooks = plugin.find((f) => f.path.endsWith("/hooks.json"));
  assert.deepEqual([hooks?.limits, hooks?.fires], [["hook-runtime"], ["start-up"]]);
  // The plugin folder opened as a project: its layout lists nothing
  const asProject = clean(scan(["--root", "plug", "--loaded"], { cwd: base, env }));
  assert.deepEqual(
    asProject.files.filter((f) => f.tier === "always-on")
      .map((f) => [f.path.slice(base.length), f.loading, f.loaded_bytes, ...(f.limits ?? [])]),
    [
      ["/plug/CLAUDE.md", "startup-instruction", 12],
      ["/plug/agents/pa.md", "agent-listing", 0, "not-loaded"],
      ["/plug/skills/alpha/SKILL.md", "skill-listing", 0, "not-loaded"],
    ],
  );
  // without --loaded (or --observe) the flag would change nothing: a usage error, exit 2
  const plain = scan(["--root", "proj", "--plugin-dir", "plug"], { cwd: base, env });
  assert.equal(plain.stderr, "❌ --plugin-dir needs --observe or --loaded\n❌ FAILED EXIT:2\n");
  const bad = scan(["--root", "proj", "--loaded", "--plugin-dir", "nope"], { cwd: base, env });
  assert.equal(bad.stderr, "❌ not a directory: nope\n❌ FAILED EXIT:2\n");
  assert.equal(bad.code, 2);
  const missing = scan(["--plugin-dir"], { cwd: base, env });
  assert.equal(missing.stderr, "❌ --plugin-dir needs a value\n❌ FAILED EXIT:2\n");
});

Deno.test("--loaded: files Claude Code never reads are not-loaded; one it reads that sends nothing has no limit", () => {
  const base = makeTempDir("ctxkit-layout-");
  writeTree(base, {
    "proj/CLAUDE.md": "  \n\n",
    "proj/rules/top.md": "a top-level rules folder\n",
    "cfg/.claude/rules/g.md": "the global root's .claude/rules\n",
    "cfg/rules/g.md": "a global rule\n",
  });
  const env = { HOME: `${base}/home`, CLAUDE_CONFIG_DIR: `${base}/cfg` };
  const doc = clean(scan(["--root", "proj", "--global", "--loaded"], { cwd: base, env }));
  assert.deepEqual(loaded(doc.files, base), [
    "proj/CLAUDE.md file 0",
    "proj/rules/top.md file 0 not-loaded",
    "cfg/.claude/rules/g.md file 0 not-loaded", // rules of one root: one byte-sorted list
    "cfg/rules/g.md file 13",
  ]);
});

Deno.test("--loaded without --global: the global skills still count toward the listing budget", () => {
  const base = makeTempDir("ctxkit-budget-global-");
  writeTree(base, {
    "proj/.claude/skills/p/SKILL.md": `---\ndescription: ${"p".repeat(300)}\n---\nb\n`,
    "cfg/skills/g/SKILL.md": `---\ndescription: ${"g".repeat(800)}\n---\nb\n`,
  });
  const env = {
    HOME: `${base}/home`,
    CLAUDE_CONFIG_DIR: `${base}/cfg`,
    SLASH_COMMAND_TOOL_CHAR_BUDGET: "7000",
  };
  const listing = (args: string[]) =>
    clean(scan(["--root", "proj", "--loaded", ...args], { cwd: base, env })).files
      .filter((f) => f.loading === "skill-listing")
      .map((f) => [f.name, f.loaded_bytes, ...(f.limits ?? [])]);
  // The global skill comes first in the listing and keeps its description; p is cut to its name.
  assert.deepEqual(listing([]), [["p", 4, "listing-budget"]]);
  assert.deepEqual(listing(["--global"]), [["p", 4, "listing-budget"], ["g", 806]]);
});
