/**
 * The differential suite of `--loaded` (`references/context-scan.md#loading-rules`): every fixture
 * the tests build is scanned with `--global --loaded` and observed with the pinned Claude Code
 * (inside a fresh network namespace, tests/_claude.ts); every instruction source and every skill,
 * command and agent listing entry must agree within 2 bytes or 1 %, and no source may appear on
 * one side only. Claude Code's own built-in skills and agents are what an empty fixture lists;
 * they are subtracted (and the model's built-in listing figure is checked against them).
 *
 * Real public repositories are checked too, as a project and as a `--plugin-dir`, when
 * `CTXKIT_REAL_REPOS` names a folder holding them as `<owner>+<name>` (fetched there beforehand;
 * never committed). Skips, with the reason, where no namespace can be made or Claude Code cannot
 * be installed.
 */
import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "./_helpers.ts";
import { observedClaude, observeFixture } from "./_claude.ts";
import { createLoadingStep } from "../lib/scan/loading.ts";
import { scanRoots } from "../lib/scan/scan.ts";
import { loadingModel } from "../lib/scan/claude_model.ts";
import type { ObservedRequest } from "../lib/scan/observe/request.ts";
import type { ScanDocument } from "../lib/scan/schema.ts";
import { LISTING_BUDGET, LOADING_RULES } from "../lib/scan/loading_rules.ts";

type Files = Record<string, string | Uint8Array>;

/** One fixture: files below a temp base (`proj/` is the project, `cfg/` the config, `home/`). */
interface Fixture {
  readonly name: string;
  readonly files: (base: string) => Files;
  /** The project folder below the base (default `proj`). */
  readonly cwd?: string;
  /** `--plugin-dir` folders below the base. */
  readonly pluginDirs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly setup?: (base: string) => void;
  /** Run SessionStart hooks in the observation (default: off, as `--observe` runs). */
  readonly hooks?: boolean;
}

/** Claude Code's project folder name, written out here independently of the model. */
const slug = (path: string) => {
  const s = path.replace(/[^A-Za-z0-9]/g, "-");
  if (s.length <= 200) return s;
  let h = 0;
  for (const unit of path.split("")) h = ((h << 5) - h + unit.charCodeAt(0)) | 0;
  return `${s.slice(0, 200)}-${Math.abs(h).toString(36)}`;
};
const memory = (base: string, project = "proj") =>
  `cfg/projects/${slug(`${base}/${project}`)}/memory`;
const lines = (n: number, line: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => `${line(i)}\n`).join("");
const skills = (n: number, length: number, at = "proj/.claude/skills") =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `${at}/s${String(i).padStart(3, "0")}/SKILL.md`,
      `---\ndescription: ${"d".repeat(length)}\n---\nbody\n`,
    ]),
  );
const chain = (names: string[], dir = "proj") =>
  Object.fromEntries(
    names.map((
      n,
      i,
    ) => [`${dir}/${n}.md`, `${n}\n${i + 1 < names.length ? `@${names[i + 1]}.md` : ""}\n`]),
  );
const PNG = new Uint8Array([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  0,
  0,
  0,
  13,
  1,
  2,
  0,
  255,
]);
const git = (dir: string) =>
  new Deno.Command("git", { args: ["init", "-q", dir], stdout: "null", stderr: "null" })
    .outputSync();

const plugin = (dir: string, name?: string): Files => ({
  ...(name === undefined
    ? {}
    : { [`${dir}/.claude-plugin/plugin.json`]: JSON.stringify({ name }) }),
  [`${dir}/skills/zeta/SKILL.md`]: "---\nname: zeta\ndescription: Zeta plugin skill\n---\nb\n",
  [`${dir}/skills/alpha/SKILL.md`]:
    "---\ndescription: Alpha plugin skill\nwhen_to_use: when\n---\nb\n",
  [`${dir}/skills/off/SKILL.md`]: "---\ndescription: off\ndisable-model-invocation: true\n---\nb\n",
  [`${dir}/commands/pc.md`]: "---\ndescription: plugin command\n---\nb\n",
  [`${dir}/commands/nodesc.md`]: "no description\n",
  [`${dir}/agents/pa.md`]: "---\nname: pa\ndescription: plugin agent\ntools: Read\n---\nb\n",
  [`${dir}/hooks/hooks.json`]: JSON.stringify({
    hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo from-hook" }] }] },
  }),
  [`${dir}/hooks/lib/inject.mjs`]: 'export const REMINDER_TEXT = "never sent";\n',
  [`${dir}/CLAUDE.md`]: "the plugin's own CLAUDE.md\n",
});

const FIXTURES: Fixture[] = [
  { name: "instruction-files", files: () => ({ "proj/CLAUDE.md": "# Project\nUse pnpm.\n" }) },
  {
    name: "frontmatter",
    files: () => ({
      "proj/CLAUDE.md": "---\ntitle: x\ntags: [a, b]\n---\n# Body\n",
      "proj/.claude/CLAUDE.md": "---\nunclosed: fence\nkept\n",
    }),
  },
  {
    name: "comments-block",
    files: () => ({
      "proj/CLAUDE.md":
        "# P\n<!-- block -->\n<!-- c --> after\npara\n<!-- interrupts -->\nnext\n<!--\nmulti\nline\n-->\nend\n<!-- c1 --> mid <!-- c2 -->\n",
    }),
  },
  {
    name: "comments-kept",
    files: () => ({
      "proj/CLAUDE.md":
        "text <!-- inline --> kept\n\n```\n<!-- in fence -->\n```\n\n<details>\n<!-- in details -->\n</details>\n\n    <!-- indented code -->\n\nx <!-- unclosed inline\n\n<!-- unclosed block\nrest\n",
    }),
  },
  {
    name: "comments-blank-lines",
    files: () => ({ "proj/CLAUDE.md": "a\n\n<!-- x -->\n\n\nb\n\n  <!-- indented 2 -->\n\nc\n" }),
  },
  {
    name: "whitespace-bom-crlf",
    files: () => ({
      "proj/CLAUDE.md": "\uFEFF\n\n   leading\r\nsecond line   \r\n\n\n",
      "proj/.claude/rules/tabs.md": "\t\ttabbed\n\t\n",
    }),
  },
  {
    name: "whitespace-only",
    files: () => ({
      "proj/CLAUDE.md": "real\n",
      "proj/.claude/CLAUDE.md": "   \n\n",
      "proj/CLAUDE.local.md": "<!-- only a comment -->\n",
      "proj/.claude/rules/fm-only.md": "---\nname: x\n---\n",
    }),
  },
  {
    name: "dot-claude-and-local",
    files: () => ({
      "proj/.claude/CLAUDE.md": "dot claude\n",
      "proj/CLAUDE.local.md": "local notes\n",
      "proj/.claude/rules/r.md": "rule text\n",
    }),
  },
  {
    name: "parents",
    files: () => ({
      "CLAUDE.md": "grandparent-level\n",
      ".claude/CLAUDE.md": "parent dot claude\n",
      ".claude/rules/pr.md": "parent rule\n",
      "CLAUDE.local.md": "parent local\n",
      "proj/CLAUDE.md": "project\n",
    }),
  },
  {
    name: "subdirectory",
    files: () => ({
      "proj/CLAUDE.md": "top\n",
      "proj/sub/CLAUDE.md": "subdirectory: on access only\n",
      "proj/sub/.claude/rules/x.md": "sub rule\n",
    }),
  },
  {
    name: "layout-not-loaded",
    files: (b) => ({
      "proj/CLAUDE.md": "x\n",
      "proj/rules/top.md": "top-level rules folder\n",
      "proj/.claude/memory/MEMORY.md": "project memory folder\n",
      "proj/.claude/convention/naming.txt": "convention\n",
      "cfg/CLAUDE.local.md": "global local\n",
      "cfg/.claude/rules/gg.md": "global dot claude rules\n",
      "cfg/.claude/CLAUDE.md": "global dot claude\n",
      [`cfg/projects/${`${b}/proj`.replaceAll("/", "-")}x/memory/MEMORY.md`]: "another slug\n",
    }),
  },
  {
    name: "agents-md-alone",
    files: () => ({
      "proj/AGENTS.md": "\n  agents md\n@more.md\n",
      "proj/more.md": "---\na: 1\n---\nmore\n",
    }),
  },
  {
    name: "agents-md-shadowed",
    files: () => ({ "proj/AGENTS.md": "unused\n", "proj/CLAUDE.md": "claude\n" }),
  },
  {
    name: "agents-md-shadowed-by-local",
    files: () => ({
      "proj/AGENTS.md": "unused\n",
      "proj/CLAUDE.local.md": "local\n",
      "cfg/CLAUDE.md": "g\n",
    }),
  },
  { name: "agents-md-parent", files: () => ({ "AGENTS.md": "parent agents\n", "proj/.keep": "" }) },
  {
    name: "agents-md-both",
    files: () => ({
      "proj/AGENTS.md": "a\n",
      "proj/.claude/AGENTS.md": "b\n",
      "proj/.claude/rules/r.md": "r\n",
    }),
  },
  {
    name: "imports-basic",
    files: () => ({
      "proj/CLAUDE.md": "see @a.md and @a.md#section\n@dir/b.md @c1.md\n",
      "proj/a.md": "a text\n",
      "proj/dir/b.md": "b text @../a.md\n",
      "proj/c1.md": "c1\n@c2.md\n",
      "proj/c2.md": "c2\n@c1.md\n@CLAUDE.md\n",
    }),
  },
  {
    name: "imports-code",
    files: () => ({
      "proj/CLAUDE.md":
        "`@span.md` ``@span2.md``\n\n```\n@fence.md\n```\n\n    @indented.md\n\n<details>\n@html.md\n</details>\n\n@real.md\n",
      "proj/span.md": "x\n",
      "proj/span2.md": "x\n",
      "proj/fence.md": "x\n",
      "proj/indented.md": "x\n",
      "proj/html.md": "x\n",
      "proj/real.md": "real import\n",
    }),
  },
  {
    name: "imports-punctuation",
    files: () => ({
      "proj/CLAUDE.md":
        "see @a.md, then (@b.md) and @c.md.\n- @d.md in a list\n# @e.md in a heading\n> @f.md quoted\n| @g.md | cell |\n|---|---|\n@h\\ i.md escaped\n",
      ...Object.fromEntries(
        ["a", "b", "c", "d", "e", "f", "g"].map((n) => [`proj/${n}.md`, `${n}\n`]),
      ),
      "proj/h i.md": "escaped space\n",
    }),
  },
  {
    name: "import-depth",
    files: () => ({ "proj/CLAUDE.md": "@a.md\n", ...chain(["a", "b", "c", "d", "e", "f"]) }),
  },
  {
    name: "rule-imports",
    files: () => ({
      "proj/.claude/rules/r.md": "rule\n@../../docs/x.md\n",
      "proj/docs/x.md": "doc x\n@y.md\n",
      "proj/docs/y.md": "doc y\n",
    }),
  },
  {
    name: "import-external",
    files: (b) => ({
      "pimp.md": "outside the project\n",
      "abs.md": "absolute outside\n",
      "home/h.md": "home file\n",
      "proj/CLAUDE.md": `@../pimp.md\n@${b}/abs.md\n@~/h.md\n@${b}/proj/inside.md\n`,
      "proj/inside.md": "inside by absolute path\n",
      "cfg/CLAUDE.md": "global\n@gimp.md\n@~/h.md\n@../abs.md\n",
      "cfg/gimp.md": "global import\n",
    }),
  },
  {
    name: "import-binary",
    files: () => ({
      "proj/CLAUDE.md": "@img.png @missing.md @dir\n@f.txt @noext @f.json @f.sh @F.MD\n",
      "proj/img.png": PNG,
      "proj/dir/x.md": "in a directory\n",
      "proj/f.txt": "txt\n",
      "proj/noext": "no extension\n",
      "proj/f.json": '{"j": 1}\n',
      "proj/f.sh": "echo\n",
      "proj/F.MD": "upper case\n",
    }),
  },
  {
    name: "import-extensions",
    files: () => {
      const exts = ["xyz", "rs", "toml", "lock", "svg", "j2", "markdown", "mdx", "ts", "PY"];
      return {
        "proj/CLAUDE.md": `${
          exts.map((e) => `@f.${e}`).join(" ")
        } @.hidden @Makefile @x.tar.gz @a.md,\n`,
        ...Object.fromEntries(exts.map((e) => [`proj/f.${e}`, `ext ${e}\n`])),
        "proj/.hidden": "hidden\n",
        "proj/Makefile": "make\n",
        "proj/x.tar.gz": "gz\n",
        "proj/a.md,": "with the comma\n",
      };
    },
  },
  {
    name: "rules-star-forms",
    files: () => ({
      "proj/.claude/rules/twice.md": '---\npaths: "**, **"\n---\ntwice\n',
      "proj/.claude/rules/root.md": '---\npaths: "/**"\n---\nslash star star\n',
      "proj/.claude/rules/empty.md": '---\npaths: ""\n---\nempty paths\n',
      "proj/.claude/rules/none.md": "---\npaths: []\n---\nno globs\n",
      "proj/.claude/rules/dir.md": '---\npaths: "src/**"\n---\nscoped dir\n',
      "proj/.claude/rules/braces.md": '---\npaths: "{a,b}/**, **"\n---\nbraces\n',
    }),
  },
  {
    name: "paths-outside-rules",
    files: () => ({
      "proj/CLAUDE.md": "---\npaths: src/**\n---\nclaude md with paths\n@imp.md\n",
      "proj/imp.md": "---\npaths: lib/**\n---\nimported with paths\n",
      "proj/CLAUDE.local.md": '---\npaths: "**"\n---\nlocal with star\n',
    }),
  },
  {
    name: "rules-scoped",
    files: () => ({
      "proj/.claude/rules/scoped.md": "---\npaths: src/**\n---\nscoped\n",
      "proj/.claude/rules/two.md": '---\npaths: ["**", "src/**"]\n---\ntwo globs\n',
      "proj/.claude/rules/slash.md": '---\npaths: "**/*"\n---\nstar slash star\n',
      "proj/.claude/rules/plain.md": "plain rule\n",
    }),
  },
  {
    name: "rules-star",
    files: () => ({
      "proj/.claude/rules/star.md": '---\npaths: "**"\n---\nstar rule\n',
      "proj/.claude/rules/list.md": '---\npaths:\n  - "**"\n---\nlist star\n',
      "proj/.claude/rules/a/b/nested.md": "nested rule\n",
    }),
  },
  {
    name: "rule-imported-first",
    files: () => ({
      "proj/CLAUDE.md": "@.claude/rules/r.md\n@.claude/rules/scoped.md\n",
      "proj/.claude/rules/r.md": "rule once\n",
      "proj/.claude/rules/scoped.md": "---\npaths: src/**\n---\nimported scoped rule\n",
    }),
  },
  {
    name: "global-files",
    files: () => ({
      "cfg/CLAUDE.md": "global instructions\n",
      "cfg/rules/g.md": "global rule\n",
      "cfg/rules/sub/g2.md": "---\npaths: x/**\n---\nscoped global rule\n",
    }),
  },
  {
    name: "memory-basic",
    files: (b) => ({
      [`${memory(b)}/MEMORY.md`]: "- [topic](topic.md)\n",
      [`${memory(b)}/topic.md`]: "a topic, on demand\n",
    }),
  },
  {
    name: "memory-lines",
    files: (b) => ({ [`${memory(b)}/MEMORY.md`]: lines(300, (i) => `- note ${i}`) }),
  },
  {
    name: "memory-utf16",
    files: (b) => ({ [`${memory(b)}/MEMORY.md`]: lines(50, (i) => `${i} ${"é".repeat(700)}`) }),
  },
  {
    name: "memory-astral",
    files: (b) => ({ [`${memory(b)}/MEMORY.md`]: lines(50, (i) => `${i} ${"🌱".repeat(400)}`) }),
  },
  {
    name: "memory-long-line",
    files: (b) => ({ [`${memory(b)}/MEMORY.md`]: `${"x".repeat(30000)}\nsecond\n` }),
  },
  {
    name: "memory-lines-and-size",
    files: (b) => ({ [`${memory(b)}/MEMORY.md`]: lines(250, (i) => `${i} ${"y".repeat(200)}`) }),
  },
  {
    name: "memory-excerpt",
    files: (b) => ({
      [`${memory(b)}/MEMORY.md`]: lines(
        210,
        (i) => `${i} ${"abcdefghij".repeat(i === 200 ? 30 : 1)}`,
      ),
    }),
  },
  {
    name: "memory-frontmatter-comments",
    files: (b) => ({
      [`${memory(b)}/MEMORY.md`]:
        "---\nname: x\n---\n<!-- block -->\nline <!-- inline --> kept\n<!--\nmulti\n-->\nend\n",
    }),
  },
  {
    name: "memory-slug",
    cwd: "my_proj.v2 x",
    files: (b) => ({
      [`${memory(b, "my_proj.v2 x")}/MEMORY.md`]: "slugged\n",
      "my_proj.v2 x/CLAUDE.md": "p\n",
    }),
  },
  {
    name: "memory-slug-astral",
    cwd: "pröj🌱",
    files: (b) => ({ [`${memory(b, "pröj🌱")}/MEMORY.md`]: "astral slug\n" }),
  },
  {
    name: "memory-slug-long",
    cwd: `deep/${"d".repeat(120)}/${"e".repeat(120)}`,
    files: (b) => {
      const cwd = `deep/${"d".repeat(120)}/${"e".repeat(120)}`;
      // Only the memory file: a wrong folder name would leave both sides empty, which fails below.
      return { [`${memory(b, cwd)}/MEMORY.md`]: "long slug\n", [`${cwd}/.keep`]: "" };
    },
  },
  {
    name: "memory-git-root",
    cwd: "repo/sub",
    setup: (b) => git(`${b}/repo`),
    files: (b) => ({
      "repo/CLAUDE.md": "repo top\n",
      "repo/sub/CLAUDE.md": "sub\n",
      [`${memory(b, "repo")}/MEMORY.md`]: "repo memory\n",
      [`${memory(b, "repo/sub")}/MEMORY.md`]: "not this one\n",
      "repo/.claude/skills/rs/SKILL.md": "---\ndescription: repo skill\n---\nb\n",
    }),
  },
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
      // Descriptions of different lengths, so the one listed is told apart beyond the tolerance.
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

/** One side's sources: `memory-files` by path, listing entries by name. */
interface Sides {
  memory: Map<string, number>;
  skills: Map<string, number>;
  agents: Map<string, number>;
  /** Claude Code's built-in skills listed by name only (over the budget). */
  builtinsCut: string[];
  /** Hooks' context: all of it as one source (`hooks`), when there is any. */
  hooks: Map<string, number>;
}

/** A listing's heading part (its label is `heading`, which a skill may be named too). */
function isHeading(text: string): boolean {
  return text.startsWith("The following skills") || text.startsWith("Available agent types");
}

function observedSides(request: ObservedRequest, builtin: Sides): Sides {
  const sides: Sides = {
    memory: new Map(),
    skills: new Map(),
    agents: new Map(),
    builtinsCut: [],
    hooks: new Map(),
  };
  for (const p of request.parts) {
    if (p.category === "memory-files" && p.path !== undefined) sides.memory.set(p.path, p.bytes);
    // SessionStart hooks' output (it opens the system-role message; request.ts makes it `hooks`).
    if (p.category === "hooks") sides.hooks.set("hooks", (sides.hooks.get("hooks") ?? 0) + p.bytes);
    if ((p.category === "skills" || p.category === "agents") && !isHeading(p.text)) {
      const map = p.category === "skills" ? sides.skills : sides.agents;
      const own = (p.category === "skills" ? builtin.skills : builtin.agents).get(p.label);
      if (own === undefined) map.set(p.label, p.bytes);
      else if (own !== p.bytes) sides.builtinsCut.push(p.label); // a built-in the budget cut
    }
  }
  return sides;
}

function scannedSides(doc: ScanDocument, builtinsCut: readonly string[] = []): Sides {
  const sides: Sides = {
    memory: new Map(),
    skills: new Map(),
    agents: new Map(),
    builtinsCut: [],
    hooks: new Map(),
  };
  sides.builtinsCut.push(...builtinsCut);
  for (const row of doc.files) {
    if (row.tier !== "always-on" || (row.loaded_bytes ?? 0) === 0) continue;
    if (row.category === "memory-files") sides.memory.set(row.path, row.loaded_bytes!);
    if (row.category === "skills") sides.skills.set(row.name ?? row.path, row.loaded_bytes!);
    if (row.category === "agents") sides.agents.set(row.name ?? row.path, row.loaded_bytes!);
    if (row.category === "hooks") {
      sides.hooks.set("hooks", (sides.hooks.get("hooks") ?? 0) + row.loaded_bytes!);
    }
  }
  return sides;
}

function agree(a: number, b: number): boolean {
  return Math.abs(a - b) <= 2 || Math.abs(a - b) <= 0.01 * Math.max(a, b);
}

/** The sources both sides have whose sizes differ at all (within the tolerance or not). */
function inexact(observed: Sides, scanned: Sides): string[] {
  const out: string[] = [];
  for (const group of ["memory", "skills", "agents", "hooks"] as const) {
    for (const [k, v] of observed[group]) {
      const mine = scanned[group].get(k);
      if (mine !== undefined && mine !== v) out.push(`${group} ${k}: ${v} vs ${mine}`);
    }
  }
  return out;
}

/** Every disagreement between the two sides, one line each (empty: they agree). */
function disagreements(observed: Sides, scanned: Sides): string[] {
  const out: string[] = [];
  for (const group of ["memory", "skills", "agents", "hooks"] as const) {
    const o = observed[group];
    const s = scanned[group];
    for (const [k, v] of o) {
      if (!s.has(k)) out.push(`${group} ${k}: Claude Code ${v} bytes, ctxkit none`);
      else if (!agree(v, s.get(k)!)) {
        out.push(`${group} ${k}: Claude Code ${v}, ctxkit ${s.get(k)}`);
      }
    }
    for (const [k, v] of s) {
      if (!o.has(k)) out.push(`${group} ${k}: ctxkit ${v} bytes, Claude Code none`);
    }
  }
  if (observed.builtinsCut.join() !== scanned.builtinsCut.join()) {
    out.push(
      `built-ins cut: Claude Code [${observed.builtinsCut}], ctxkit [${scanned.builtinsCut}]`,
    );
  }
  return out;
}

interface Built {
  base: string;
  root: string;
  home: string;
  configDir: string;
  pluginDirs: string[];
}

function build(fixture: Fixture): Built {
  const base = makeTempDir(`ctxkit-diff-`);
  for (const d of ["proj", "cfg", "home"]) Deno.mkdirSync(`${base}/${d}`, { recursive: true });
  writeTree(base, fixture.files(base));
  const root = `${base}/${fixture.cwd ?? "proj"}`;
  Deno.mkdirSync(root, { recursive: true });
  fixture.setup?.(base);
  return {
    base,
    root,
    home: `${base}/home`,
    configDir: `${base}/cfg`,
    pluginDirs: (fixture.pluginDirs ?? []).map((p) => `${base}/${p}`),
  };
}

/**
 * The `--global --loaded` scan of a built fixture, in-process (same rules as the CLI), as sides;
 * the built-ins the model cuts come from the model itself (they have no row).
 */
function scanned(built: Built, env: Readonly<Record<string, string>> = {}): Sides {
  const options = {
    home: built.home,
    pluginDirs: built.pluginDirs,
    budgetOverride: env.SLASH_COMMAND_TOOL_CHAR_BUDGET,
  };
  const doc = scanRoots({ project: built.root, global: built.configDir }, {
    global: true,
    loaded: true,
  }, createLoadingStep(options)).document;
  const model = loadingModel({
    project: built.root,
    global: built.configDir,
    includeGlobal: true,
    ...options,
  });
  return scannedSides(doc, model.builtinsCut);
}

async function observed(
  claude: string,
  built: Built,
  env: Readonly<Record<string, string>> = {},
  hooks = false,
) {
  return (await observeFixture(claude, {
    root: built.root,
    home: built.home,
    configDir: built.configDir,
    pluginDirs: built.pluginDirs,
    env,
    hooks,
  })).request;
}

/** Run `tasks` two at a time (the machine is shared; one observation is ~1 s). */
async function pooled<T>(tasks: (() => Promise<T>)[], width = 2): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]();
      }
    }),
  );
  return results;
}

let baseline: Promise<Sides> | undefined;

/** What an empty fixture lists: Claude Code's built-in skills and agents. */
function builtins(claude: string): Promise<Sides> {
  baseline ??= (async () => {
    const empty = build({ name: "empty", files: () => ({}) });
    const request = await observed(claude, empty);
    const none: Sides = {
      memory: new Map(),
      skills: new Map(),
      agents: new Map(),
      builtinsCut: [],
      hooks: new Map(),
    };
    return observedSides(request, none);
  })();
  return baseline;
}

Deno.test("differential: every rule names fixtures that exist, and every fixture observes a rule", () => {
  const names = FIXTURES.map((f) => f.name);
  const matches = (pattern: string, name: string) =>
    pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : name === pattern;
  const covered = new Set<string>();
  for (const rule of LOADING_RULES) {
    for (const pattern of rule.test.split(", ")) {
      const hit = names.filter((n) => matches(pattern, n));
      assert.ok(hit.length > 0, `${rule.rule.slice(0, 40)}…: no fixture ${pattern}`);
      for (const n of hit) covered.add(n);
    }
  }
  assert.deepEqual(names.filter((n) => !covered.has(n)), []);
  assert.equal(new Set(names).size, names.length, "fixture names are unique");
});

Deno.test("differential: an empty fixture lists only Claude Code's built-ins, as the model counts them", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const empty = await builtins(claude);
  assert.equal(empty.memory.size, 0);
  const { builtin } = LISTING_BUDGET;
  assert.equal(empty.skills.size, builtin.entries + builtin.competing.length);
  const request = await observed(claude, build({ name: "empty", files: () => ({}) }));
  const entries = request.parts.filter((p) => p.category === "skills" && !isHeading(p.text));
  // The last ones compete for the budget; the others stay whole.
  const competing = entries.slice(entries.length - builtin.competing.length);
  assert.deepEqual(
    competing.map((p) => ({ name: p.label, chars: p.text.length - 1 })),
    builtin.competing,
  );
  const fixed = entries.slice(0, entries.length - builtin.competing.length);
  assert.equal(fixed.reduce((n, p) => n + p.text.length - 1, 0), builtin.chars);
  const none = scanned(build({ name: "empty", files: () => ({}) }));
  assert.deepEqual([none.memory.size, none.skills.size, none.agents.size], [0, 0, 0]);
});

Deno.test(`differential: ${FIXTURES.length} fixtures agree with the pinned Claude Code, source by source`, async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  assert.ok(FIXTURES.length >= 40, "at least 40 fixtures");
  const builtin = await builtins(claude);
  // CTXKIT_DIFF_ONLY=a,b runs only those fixtures (while working on a rule).
  const only = Deno.env.get("CTXKIT_DIFF_ONLY")?.split(",");
  const chosen = FIXTURES.filter((f) => only === undefined || only.includes(f.name));
  const results = await pooled(chosen.map((fixture) => async () => {
    const built = build(fixture);
    const s = scanned(built, fixture.env);
    const request = await observed(claude, built, fixture.env, fixture.hooks);
    const o = observedSides(request, builtin);
    if (!fixture.hooks) s.hooks.clear(); // the observation ran no hook, as --observe by default
    const size = o.memory.size + o.skills.size + o.agents.size + o.hooks.size;
    return {
      name: fixture.name,
      size,
      inexact: inexact(o, s).map((l) => l.replaceAll(built.base, "")),
      problems: disagreements(o, s).map((l) => l.replaceAll(built.base, "")),
    };
  }));
  const sources = results.reduce((n, r) => n + r.size, 0);
  const off = results.flatMap((r) => r.inexact.map((l) => `${r.name}: ${l}`));
  console.log(`${sources} sources compared, ${sources - off.length} byte for byte`);
  for (const line of off) console.log(`  within tolerance only: ${line}`);
  const failures = results.filter((r) => r.problems.length > 0);
  assert.deepEqual(
    failures.map((r) => `${r.name}:\n  ${r.problems.join("\n  ")}`),
    [],
    `${failures.length} of ${results.length} fixtures disagree`,
  );
  // Every fixture but the ones about what does not load compares at least one source.
  const empty = results.filter((r) => r.size === 0).map((r) => r.name);
  assert.deepEqual(empty, ["subdirectory", "plugin-as-project"].filter((n) => empty.includes(n)));
});

/** The real repositories under `CTXKIT_REAL_REPOS` (`<owner>+<name>` folders), or the skip reason. */
function realRepos(): string[] | string {
  const dir = Deno.env.get("CTXKIT_REAL_REPOS");
  if (dir === undefined || dir === "") {
    return "CTXKIT_REAL_REPOS is not set (a folder of <owner>+<name> checkouts, fetched beforehand)";
  }
  try {
    const repos = [...Deno.readDirSync(dir)].filter((e) => e.isDirectory && e.name.includes("+"))
      .map((e) => `${dir}/${e.name}`).sort();
    return repos.length > 0 ? repos : `no <owner>+<name> folder in ${dir}`;
  } catch (e) {
    return `CTXKIT_REAL_REPOS cannot be read: ${e}`;
  }
}

/**
 * The plugins a repository holds: the folders (itself, or one level down, as a marketplace
 * repository keeps them) with a `.claude-plugin/plugin.json`; the repository itself when none.
 */
function pluginsOf(repo: string): string[] {
  const has = (dir: string) => {
    try {
      return Deno.statSync(`${dir}/.claude-plugin/plugin.json`).isFile;
    } catch {
      return false;
    }
  };
  if (has(repo)) return [repo];
  const below = [...Deno.readDirSync(repo)].filter((e) => e.isDirectory && has(`${repo}/${e.name}`))
    .map((e) => `${repo}/${e.name}`).sort();
  return below.length > 0 ? below : [repo];
}

Deno.test("differential: real public repositories, as a project and as a --plugin-dir", async () => {
  const repos = realRepos();
  if (typeof repos === "string") {
    console.log(`SKIP: ${repos}`);
    return;
  }
  const claude = await observedClaude();
  if (claude === undefined) return;
  const builtin = await builtins(claude);
  const problems: string[] = [];
  for (const repo of repos) {
    const base = makeTempDir("ctxkit-real-");
    for (const d of ["proj", "cfg", "home"]) Deno.mkdirSync(`${base}/${d}`);
    const asProject: Built = {
      base,
      root: repo,
      home: `${base}/home`,
      configDir: `${base}/cfg`,
      pluginDirs: [],
    };
    const asPlugin: Built = { ...asProject, root: `${base}/proj`, pluginDirs: pluginsOf(repo) };
    for (const [how, built] of [["project", asProject], ["plugin", asPlugin]] as const) {
      const o = observedSides(await observed(claude, built), builtin);
      const s = scanned(built);
      s.hooks.clear(); // observed without hooks: a plugin's hook output is not compared
      for (const line of disagreements(o, s)) problems.push(`${repo} as ${how}: ${line}`);
      for (const line of inexact(o, s)) console.log(`  within tolerance only: ${line}`);
      console.log(
        `${
          repo.slice(repo.lastIndexOf("/") + 1)
        } as ${how}: ${o.memory.size} instruction sources, ${o.skills.size} skill and command entries, ${o.agents.size} agents compared`,
      );
    }
  }
  assert.deepEqual(problems, []);
});
