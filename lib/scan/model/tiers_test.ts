import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "../../../tests/_helpers.ts";
import { loadingModel } from "../claude_model.ts";
import {
  argumentWords,
  invocationText,
  readResult,
  splitClaudeFrontmatter,
  withShellDisabled,
} from "./invocation.ts";
import { accessProbe, globExample, onAccessText } from "./on_access.ts";
import { agentSpawn, hasSkillTool } from "./spawn.ts";
import { tierModel } from "./tiers.ts";

Deno.test("splitClaudeFrontmatter: Claude Code's pattern — first --- anywhere, whitespace after it goes", () => {
  assert.deepEqual(splitClaudeFrontmatter("---\nd: x\n---\n\n  body\n"), {
    yaml: "d: x\n",
    body: "body\n",
  });
  assert.equal(splitClaudeFrontmatter("---\nd: a---b\n---\nrest\n").body, "b\n---\nrest\n");
  assert.equal(splitClaudeFrontmatter("\uFEFF---\nd: x\n---\nB\n").body, "B\n");
  assert.equal(splitClaudeFrontmatter("--- \nd: x\n---  \nB\n").body, "B\n");
  assert.equal(splitClaudeFrontmatter("---\r\nd: x\r\n---\r\n\r\nB\r\n").body, "B\r\n");
  for (const none of ["\n\nplain\n", "---\nunclosed\n", "--- x\n---\n", "---"]) {
    assert.equal(splitClaudeFrontmatter(none).body, none, JSON.stringify(none));
    assert.equal(splitClaudeFrontmatter(none).yaml, undefined);
  }
  // Linear on a long run of whitespace after the opening fence and no closing one.
  const long = `---${" \n".repeat(200_000)}x`;
  assert.equal(splitClaudeFrontmatter(long).yaml, undefined);
});

Deno.test("invocationText: no arguments — $ARGUMENTS and named ones empty, $N kept, variables filled", () => {
  const ctx = { skillDir: "/p/.claude/skills/s", projectDir: "/p" };
  const text = (body: string, fm = "d: x\n") => invocationText(`---\n${fm}---\n${body}`, ctx).text;
  assert.equal(text("A $ARGUMENTS B $0 C $ARGUMENTS[1] D\n"), "A  B $0 C $ARGUMENTS[1] D\n");
  assert.equal(text("$alpha-$beta $alphabet\n", "arguments: alpha beta\n"), "- $alphabet\n");
  assert.equal(text("\\$ARGUMENTS $$ARGUMENTS\n"), "$ARGUMENTS $\n");
  assert.equal(
    text("${CLAUDE_SKILL_DIR} ${CLAUDE_PROJECT_DIR} ${CLAUDE_EFFORT}\n"),
    "/p/.claude/skills/s /p medium\n",
  );
  assert.equal(text("${CLAUDE_EFFORT}\n", "effort: high\n"), "high\n");
  assert.equal(text("${CLAUDE_SESSION_ID}").length, 36);
  // A value holding `$` is never read as a placeholder.
  const dollar = invocationText("---\nd: x\n---\n${CLAUDE_SKILL_DIR} $ARGUMENTS\n", {
    skillDir: "/p/$ARGUMENTS",
    projectDir: "/p",
  });
  assert.equal(dollar.text, "/p/$ARGUMENTS \n");
  assert.equal(dollar.frontmatterStripped, true);
});

Deno.test("invocationText: with arguments — shell-split words, named ones, the ARGUMENTS line", () => {
  const ctx = { projectDir: "/p" };
  const file = "---\narguments: [alpha, beta]\n---\n$ARGUMENTS|$0|$2|$ARGUMENTS[1]|$alpha|$beta\n";
  assert.equal(invocationText(file, ctx, 'x "y z" w').text, 'x "y z" w|x|w|y z|x|y z\n');
  assert.equal(
    invocationText("No placeholder\n", ctx, "p q").text,
    "No placeholder\n\n\nARGUMENTS: p q",
  );
  assert.deepEqual(argumentWords(`'one two' three "a\\"b" c\\ d`), [
    "one two",
    "three",
    'a"b',
    "c d",
  ]);
  assert.deepEqual(argumentWords('unbalanced "quote'), ["unbalanced", '"quote']);
});

Deno.test("withShellDisabled: inline commands at a word start and ```! fences, not inside code spans", () => {
  const off = "[shell command execution disabled by policy]";
  assert.equal(
    withShellDisabled("A !`echo x` B `!`y`` C\n```!\nls\n```\nD `code !`z``\n"),
    `A ${off} B \`!\`y\`\` C\n${off}\nD \`code !\`z\`\`\n`,
  );
  assert.equal(withShellDisabled("a!`x` stays"), "a!`x` stays");
  const shell = invocationText("---\nd: x\n---\n!`date`\n", { projectDir: "/p" });
  assert.deepEqual([shell.text, shell.shell], [`${off}\n`, true]);
});

Deno.test("readResult: numbered lines, a CR before a newline dropped, an empty file's warning", () => {
  assert.equal(readResult("a\nb\n"), "1\ta\n2\tb\n3\t");
  assert.equal(readResult("no newline"), "1\tno newline");
  assert.equal(readResult("a\r\nb\r"), "1\ta\n2\tb\r");
  assert.match(
    readResult(""),
    /^<system-reminder>Warning: the file exists but the contents are empty/,
  );
});

Deno.test("agentSpawn: body trimmed after the frontmatter; tools, skills, model; the Skill tool", () => {
  const a = agentSpawn(
    "---\nname: a\ntools: Read, Skill\nskills:\n  - x\n  - y\nmodel: haiku\n---\n\n  Be brief.  \n\n",
  );
  assert.deepEqual(a, {
    body: "Be brief.",
    frontmatterStripped: true,
    tools: ["Read", "Skill"],
    skills: ["x", "y"],
    model: "haiku",
  });
  assert.equal(hasSkillTool(a), true);
  assert.equal(hasSkillTool(agentSpawn("---\ntools: Read\n---\nx\n")), false);
  assert.equal(hasSkillTool(agentSpawn("---\nname: all\n---\nx\n")), true);
  assert.equal(
    agentSpawn(
      "---\nname: p\n---\n${CLAUDE_PLUGIN_ROOT} ${CLAUDE_PLUGIN_DATA} ${CLAUDE_PROJECT_DIR}\n",
      {
        root: "/plug",
        data: "/g/plugins/data/p-inline",
        project: "/p",
      },
    ).body,
    "/plug /g/plugins/data/p-inline /p",
  );
  assert.equal(
    agentSpawn("---\nname: p\n---\n${CLAUDE_PROJECT_DIR}\n").body,
    "${CLAUDE_PROJECT_DIR}",
  );
  assert.equal(agentSpawn("---\nname: e\n---\n").body, "");
});

Deno.test("onAccessText: frontmatter out, comments hidden (CRs then newlines), untrimmed; blank sends nothing", () => {
  assert.equal(onAccessText("---\npaths: a/**\n---\n\n<!-- x -->\n  Rule\n\n").text, "  Rule\n\n");
  assert.equal(onAccessText("crlf\r\nkept\r\n").text, "crlf\r\nkept\r\n");
  assert.equal(onAccessText("a\r\n<!-- c -->\r\nb\r\n").text, "a\nb\n");
  assert.equal(onAccessText("\n\nleading kept\n").text, "\n\nleading kept\n");
  for (const blank of ["  \n\t\n", "<!-- only -->\n", "---\na: b\n---\n"]) {
    assert.equal(onAccessText(blank).sends, false, JSON.stringify(blank));
  }
  assert.deepEqual(onAccessText("see @x.md `@y.md`\n").imports, ["x.md"]);
});

Deno.test("globExample: a concrete path each glob form matches", () => {
  const cases: [string, string][] = [
    ["src/**", "src/ctxkit-observe-probe/ctxkit-observe-probe"],
    ["**/*.ts", "ctxkit-observe-probe/ctxkit-observe-probe.ts"],
    ["*.{ts,tsx}", "ctxkit-observe-probe.ts"],
    ["docs/[ab]?.md", "docs/ax.md"],
    ["lib/[!x]*", "lib/_ctxkit-observe-probe"],
    ["./api/", "api/ctxkit-observe-probe/ctxkit-observe-probe"],
    ["/abs/file.md", "abs/file.md"],
    ["a/{b,{c,d}}/e", "a/b/e"],
  ];
  for (const [glob, example] of cases) assert.equal(globExample(glob), example, glob);
  assert.equal(
    accessProbe({
      path: "/p/x",
      root: "project",
      kind: "instruction",
      base: "/p/sub",
      globs: [],
      bytes: 0,
      limits: new Set(),
    }),
    "/p/sub/ctxkit-observe-probe",
  );
});

Deno.test("tierModel: every listed skill, command and agent, user-only skills and commands, on-access sources", () => {
  const base = makeTempDir("ctxkit-tiers-model-");
  writeTree(base, {
    "p/CLAUDE.md": "top @imported.md\n",
    "p/imported.md": "imported at start-up\n",
    "p/.claude/skills/s/SKILL.md": "---\ndescription: s\n---\nS body\n",
    "p/.claude/skills/manual/SKILL.md":
      "---\ndescription: m\ndisable-model-invocation: true\n---\nM\n",
    "p/.claude/skills/fork/SKILL.md": "---\ndescription: f\ncontext: fork\n---\nF\n",
    "p/.claude/commands/c.md": "---\ndescription: c\n---\nC\n",
    // Any case of 1, true, yes or on, as the listing reads it; a command may be user-only too.
    "p/.claude/skills/shout/SKILL.md":
      "---\ndescription: y\ndisable-model-invocation: YES\n---\nY\n",
    "p/.claude/commands/uc.md": "---\ndescription: u\ndisable-model-invocation: on\n---\nUC\n",
    "p/.claude/agents/a.md": "---\nname: a\ndescription: a\ntools: Read\n---\nA\n",
    "p/.claude/rules/r.md": "---\npaths: src/**\n---\nR\n",
    "p/src/CLAUDE.md": "src @../imported.md @inner.md\n",
    "p/src/inner.md": "inner\n",
    "g/rules/u.md": "---\npaths: lib/**\n---\nU\n",
  });
  const roots = {
    project: `${base}/p`,
    global: `${base}/g`,
    includeGlobal: true,
    home: undefined,
    pluginDirs: [],
  };
  const tiers = tierModel(roots, loadingModel(roots), [`${base}/p/src/CLAUDE.md`]);
  const rel = (p: string) => p.slice(base.length + 1);
  assert.deepEqual(
    [...tiers.invocations.values()].map((
      f,
    ) => [rel(f.path), f.kind, f.name, f.bytes, f.modelInvocable, f.forked]),
    [
      ["p/.claude/skills/fork/SKILL.md", "skill", "fork", 2, true, true],
      ["p/.claude/skills/s/SKILL.md", "skill", "s", 7, true, false],
      ["p/.claude/commands/c.md", "command", "c", 2, true, false],
      ["p/.claude/skills/manual/SKILL.md", "skill", "manual", 2, false, false],
      ["p/.claude/skills/shout/SKILL.md", "skill", "shout", 2, false, false],
      ["p/.claude/commands/uc.md", "command", "uc", 3, false, false],
    ],
  );
  assert.deepEqual([...tiers.spawns.values()].map((f) => [f.name, f.bytes, f.skillTool]), [[
    "a",
    1,
    false,
  ]]);
  // Imports already loaded at start-up are not sent again.
  assert.deepEqual(
    tiers.onAccess.map((
      s,
    ) => [rel(s.path), s.kind, s.bytes, s.globs, s.importedBy && rel(s.importedBy)]),
    [
      ["g/rules/u.md", "rule", 2, ["lib/**"], undefined],
      ["p/.claude/rules/r.md", "rule", 2, ["src/**"], undefined],
      ["p/src/CLAUDE.md", "instruction", 30, [], undefined],
      ["p/src/inner.md", "import", 6, [], "p/src/CLAUDE.md"],
    ],
  );
});
