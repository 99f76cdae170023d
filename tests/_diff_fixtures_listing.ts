/**
 * Differential fixtures of the skill, command and agent listings, the budget and `--plugin-dir`
 * (`references/context-scan.md#loading-rules`).
 *
 * @module
 */
import { type Fixture, lines, memory, plugin, skills } from "./_diff.ts";

/** Fixtures of the listing rules. */
export const LISTING_FIXTURES: Fixture[] = [
  {
    name: "skills-basic",
    files: () => ({
      "proj/.claude/skills/dir-a/SKILL.md":
        "---\nname: named-a\ndescription: Desc A\nwhen_to_use: When A\n---\nbody\n",
      "proj/.claude/skills/same/SKILL.md": "---\nname: same\ndescription: Same name\n---\nbody\n",
      "cfg/skills/gs/SKILL.md": "---\ndescription: global skill\n---\nx\n",
    }),
  },
  {
    name: "skills-no-description",
    files: () => ({
      "proj/.claude/skills/heading/SKILL.md": "---\nname: heading\n---\n# Title\n\nFirst para\n",
      "proj/.claude/skills/nofm/SKILL.md": "\nJust text first\nmore\n\nsecond\n",
      "proj/.claude/skills/whenonly/SKILL.md": "---\nwhen_to_use: only when\n---\nbody text\n",
      "proj/.claude/skills/empty/SKILL.md": '---\ndescription: ""\n---\nbody para\n',
    }),
  },
  {
    name: "skills-long",
    files: () => ({
      "proj/.claude/skills/long/SKILL.md": `---\ndescription: ${"word ".repeat(400)}\n---\nb\n`,
      "proj/.claude/skills/long2/SKILL.md": `---\ndescription: ${
        "é".repeat(1600)
      }\nwhen_to_use: w\n---\nb\n`,
      "proj/.claude/skills/exact/SKILL.md": `---\ndescription: ${"e".repeat(1536)}\n---\nb\n`,
    }),
  },
  {
    name: "skills-disabled",
    files: () => ({
      "proj/.claude/skills/manual/SKILL.md":
        "---\ndescription: by hand\ndisable-model-invocation: true\n---\nb\n",
      "proj/.claude/skills/hidden/SKILL.md":
        "---\ndescription: not user invocable\nuser-invocable: false\n---\nb\n",
    }),
  },
  {
    name: "skills-yaml",
    files: () => ({
      "proj/.claude/skills/block/SKILL.md": "---\ndescription: |\n  line one\n  line two\n---\nb\n",
      "proj/.claude/skills/folded/SKILL.md":
        "---\ndescription: >\n  fold one\n  fold two\n---\nb\n",
      "proj/.claude/skills/quoted/SKILL.md": '---\ndescription: "quoted: with colon"\n---\nb\n',
      "proj/.claude/skills/single/SKILL.md": "---\ndescription: 'it''s single'\n---\nb\n",
      "proj/.claude/skills/plainmulti/SKILL.md": "---\ndescription: plain\n  continued\n---\nb\n",
    }),
  },
  {
    name: "skills-outside-layout",
    files: () => ({
      "proj/.claude/skills/a/b/SKILL.md": "---\ndescription: nested too deep\n---\nb\n",
      "proj/sub/.claude/skills/subskill/SKILL.md": "---\ndescription: in a subdirectory\n---\nb\n",
      "proj/tools/skills/demo/SKILL.md": "---\ndescription: a plugin layout skill\n---\nb\n",
      "home/.claude/skills/hs/SKILL.md": "---\ndescription: HOME is not the config dir\n---\nb\n",
      "proj/.claude/skills/ok/SKILL.md": "---\ndescription: the one listed\n---\nb\n",
    }),
  },
  {
    name: "commands",
    files: () => ({
      "proj/.claude/commands/deploy.md": "---\ndescription: Deploy cmd\n---\nbody\n",
      "proj/.claude/commands/nodesc.md": "\n# Run the thing\nsecond line\n",
      "proj/.claude/commands/clash.md": "---\ndescription: hidden by the skill\n---\nx\n",
      "proj/.claude/skills/clash/SKILL.md": "---\ndescription: the skill wins\n---\nx\n",
      "proj/.claude/commands/ns/inner.md": "---\ndescription: inner cmd\n---\nx\n",
      "proj/.claude/commands/manualcmd.md":
        "---\ndescription: m\ndisable-model-invocation: true\n---\nx\n",
      "proj/.claude/commands/notmd.txt": "x\n",
      "cfg/commands/gcmd.md": "---\ndescription: global cmd\nwhen_to_use: sometimes\n---\nx\n",
    }),
  },
  { name: "budget-150", files: () => skills(150, 430) },
  { name: "budget-60", files: () => skills(60, 430) },
  { name: "budget-capped", files: () => skills(20, 2000) },
  {
    name: "budget-env",
    env: { SLASH_COMMAND_TOOL_CHAR_BUDGET: "7800" },
    files: () =>
      Object.fromEntries(
        Array.from({ length: 10 }, (_, i) => [
          `proj/.claude/skills/s${i}/SKILL.md`,
          `---\ndescription: ${"x".repeat(100 + i * 50)}\n---\nb\n`,
        ]),
      ),
  },
  {
    name: "budget-builtins",
    env: { SLASH_COMMAND_TOOL_CHAR_BUDGET: "100" },
    files: () => ({ "proj/.claude/skills/u/SKILL.md": "---\ndescription: user\n---\n" }),
  },
  {
    name: "budget-global-first",
    env: { SLASH_COMMAND_TOOL_CHAR_BUDGET: "7000" },
    files: () => ({
      "proj/.claude/skills/p/SKILL.md": `---\ndescription: ${"p".repeat(300)}\n---\nb\n`,
      "cfg/skills/g/SKILL.md": `---\ndescription: ${"g".repeat(800)}\n---\nb\n`,
    }),
  },
  {
    name: "budget-greedy",
    files: () => ({
      ...skills(50, 450),
      "proj/.claude/skills/t000/SKILL.md": `---\ndescription: ${"big ".repeat(380)}\n---\nb\n`,
      "proj/.claude/skills/t001/SKILL.md": "---\ndescription: small after a big one\n---\nb\n",
      "proj/.claude/commands/zz.md": "---\ndescription: a command at the end\n---\nb\n",
    }),
  },
  {
    name: "agents",
    files: () => ({
      "proj/.claude/agents/rev.md":
        "---\nname: rev\ndescription: Reviews\ntools: Read, Grep\n---\nx\n",
      "proj/.claude/agents/all.md": "---\nname: alltools\ndescription: All tools agent\n---\nx\n",
      "proj/.claude/agents/dis.md":
        "---\nname: dis\ndescription: Disallowed\ndisallowedTools: Write, Edit\n---\nx\n",
      "proj/.claude/agents/noname.md": "---\ndescription: no name\n---\nx\n",
      "proj/.claude/agents/nodesc.md": "---\nname: nodescagent\n---\nx\n",
      "proj/.claude/agents/sub/nested.md":
        "---\nname: nested\ndescription: nested agent\ntools: [Read]\n---\nx\n",
      "proj/.claude/agents/multi.md": "---\nname: multi\ndescription: |\n  multi\n  line\n---\nx\n",
      "proj/tools/agents/helper.md": "---\nname: helper\ndescription: outside the layout\n---\nx\n",
      "cfg/agents/gagent.md": "---\nname: gagent\ndescription: global agent\n---\nx\n",
    }),
  },
  {
    name: "agents-yaml",
    files: () => ({
      "proj/.claude/agents/list.md":
        '---\nname: list\ndescription: "Quoted: description"\ntools:\n  - Read\n  - Grep\n---\nx\n',
      "proj/.claude/agents/folded.md": "---\nname: folded\ndescription: >\n  one\n  two\n---\nx\n",
      "proj/.claude/agents/astral.md": "---\nname: astral\ndescription: 🌱 grows\n---\nx\n",
    }),
  },
  {
    name: "skills-astral-cut",
    files: () => ({
      "proj/.claude/skills/astral/SKILL.md": `---\ndescription: a${"🌱".repeat(900)}\n---\nb\n`,
      "proj/.claude/skills/spaces/SKILL.md": "---\ndescription:   lots    of\t\tspace   \n---\nb\n",
      "proj/.claude/skills/mixed/SKILL.md":
        '---\ndescription: "a \\n b\\t \\tc  \\r\\n d"\n---\nb\n',
      "proj/.claude/skills/paras/SKILL.md":
        "---\ndescription: |\n  line   one\n\n  para two\n---\nb\n",
    }),
  },
  {
    name: "name-clashes",
    files: () => ({
      // Descriptions of different lengths, so the bytes tell which one is listed.
      "cfg/skills/dup/SKILL.md": "---\ndescription: global\n---\nb\n",
      "proj/.claude/skills/dup/SKILL.md":
        "---\ndescription: the project skill of that name\n---\nb\n",
      "cfg/agents/a.md": "---\nname: dupagent\ndescription: global\n---\nb\n",
      "proj/.claude/agents/a.md":
        "---\nname: dupagent\ndescription: the project agent of that name\n---\nb\n",
      "cfg/commands/dupcmd.md": "---\ndescription: global\n---\nb\n",
      "proj/.claude/commands/dupcmd.md":
        "---\ndescription: the project command of that name\n---\nb\n",
      ".claude/skills/dup2/SKILL.md": "---\ndescription: parent\n---\nb\n",
      "proj/.claude/skills/dup2/SKILL.md":
        "---\ndescription: the project skill over its parent's\n---\nb\n",
    }),
  },
  {
    name: "parents-layout",
    files: () => ({
      ".claude/skills/ps/SKILL.md": "---\ndescription: parent skill\n---\nb\n",
      ".claude/agents/pa.md": "---\nname: pa\ndescription: parent agent\n---\nb\n",
      ".claude/commands/pcmd.md": "---\ndescription: parent cmd\n---\nb\n",
      "proj/.keep": "",
    }),
  },
  { name: "plugin-as-project", files: () => plugin("proj", "plug") },
  {
    name: "plugin-dir",
    pluginDirs: ["plug"],
    files: () => ({
      ...plugin("plug", "plug"),
      "proj/.claude/skills/mine/SKILL.md": "---\ndescription: mine\n---\nb\n",
      "cfg/commands/a.md": "---\ndescription: c\n---\nb\n",
    }),
  },
  {
    name: "plugin-dir-two",
    pluginDirs: ["p1", "folder-name"],
    files: () => ({ ...plugin("p1", "first"), ...plugin("folder-name") }),
  },
  {
    name: "plugin-hooks-static",
    pluginDirs: ["plug"],
    hooks: true,
    files: () => ({
      "plug/.claude-plugin/plugin.json": JSON.stringify({ name: "plug" }),
      "plug/hooks/hooks.json": JSON.stringify({
        hooks: {
          SessionStart: [
            {
              matcher: "startup|clear",
              hooks: [{ type: "command", command: "echo 'static context line'" }],
            },
            { matcher: "resume", hooks: [{ type: "command", command: "echo not at startup" }] },
          ],
        },
      }),
    }),
  },
  {
    name: "plugin-names",
    pluginDirs: ["plug"],
    files: () => ({
      "plug/.claude-plugin/plugin.json": JSON.stringify({ name: "plug" }),
      "plug/skills/gamma/SKILL.md": "---\nname: other-name\ndescription: named apart\n---\nb\n",
      "plug/commands/ns/deep.md": "---\ndescription: nested plugin command\n---\nb\n",
      "plug/agents/sub/a.md": "---\nname: nested-agent\ndescription: in a subfolder\n---\nb\n",
    }),
  },
  {
    name: "links",
    setup: (b) => {
      Deno.symlinkSync(`${b}/shared/CLAUDE.md`, `${b}/proj/CLAUDE.md`);
      Deno.mkdirSync(`${b}/proj/.claude/skills`, { recursive: true });
      Deno.symlinkSync(`${b}/shared/skill`, `${b}/proj/.claude/skills/linked`);
      Deno.symlinkSync(`${b}/shared/imp.md`, `${b}/proj/imp.md`);
      Deno.symlinkSync(`${b}/shared/out.md`, `${b}/proj/.claude/rules/out.md`);
      Deno.symlinkSync(`${b}/proj/docs/in.md`, `${b}/proj/.claude/rules/in.md`);
      Deno.mkdirSync(`${b}/cfg/rules`, { recursive: true });
      Deno.symlinkSync(`${b}/shared/g.md`, `${b}/cfg/rules/g.md`);
    },
    files: () => ({
      "shared/CLAUDE.md": "through a link\n@imp.md @local.md\n",
      "shared/imp.md": "imported through a link\n",
      "proj/local.md": "beside the link, not its target\n",
      "shared/skill/SKILL.md": "---\ndescription: a linked skill folder\n---\nb\n",
      "proj/.claude/rules/r.md": "rule @out.md\n",
      "shared/out.md": "linked out of the project\n",
      "proj/docs/in.md": "a rule linked inside the project\n",
      "shared/g.md": "a linked global rule\n",
    }),
  },
  {
    name: "combined",
    pluginDirs: ["plug"],
    files: (b) => ({
      ...plugin("plug", "plug"),
      "CLAUDE.md": "parent\n",
      "proj/CLAUDE.md": "---\nx: 1\n---\n# P\n<!-- hidden -->\n@docs/a.md `@no.md`\n",
      "proj/docs/a.md": "a\n@b.md\n",
      "proj/docs/b.md": "b\n",
      "proj/.claude/rules/r.md": "rule @../../docs/c.md\n",
      "proj/docs/c.md": "c\n",
      "proj/.claude/rules/scoped.md": "---\npaths: src/**\n---\nno\n",
      "proj/AGENTS.md": "shadowed\n",
      [`${memory(b)}/MEMORY.md`]: lines(220, (i) => `- m${i}`),
      ...skills(40, 600),
      "proj/.claude/agents/rev.md": "---\nname: rev\ndescription: Reviews\ntools: Read\n---\nx\n",
      "cfg/CLAUDE.md": "global\n",
    }),
  },
];
