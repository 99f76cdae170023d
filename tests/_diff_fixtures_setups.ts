/**
 * Differential fixtures of the setups users really have (`references/context-scan.md#loading-rules`):
 * installed plugins, several plugins and their manifests, settings (`claudeMdExcludes`, `env`,
 * hooks, `outputStyle`), the managed policy, a project opened through a link, git roots and
 * worktrees, and frontmatter as Claude Code reads it.
 *
 * @module
 */
import { enabling, type Files, type Fixture, installedLayout, memory } from "./_diff.ts";

const skill = (description: string) => `---\ndescription: ${description}\n---\nbody\n`;
const agent = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\nbody\n`;
const command = (description: string) => `---\ndescription: ${description}\n---\nbody\n`;
const run = (args: string[], cwd: string) => {
  const out = new Deno.Command("git", { args, cwd, stdout: "null", stderr: "piped" }).outputSync();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
};
const commitAll = (dir: string) => {
  run(["init", "-q", dir], "/");
  run(["add", "-A"], dir);
  run(["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"], dir);
};

/** A plugin's usual parts, labelled so every entry is told apart. */
const parts = (label: string): Files => ({
  "skills/s/SKILL.md": skill(`${label} skill`),
  "commands/c.md": command(`${label} command`),
  "agents/a.md": agent("a", `${label} agent`),
});

/** A plugin's `hooks/hooks.json` with one SessionStart hook that echoes `text`. */
const hook = (text: string): Files => ({
  "hooks/hooks.json": JSON.stringify({
    hooks: { SessionStart: [{ hooks: [{ type: "command", command: `echo ${text}` }] }] },
  }),
});

/** Fixtures of installed plugins, several plugins, settings, policy, paths and frontmatter. */
export const SETUP_FIXTURES: Fixture[] = [
  {
    name: "installed-plugins",
    files: (b) => ({
      ...installedLayout(b, {
        mk: {
          plugins: [
            {
              name: "on",
              files: {
                ...parts("on"),
                "hooks/hooks.json": JSON.stringify({
                  hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo hi" }] }] },
                }),
              },
            },
            { name: "off", files: parts("off") },
            { name: "unlisted", files: parts("unlisted") },
            { name: "notinstalled", files: parts("notinstalled"), notInstalled: true },
            {
              name: "elsewhere",
              files: parts("elsewhere"),
              record: { scope: "project", projectPath: `${b}/another` },
            },
            {
              name: "here",
              files: parts("here"),
              record: { scope: "local", projectPath: `${b}/proj` },
            },
          ],
        },
      }),
      "cfg/settings.json": enabling({
        "on@mk": true,
        "off@mk": false,
        "notinstalled@mk": true,
        "elsewhere@mk": true,
        "here@mk": true,
        "nomarket@gone": true,
      }),
    }),
  },
  {
    // An installed plugin's SessionStart hook injects like a --plugin-dir's; a disabled one's not.
    name: "installed-plugin-hooks",
    hooks: true,
    files: (b) => ({
      ...installedLayout(b, {
        mk: {
          plugins: [
            { name: "hooked", files: { ...parts("hooked"), ...hook("from an installed plugin") } },
            { name: "quiet", files: { ...parts("quiet"), ...hook("from a disabled plugin") } },
          ],
        },
      }),
      "cfg/settings.json": enabling({ "hooked@mk": true, "quiet@mk": false }),
    }),
  },
  {
    name: "installed-moved",
    files: (b) => ({
      ...installedLayout(b, {
        mk: {
          plugins: [
            // Recorded under another machine's config folder: read below this one's plugins/.
            {
              name: "moved",
              files: parts("moved"),
              installPath: "/home/someone-else/.claude/plugins/cache/mk/moved/1.0.0",
            },
            // Recorded outside any plugins/ folder: read where it is.
            { name: "outside", files: parts("outside-cache"), installPath: `${b}/outside` },
          ],
        },
      }),
      ...Object.fromEntries(Object.entries(parts("outside")).map(([k, v]) => [`outside/${k}`, v])),
      "outside/.claude-plugin/plugin.json": JSON.stringify({ name: "outside" }),
      "cfg/settings.json": enabling({ "moved@mk": true, "outside@mk": true }),
    }),
  },
  {
    name: "installed-settings",
    files: (b) => ({
      ...installedLayout(b, {
        mk: {
          plugins: [
            { name: "user", files: parts("user") },
            { name: "proj", files: parts("proj") },
            { name: "local", files: parts("local") },
            { name: "vetoed", files: parts("vetoed") },
          ],
        },
      }),
      "cfg/settings.json": enabling({ "user@mk": true, "vetoed@mk": true }),
      "proj/.claude/settings.json": enabling({ "proj@mk": true, "vetoed@mk": false }),
      "proj/.claude/settings.local.json": enabling({ "local@mk": true }),
    }),
  },
  {
    name: "installed-directory-marketplace",
    files: (b) => ({
      ...installedLayout(b, {
        dirmk: { source: "directory", plugins: [{ name: "d", files: parts("d") }] },
      }),
      // The cache copy Claude Code would have made: it reads the marketplace folder instead.
      "cfg/plugins/cache/dirmk/d/1.0.0/skills/s/SKILL.md": skill("a stale cache copy, not read"),
      "cfg/settings.json": enabling({ "d@dirmk": true }),
    }),
  },
  {
    name: "installed-root-source",
    files: (b) => ({
      ...installedLayout(b, {
        rootmk: {
          plugins: [
            {
              name: "listed",
              manifest: false,
              entry: { source: "./", strict: false, skills: ["./skills/b", "./skills/a"] },
              files: {
                "skills/a/SKILL.md": skill("a"),
                "skills/b/SKILL.md": skill("b"),
                "skills/c/SKILL.md": skill("c, not listed"),
              },
            },
            {
              name: "all",
              manifest: false,
              entry: { source: "./", strict: false },
              files: { "skills/a/SKILL.md": skill("a of all"), "skills/z/SKILL.md": skill("z") },
            },
            {
              name: "added",
              manifest: false,
              entry: { strict: false, skills: ["./extra/x"] },
              files: { "skills/y/SKILL.md": skill("y"), "extra/x/SKILL.md": skill("x") },
            },
          ],
        },
      }),
      "cfg/settings.json": enabling({
        "listed@rootmk": true,
        "all@rootmk": true,
        "added@rootmk": true,
      }),
    }),
  },
  {
    name: "installed-order",
    pluginDirs: ["dirp"],
    // Under the budget, who keeps a description is decided by the listing order.
    env: { SLASH_COMMAND_TOOL_CHAR_BUDGET: "7000" },
    files: (b) => ({
      ...installedLayout(b, {
        zmk: {
          plugins: [
            {
              name: "b",
              files: { ...parts("b".repeat(200)), "commands/d.md": command("d".repeat(300)) },
            },
            { name: "a", files: parts("a".repeat(200)) },
          ],
        },
        amk: { plugins: [{ name: "c", files: parts("c".repeat(200)) }] },
      }),
      "cfg/settings.json": enabling({ "b@zmk": true, "a@zmk": true }),
      "proj/.claude/settings.json": enabling({ "c@amk": true, "b@zmk": true }),
      "dirp/.claude-plugin/plugin.json": JSON.stringify({ name: "dirp" }),
      ...Object.fromEntries(
        Object.entries(parts("p".repeat(200))).map(([k, v]) => [`dirp/${k}`, v]),
      ),
      "proj/.claude/skills/own/SKILL.md": skill("o".repeat(300)),
    }),
  },
  {
    name: "plugin-manifest-agents-folder",
    pluginDirs: ["dropped", "kept"],
    files: () => ({
      "dropped/.claude-plugin/plugin.json": JSON.stringify({
        name: "dropped",
        agents: "./agents/",
      }),
      ...Object.fromEntries(Object.entries(parts("dropped")).map(([k, v]) => [`dropped/${k}`, v])),
      "kept/.claude-plugin/plugin.json": JSON.stringify({ name: "kept" }),
      ...Object.fromEntries(Object.entries(parts("kept")).map(([k, v]) => [`kept/${k}`, v])),
    }),
  },
  {
    name: "plugin-manifest-lists",
    pluginDirs: ["lists"],
    files: () => ({
      "lists/.claude-plugin/plugin.json": JSON.stringify({
        name: "lists",
        commands: ["./other/listed.md", "./more"],
        agents: ["./other/listed-agent.md"],
        skills: "./extra",
      }),
      ...Object.fromEntries(Object.entries(parts("default")).map(([k, v]) => [`lists/${k}`, v])),
      "lists/other/listed.md": command("listed command"),
      "lists/more/m.md": command("a command of a listed folder"),
      "lists/other/listed-agent.md": agent("listed-agent", "listed agent"),
      "lists/extra/x/SKILL.md": skill("extra skill"),
    }),
  },
  {
    name: "plugin-root-skill",
    pluginDirs: ["solo.v2"],
    files: () => ({
      "solo.v2/.claude-plugin/plugin.json": JSON.stringify({ name: "solo" }),
      "solo.v2/SKILL.md": skill("a plugin that is one skill"),
    }),
  },
  {
    name: "plugin-agent-folded",
    pluginDirs: ["fold"],
    files: () => ({
      "fold/.claude-plugin/plugin.json": JSON.stringify({ name: "fold" }),
      "fold/agents/f.md": "---\nname: f\ndescription: >\n  folded\n  lines\n---\nb\n",
      "fold/agents/l.md": "---\nname: l\ndescription: |\n  literal\n  lines\n---\nb\n",
      "proj/.claude/agents/f.md": "---\nname: pf\ndescription: >\n  folded\n  lines\n---\nb\n",
    }),
  },
  {
    name: "excludes",
    files: (b) => ({
      "CLAUDE.md": "parent, excluded by a glob\n",
      "proj/CLAUDE.md": "kept\n",
      "proj/CLAUDE.local.md": "local, excluded by a glob\n",
      "proj/.claude/rules/secret.md": "excluded by its absolute path\n",
      "proj/.claude/rules/kept.md": "kept rule\n",
      "cfg/CLAUDE.md": "global, excluded by the user's settings\n",
      "cfg/settings.json": JSON.stringify({ claudeMdExcludes: [`${b}/cfg/CLAUDE.md`] }),
      "proj/.claude/settings.json": JSON.stringify({
        claudeMdExcludes: [
          `${b}/CLAUDE.md`,
          "**/CLAUDE.local.md",
          `${b}/proj/.claude/rules/secret.md`,
        ],
      }),
    }),
  },
  {
    name: "settings-env-budget",
    env: { SLASH_COMMAND_TOOL_CHAR_BUDGET: "30000" },
    files: () => ({
      "proj/.claude/settings.json": JSON.stringify({
        env: { SLASH_COMMAND_TOOL_CHAR_BUDGET: "7400" },
      }),
      ...Object.fromEntries(
        Array.from({ length: 10 }, (_, i) => [
          `proj/.claude/skills/s${i}/SKILL.md`,
          skill("x".repeat(100 + i * 50)),
        ]),
      ),
    }),
  },
  {
    // The user's own settings: their env sets the budget, their outputStyle names a global style.
    name: "settings-user",
    files: () => ({
      "cfg/settings.json": JSON.stringify({
        env: { SLASH_COMMAND_TOOL_CHAR_BUDGET: "7400" },
        outputStyle: "Global",
      }),
      "cfg/output-styles/g.md": "---\nname: Global\ndescription: d\n---\nA global style.\n",
      ...Object.fromEntries(
        Array.from({ length: 10 }, (_, i) => [
          `proj/.claude/skills/s${i}/SKILL.md`,
          skill("y".repeat(100 + i * 50)),
        ]),
      ),
    }),
  },
  {
    name: "settings-hooks",
    hooks: true,
    files: () => ({
      "cfg/settings.json": JSON.stringify({
        hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo user plain" }] }] },
      }),
      "proj/.claude/settings.json": JSON.stringify({
        hooks: {
          SessionStart: [{
            matcher: "startup",
            hooks: [{
              type: "command",
              command:
                `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"project context"}}'`,
            }],
          }, { matcher: "resume", hooks: [{ type: "command", command: "echo not at startup" }] }],
        },
      }),
      "proj/.claude/settings.local.json": JSON.stringify({
        hooks: {
          SessionStart: [{
            hooks: [
              { type: "command", command: "echo local one" },
              { type: "command", command: "echo local two" },
            ],
          }],
          UserPromptSubmit: [{ hooks: [{ type: "command", command: "echo with every prompt" }] }],
        },
      }),
    }),
  },
  {
    name: "output-style",
    files: () => ({
      "proj/.claude/output-styles/terse.md":
        "---\nname: Terse\ndescription: short answers\n---\n\nBe terse.\nVery.\n\n",
      "proj/.claude/settings.json": JSON.stringify({ outputStyle: "Terse" }),
    }),
  },
  {
    name: "managed",
    managed: {
      "CLAUDE.md": "managed instructions\n@imported.md\n",
      "imported.md": "a managed import: not followed\n",
      ".claude/rules/policy.md": "a managed rule\n",
      ".claude/skills/ms/SKILL.md": skill("a managed skill"),
    },
    files: () => ({ "proj/CLAUDE.md": "project\n" }),
  },
  {
    name: "link-root",
    cwd: "elsewhere/link",
    setup: (b) => Deno.symlinkSync(`${b}/real/proj`, `${b}/elsewhere/link`),
    files: (b) => ({
      "elsewhere/CLAUDE.md": "the link's own parent: not loaded\n",
      "elsewhere/.claude/skills/ls/SKILL.md": skill("beside the link: not listed"),
      "real/CLAUDE.md": "the physical parent: loaded\n",
      "real/proj/CLAUDE.md": "project through a link\n",
      "real/.claude/skills/ps/SKILL.md": skill("the physical parent's skill"),
      [`${memory(b, "real/proj")}/MEMORY.md`]: "the physical path's memory\n",
      [`${memory(b, "elsewhere/link")}/MEMORY.md`]: "the link's slug: not read\n",
    }),
  },
  {
    name: "git-root-listing",
    cwd: "repo/sub",
    setup: (b) => commitAll(`${b}/repo`),
    files: () => ({
      "CLAUDE.md": "above the git root: still loaded\n",
      ".claude/rules/above.md": "a rule above the git root: still loaded\n",
      ".claude/skills/above/SKILL.md": skill("above the git root: not listed"),
      ".claude/commands/above.md": command("above the git root: not listed"),
      ".claude/agents/above.md": agent("above", "above the git root: not listed"),
      "repo/.claude/skills/top/SKILL.md": skill("at the git root: listed"),
      "repo/sub/.claude/skills/subskill/SKILL.md": skill("at the start: listed"),
      "repo/.claude/agents/top.md": agent("top", "at the git root"),
      "repo/sub/.keep": "",
    }),
  },
  {
    name: "worktree",
    cwd: "wt",
    setup: (b) => {
      commitAll(`${b}/main`);
      run(["worktree", "add", "-q", `${b}/wt`], `${b}/main`);
    },
    files: (b) => ({
      "main/CLAUDE.md": "main checkout\n",
      [`${memory(b, "main")}/MEMORY.md`]: "the main checkout's memory\n",
      [`${memory(b, "wt")}/MEMORY.md`]: "the worktree's own slug: not read\n",
    }),
  },
  {
    name: "worktree-nested",
    cwd: "main/.claude/worktrees/w",
    setup: (b) => {
      commitAll(`${b}/main`);
      Deno.writeTextFileSync(`${b}/main/CLAUDE.local.md`, "the main checkout's local file\n");
      run(["worktree", "add", "-q", `${b}/main/.claude/worktrees/w`], `${b}/main`);
    },
    files: () => ({
      "main/CLAUDE.md": "the main checkout's: not loaded in its nested worktree\n",
      "main/.claude/rules/r.md": "the main checkout's rule\n",
      "main/.claude/skills/ms/SKILL.md": skill("the main checkout's skill"),
      "main/.gitignore": "CLAUDE.local.md\n.claude/worktrees/\n",
    }),
  },
  {
    name: "yaml-duplicate-keys",
    files: () => ({
      "proj/.claude/skills/dup/SKILL.md":
        "---\ndescription: the first\ndescription: the last one wins\n---\nb\n",
      "proj/.claude/agents/dup.md":
        "---\nname: first\ndescription: d1\nname: dupagent\ndescription: the last\n---\nb\n",
      "proj/.claude/rules/dup.md":
        '---\npaths: src/**\npaths: "**"\n---\nthe last paths: everywhere\n',
    }),
  },
  {
    name: "rules-paths-quirks",
    files: () => ({
      "proj/.claude/rules/indented.md": "---\n  paths: src/**\n---\nan indented key still scopes\n",
      "proj/.claude/rules/braces.md": '---\npaths: "{**}"\n---\nbrace star\n',
      "proj/.claude/rules/number.md": "---\npaths: 5\n---\na number\n",
      "proj/.claude/rules/null.md": "---\npaths: ~\n---\nnull\n",
    }),
  },
  {
    name: "skills-frontmatter-quirks",
    files: () => ({
      "proj/.claude/skills/comment/SKILL.md": "---\ndescription: before # after\n---\nb\n",
      "proj/.claude/skills/listdesc/SKILL.md":
        "---\ndescription:\n  - a\n  - b\n---\nthe body's line\n",
      "proj/.claude/skills/hashes/SKILL.md": "---\nname: hashes\n---\n##\nsecond\n",
      "proj/.claude/skills/one/SKILL.md":
        "---\ndescription: hidden\ndisable-model-invocation: 1\n---\nb\n",
      "proj/.claude/skills/colon/SKILL.md": '---\nname: "a:b"\ndescription: colon name\n---\nb\n',
      "proj/.claude/skills/when/SKILL.md":
        "---\ndescription: d\nwhen_to_use: |\n  when this\n---\nb\n",
    }),
  },
  {
    name: "commands-custom",
    files: () => ({
      "proj/.claude/commands/empty.md": "---\nargument-hint: x\n---\n",
      "proj/.claude/commands/blank.md": "",
    }),
  },
  {
    name: "agents-frontmatter-quirks",
    files: () => ({
      "proj/.claude/agents/keep.md": "---\nname: keep\ndescription: |+\n  kept\n\n---\nb\n",
      "proj/.claude/agents/star.md": '---\nname: star\ndescription: all\ntools: "*"\n---\nb\n',
      "proj/.claude/agents/minus.md":
        "---\nname: minus\ndescription: d\ntools: Read, Grep, Edit\ndisallowedTools: Edit\n---\nb\n",
    }),
  },
  {
    name: "agents-same-name",
    // 2.1.328 lists the last file in directory order, 2.1.332 the alphabetically last: files are
    // added until the two differ on this file system (its directory order is its own), each with a
    // description of its own length, so the bytes tell which one is listed.
    files: () => ({}),
    setup: (b) => {
      const dir = `${b}/proj/.claude/agents`;
      Deno.mkdirSync(dir, { recursive: true });
      const names: string[] = [];
      for (const n of "abcdefghijklmnopqrstuvwxyz") {
        names.push(`${n}.md`);
        Deno.writeTextFileSync(
          `${dir}/${n}.md`,
          agent("same", `from ${n}${"!".repeat(names.length)}`),
        );
        const listed = [...Deno.readDirSync(dir)].map((e) => e.name);
        if (names.length >= 3 && listed.at(-1) !== [...names].sort().at(-1)) return;
      }
      // A file system listing alphabetically: both versions list the same file here.
    },
  },
  {
    name: "memory-excerpt-astral",
    files: (b) => ({
      [`${memory(b)}/MEMORY.md`]: Array.from(
        { length: 210 },
        (_, i) => `${i} ${i === 200 ? "x".repeat(74) + "🌱🌱🌱" : "n"}\n`,
      ).join(""),
    }),
  },
];
