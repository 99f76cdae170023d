/**
 * `--format table` at 80 columns on names that differ only where a middle cut would fall
 * (`references/context-scan.md#table-report`): two skills whose folders end alike
 * (`subagent-driven-development`, `test-driven-development`, as in obra/superpowers) and two
 * plugins with an agent file of the same name (`kubernetes-architect.md`, as in wshobson/agents).
 * Every row of the heaviest list prints its own text, with the name that tells it apart, and no
 * line is wider than the terminal.
 */
import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "./_helpers.ts";
import { scan } from "./context_scan_fixtures.ts";

const OK = "✅ EXIT:0\n";

/** A body of `n` bytes. */
function body(n: number): string {
  return "x".repeat(n - 1) + "\n";
}

/** A skill folder with a description and a body of `bytes`. */
function skill(name: string, bytes: number): string {
  return `---\nname: ${name}\ndescription: Use when ${name.replaceAll("-", " ")} applies.\n---\n${
    body(bytes)
  }`;
}

/** An agent with a long description, so its listing row is among the heaviest. */
function agent(name: string, plugin: string): string {
  return `---\nname: ${name}\ndescription: ${
    `Expert ${name} of the ${plugin} plugin. `.repeat(8).trim()
  }\n---\n${body(600)}`;
}

/** The heaviest-rows section of a report, header and blank line excluded. */
function heaviestRows(report: string): string[] {
  const lines = report.split("\n");
  const start = lines.findIndex((l) => l.startsWith("HEAVIEST "));
  const end = lines.findIndex((l, i) => i > start && l === "");
  return lines.slice(start + 2, end);
}

Deno.test("--format table at COLUMNS=80: colliding skill and plugin agent names print distinct rows", () => {
  const base = makeTempDir("ctxkit-table-names-");
  const root = `${base}/superpowers-like`;
  writeTree(root, {
    "CLAUDE.md": "# Project\n",
    ".claude/skills/subagent-driven-development/SKILL.md": skill(
      "subagent-driven-development",
      28_000,
    ),
    ".claude/skills/test-driven-development/SKILL.md": skill("test-driven-development", 9_000),
    ".claude/skills/test-driven-development/references/testing-anti-patterns.md": body(8_000),
    ".claude/skills/subagent-driven-development/references/testing-anti-patterns.md": body(7_000),
  });
  const plugins = ["cloud-infrastructure", "kubernetes-operations"];
  for (const plugin of plugins) {
    writeTree(`${base}/plugins/${plugin}`, {
      ".claude-plugin/plugin.json": JSON.stringify({ name: plugin }),
      "agents/kubernetes-architect.md": agent("kubernetes-architect", plugin),
    });
  }
  const r = scan(
    [
      "--root",
      root,
      ...plugins.flatMap((p) => ["--plugin-dir", `${base}/plugins/${p}`]),
      "--loaded",
      "--format",
      "table",
    ],
    { env: { HOME: makeTempDir("ctxkit-table-home-"), COLUMNS: "80" } },
  );
  assert.equal(r.stderr, OK);
  for (const line of r.stdout.split("\n")) assert.ok([...line].length <= 80, line);
  const rows = heaviestRows(r.stdout);
  const text = rows.join("\n");
  // Each row's name is whole: the skill folder with its SKILL.md, the plugin with its agent file.
  for (
    const name of [
      "subagent-driven-development/SKILL.md",
      "test-driven-development/SKILL.md",
      "subagent-driven-development/references/testing-anti-patterns.md",
      "test-driven-development/references/testing-anti-patterns.md",
      "cloud-infrastructure/agents/kubernetes-architect.md [listing]",
      "kubernetes-operations/agents/kubernetes-architect.md [listing]",
    ]
  ) assert.ok(text.includes(name), `${name} in\n${text}`);
  // No two rows print the same path text (a wrapped row's path is the line below its figures).
  const paths = rows.map((l) => l.trim().split(/\s{2,}/).at(-1)!).filter((p) => /[/.]/.test(p));
  assert.equal(new Set(paths).size, paths.length, text);
});
