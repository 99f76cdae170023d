/**
 * Differential fixtures of instruction files, imports, rules and auto-memory
 * (`references/context-scan.md#loading-rules`).
 *
 * @module
 */
import { chain, type Fixture, git, lines, memory, PNG } from "./_diff.ts";

/** Fixtures of the instruction-file rules. */
export const TEXT_FIXTURES: Fixture[] = [
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
];
