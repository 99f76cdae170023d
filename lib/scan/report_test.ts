// deno-lint-ignore-file no-control-regex -- the tests match ANSI colour escapes on purpose
import assert from "node:assert/strict";
import { buildDocument } from "./document.ts";
import { renderReport } from "./report.ts";
import type { ScanRow } from "./schema.ts";

const R = "/home/ana/demo";

function row(
  path: string,
  tier: ScanRow["tier"],
  bytes: number,
  loaded: number,
  extra: Partial<ScanRow> = {},
): ScanRow {
  return {
    path,
    root: "project",
    tier,
    kind: "file",
    bytes,
    tokens: Math.floor(bytes / 4),
    estimated: false,
    loading: "startup-instruction",
    loaded_bytes: loaded,
    loaded_tokens: Math.floor(loaded / 4),
    limits: [],
    ...extra,
  };
}

/** A document with every section filled: a long path, a name needing quotes, limits, an issue. */
function sample() {
  const rows: ScanRow[] = [
    row(`${R}/CLAUDE.md`, "always-on", 4_000, 9_000, {
      limits: ["frontmatter-stripped"],
      category: "memory-files",
    }),
    row(`${R}/.claude/rules/api/scoped.md`, "always-on", 2_000, 0, {
      loading: "path-scoped-rule",
      limits: ["path-scoped"],
      category: "memory-files",
      on_access_bytes: 1_200,
    }),
    row("/home/ana/.claude/projects/-home-ana-demo/memory/MEMORY.md", "always-on", 40_000, 25_000, {
      loading: "memory-index-limited",
      limits: ["memory-truncated"],
      category: "memory-files",
    }),
    row(
      `${R}/skills/a-skill-with-a-very-long-directory-name/SKILL.md`,
      "per-invocation",
      12_000,
      12_000,
      {
        loading: "invoked-skill",
      },
    ),
    row(`${R}/skills/a-skill-with-a-very-long-directory-name/SKILL.md`, "always-on", 3_000, 1_540, {
      kind: "field:description",
      loading: "skill-listing",
      limits: ["description-capped"],
      category: "skills",
      name: "a-skill-with-a-very-long-directory-name",
    }),
    row(`${R}/agents/new\nline.md`, "per-spawn", 800, 800, { loading: "selected-agent" }),
  ];
  const issues = [{
    root: "project" as const,
    path: `${R}/.claude/rules`,
    kind: "discovery-incomplete" as const,
    exit_status: 1,
    detail: `'${R}/.claude/rules/locked': Permission denied`,
  }];
  return buildDocument(R, null, "all", rows, issues, { loaded: true });
}

Deno.test("renderReport: 80 columns, no colour", () => {
  assert.equal(renderReport(sample(), { width: 80, color: false, home: "/home/ana" }), REPORT_80);
});

Deno.test("renderReport: 120 columns, no colour; every line fits", () => {
  const out = renderReport(sample(), { width: 120, color: false, home: "/home/ana" });
  assert.equal(out, REPORT_120);
  for (const width of [60, 80, 120, 200]) {
    const text = renderReport(sample(), { width, color: false });
    for (const line of text.split("\n")) assert.ok([...line].length <= width, `${width}: ${line}`);
  }
  assert.equal(
    renderReport(sample(), { width: 20, color: false }),
    renderReport(sample(), { width: 60, color: false }),
  );
});

Deno.test("renderReport: colour is ANSI SGR only, and stripping it gives the plain report", () => {
  const coloured = renderReport(sample(), { width: 80, color: true, home: "/home/ana" });
  assert.match(coloured, /\x1b\[1mcontext-scan ~\/demo\x1b\[0m/);
  assert.equal(coloured.replace(/\x1b\[[0-9]+m/g, ""), REPORT_80);
  const wide = renderReport(sample(), { width: 120, color: true, home: "/home/ana" });
  assert.match(wide, /\x1b\[33m█+\x1b\[0m/);
  assert.equal(wide.replace(/\x1b\[[0-9]+m/g, ""), REPORT_120);
});

Deno.test("renderReport: without loaded figures there are no LOADED column and no limits", () => {
  const doc = buildDocument(R, null, "always-on", [], []);
  const out = renderReport(doc, { width: 80, color: false });
  assert.equal(
    out,
    [
      "context-scan /home/ana/demo",
      "tier filter   always-on",
      "tokens = bytes/4 of whole files (potential inventory; --loaded models loading)",
      "",
      "TIER              FILES     TOKENS",
      "always-on             0          0",
      "per-spawn             0          0",
      "per-invocation        0          0",
      "total                 0          0",
      "",
      "HEAVIEST 0 ROWS (by potential tokens)",
      "  none",
      "",
      "SCAN ISSUES (0)",
      "  none: the inventory is complete",
      "",
    ].join("\n"),
  );
});

const REPORT_80 = `context-scan ~/demo
tokens = bytes/4; loaded = what Claude Code 2.1.332 sends (observed rules)

TIER              FILES     TOKENS     LOADED
always-on             4     12,250      8,885
per-spawn             1        200        200
per-invocation        1      3,000      3,000
total                 6     15,450     12,085

AT SESSION START, AS /context GROUPS IT
CATEGORY        SOURCES     LOADED
Memory files          2      8,500
Skills                1        385
Custom agents         0          0
Hooks' context        0          0
  (system prompt and tools: only --observe can see them)

HEAVIEST 6 ROWS (by loaded tokens)
     tokens   loaded  tier            path
     10,000    6,250  always-on       …/projects/-home-ana-demo/memory/MEMORY.md
      3,000    3,000  per-invocation
      skills/a-skill-with-a-very-long-directory-name/SKILL.md
      1,000    2,250  always-on       CLAUDE.md
        750      385  always-on
      skills/a-skill-with-a-very-long-directory-name/SKILL.md [listing]
        200      200  per-spawn       "agents/new\\nline.md"
        500        0  always-on       .claude/rules/api/scoped.md

LIMITS THAT FIRED
  description-capped        1  listing description cut at 1,536 characters
  frontmatter-stripped      1  YAML frontmatter not sent
  memory-truncated          1  MEMORY.md cut at 200 lines / 25,000 units
  path-scoped               1  loads when a matching file is read; 0 at start

WHEN IT LOADS (tokens: the model's, then what Claude Code sent)
      model  observed  source
      8,885         -  at start-up: the files' text (observed: whole request)
          -         -  with every prompt: 0 hook files (sized only when run)
  PER INVOCATION (skills and commands): 1 file, 3,000 tokens
      3,000         -  skills/a-skill-with-a-very-long-directory-name/SKILL.md
  PER SPAWN (agents): 1 file, 200 tokens
        200         -  "agents/new\\nline.md"
  ON ACCESS (rules and subfolders' files): 1 file, 300 tokens
        300         -  .claude/rules/api/scoped.md

SCAN ISSUES (1)
  .claude/rules
    '.claude/rules/locked': Permission denied
`;
const REPORT_120 = `context-scan ~/demo
tokens = bytes/4; loaded = what Claude Code 2.1.332 sends (observed rules)

TIER              FILES     TOKENS     LOADED
always-on             4     12,250      8,885
per-spawn             1        200        200
per-invocation        1      3,000      3,000
total                 6     15,450     12,085

AT SESSION START, AS /context GROUPS IT
CATEGORY        SOURCES     LOADED
Memory files          2      8,500
Skills                1        385
Custom agents         0          0
Hooks' context        0          0
  (system prompt and tools: only --observe can see them)

HEAVIEST 6 ROWS (by loaded tokens)
                 tokens   loaded  tier            path
  ████████████   10,000    6,250  always-on       ~/.claude/projects/-home-ana-demo/memory/MEMORY.md
  ██████          3,000    3,000  per-invocation  skills/a-skill-with-a-very-long-directory-name/SKILL.md
  ████            1,000    2,250  always-on       CLAUDE.md
  █                 750      385  always-on       skills/a-skill-with-a-very-long-directory-name/SKILL.md [listing]
  █                 200      200  per-spawn       "agents/new\\nline.md"
                    500        0  always-on       .claude/rules/api/scoped.md

LIMITS THAT FIRED
  description-capped        1  listing description cut at 1,536 characters
  frontmatter-stripped      1  YAML frontmatter not sent
  memory-truncated          1  MEMORY.md cut at 200 lines / 25,000 units
  path-scoped               1  loads when a matching file is read; 0 at start

WHEN IT LOADS (tokens: the model's, then what Claude Code sent)
      model  observed  source
      8,885         -  at start-up: the files' text (observed: whole request)
          -         -  with every prompt: 0 hook files (sized only when run)
  PER INVOCATION (skills and commands): 1 file, 3,000 tokens
      3,000         -  skills/a-skill-with-a-very-long-directory-name/SKILL.md
  PER SPAWN (agents): 1 file, 200 tokens
        200         -  "agents/new\\nline.md"
  ON ACCESS (rules and subfolders' files): 1 file, 300 tokens
        300         -  .claude/rules/api/scoped.md

SCAN ISSUES (1)
  .claude/rules
    '.claude/rules/locked': Permission denied
`;

/** An observation with one source per kind of line the observed section prints. */
function observed(): NonNullable<ReturnType<typeof sample>["observed"]> {
  const size = (bytes: number) => ({ bytes, tokens: Math.floor(bytes / 4) });
  return {
    claude_code_version: "2.1.328",
    sandboxed: true,
    layout_checked_on: ["2.1.328"],
    categories: {
      "system-prompt": size(7_000),
      tools: size(30_000),
      "memory-files": size(9_000),
      skills: size(1_600),
      agents: size(0),
      hooks: size(0),
      environment: size(1_000),
      messages: size(400),
      unattributed: size(0),
    },
    total: size(49_000),
    sources: [{
      category: "skills",
      kind: "skill",
      name: "a-skill-with-a-very-long-directory-name",
      path: `${R}/skills/a-skill-with-a-very-long-directory-name/SKILL.md`,
      built_in: false,
      ...size(1_540),
    }, {
      category: "memory-files",
      kind: "instruction",
      name: `${R}/CLAUDE.md`,
      path: `${R}/CLAUDE.md`,
      built_in: false,
      ...size(9_000),
    }],
    warnings: [],
  };
}

Deno.test("renderReport: under --observe the note that only --observe sees the system prompt is gone", () => {
  const note = "  (system prompt and tools: only --observe can see them)";
  const plain = renderReport(sample(), { width: 80, color: false });
  assert.ok(plain.split("\n").includes(note));
  const doc = { ...sample(), observed: observed() };
  const out = renderReport(doc, { width: 80, color: false, home: "/home/ana" });
  assert.ok(!out.includes("only --observe"), out);
  assert.ok(out.includes("OBSERVED START-UP CONTEXT (Claude Code 2.1.328, sandboxed"), out);
  // The listing name stays whole; its file follows as room allows, cut from the left.
  assert.ok(
    out.includes(
      "      385  skill         a-skill-with-a-very-long-directory-name (…/SKILL.md)",
    ),
    out,
  );
  for (const line of out.split("\n")) assert.ok([...line].length <= 80, line);
});

Deno.test("renderReport: a scan issue's long reason wraps at spaces, never cut mid-word", () => {
  const reason = "Instruction directory cannot be listed: the walk stopped at this folder and " +
    "every file below it is missing from the inventory";
  const doc = buildDocument(R, null, "all", [], [{
    root: "project",
    path: `${R}/.claude/rules`,
    kind: "discovery-incomplete",
    exit_status: 1,
    detail: reason,
  }]);
  const out = renderReport(doc, { width: 60, color: false });
  const lines = out.split("\n");
  const at = lines.indexOf("  .claude/rules");
  const wrapped = lines.slice(at + 1).filter((l) => l.startsWith("    "));
  assert.ok(wrapped.length >= 2, out);
  assert.equal(wrapped.map((l) => l.slice(4)).join(" "), reason);
  for (const line of wrapped) assert.ok([...line].length <= 60, line);
});
