/**
 * Claude Code's loading rules, as data: the one module `--loaded` models them from. Every rule was
 * **observed** on a real Claude Code (its first request, recorded inside a network namespace) and
 * names the version it was observed on and the test that observes it; the numbers the model needs
 * sit beside their rule. A change in Claude Code is one edit here (and its row in
 * `references/context-scan.md#loading-rules`).
 *
 * @module
 */

import type { LimitCode } from "./schema.ts";

/** The Claude Code version the rules below were observed on. */
export const OBSERVED_ON = "2.1.332";

/** The differential suite that observes every rule (one fixture per rule, named in `test`). */
export const OBSERVING_SUITE = "tests/context_scan_differential_test.ts";

/** One observed loading rule. */
export interface LoadingRule {
  /** The rule, one line. */
  readonly rule: string;
  /** The Claude Code version it was observed on. */
  readonly observed: string;
  /** The fixture(s) of {@linkcode OBSERVING_SUITE} that observe it. */
  readonly test: string;
}

function rule(text: string, test: string): LoadingRule {
  return { rule: text, observed: OBSERVED_ON, test };
}

/** Which instruction files load at start-up, in which directories. */
export const INSTRUCTION_FILES: LoadingRule = rule(
  "CLAUDE.md, .claude/CLAUDE.md, .claude/rules/**/*.md and CLAUDE.local.md load from every directory from / down to the project's physical path; the global root gives CLAUDE.md and rules/**/*.md; subdirectories, rules/ and .claude/memory/ do not load; a rule is named by its real path, and a project rule reached through a link leading outside the project does not load",
  "instruction-files, dot-claude-and-local, parents, subdirectory, layout-not-loaded, global-files, paths-outside-rules, links",
);

/** `AGENTS.md` stands in only where no `CLAUDE.md` exists. */
export const AGENTS_MD: LoadingRule = rule(
  "AGENTS.md and .claude/AGENTS.md (project and parents) load only when none of those directories holds a CLAUDE.md, .claude/CLAUDE.md or CLAUDE.local.md",
  "agents-md-*",
);

/** Frontmatter, block comments and surrounding whitespace. */
export const SHOWN_TEXT: LoadingRule = rule(
  "an instruction file is sent without its byte-order mark and YAML frontmatter, with every block-level HTML comment hidden (inline ones and those inside code or other HTML blocks stay), trimmed; an empty result sends nothing",
  "frontmatter, comments-*, whitespace-*",
);

/** `@path` imports. */
export const IMPORTS: LoadingRule & { readonly maxDepth: number } = {
  ...rule(
    "@path imports (also from rules and AGENTS.md) load as their own sources after the importer, each file once, at most 4 hops deep; never inside code spans, code blocks or HTML blocks; a missing or directory target adds nothing, nor does one whose extension is not a text one (TEXT_EXTENSIONS; no extension is fine); a project file's import outside the project (links resolved) is not followed (user-level files may import anywhere); imports resolve from the importer's real folder",
    "imports-*, rule-imports, rule-imported-first, import-depth, import-external, import-binary, import-extensions",
  ),
  maxDepth: 4,
};

/**
 * The file name extensions (lower-cased) an `@path` import may have; a file without an extension
 * may always be imported, any other is skipped (`Skipping non-text file in @include`). The list is
 * Claude Code 2.1.328's own, sampled by the `import-binary` and `import-extensions` fixtures.
 */
export const TEXT_EXTENSIONS: ReadonlySet<string> = new Set(
  (".md .txt .text .json .yaml .yml .toml .xml .csv .html .htm .css .scss .sass .less .js .ts " +
    ".tsx .jsx .mjs .cjs .mts .cts .py .pyi .pyw .rb .erb .rake .go .rs .java .kt .kts .scala .c " +
    ".cpp .cc .cxx .h .hpp .hxx .cs .swift .sh .bash .zsh .fish .ps1 .bat .cmd .env .ini .cfg " +
    ".conf .config .properties .sql .graphql .gql .proto .vue .svelte .astro .ejs .hbs .pug .jade " +
    ".php .pl .pm .lua .r .dart .ex .exs .erl .hrl .clj .cljs .cljc .edn .hs .lhs .elm .ml .mli " +
    ".f .f90 .f95 .for .cmake .make .makefile .gradle .sbt .rst .adoc .asciidoc .org .tex .latex " +
    ".lock .log .diff .patch").split(" "),
);

/** Path-scoped rules; `paths: "**"` is unconditional. */
export const PATH_SCOPED_RULES: LoadingRule = rule(
  "a rule whose frontmatter has paths: loads only when a matching file is read, unless its globs (a list, or a string split at commas outside braces; a trailing /** dropped, empty ones dropped) are none or all **",
  "rules-scoped, rules-star, rules-star-forms, rule-imported-first",
);

/** `MEMORY.md`: the cut and its warning. */
export const MEMORY_INDEX: LoadingRule & {
  readonly lines: number;
  readonly units: number;
  readonly excerpt: number;
  readonly maxSlug: number;
} = {
  ...rule(
    "auto-memory MEMORY.md (CLAUDE_CONFIG_DIR/projects/<slug>/memory, the slug the git top-level or project path with every UTF-16 unit outside [A-Za-z0-9] as -, past 200 units cut and followed by - and a base-36 hash) loads its shown text cut to 200 lines, then to whole lines within 25,000 UTF-16 units, followed by a blank line and a > WARNING line; other memory files load on demand",
    "memory-*, memory-slug, memory-slug-astral, memory-slug-long, memory-git-root",
  ),
  lines: 200,
  units: 25_000,
  excerpt: 80,
  maxSlug: 200,
};

/** Skills and commands in the listing. */
export const SKILL_LISTING: LoadingRule & { readonly maxChars: number } = {
  ...rule(
    "the skill listing holds `- name: description` for global skills/*/SKILL.md, the project's and its parents' (up to the git root) .claude/skills/*/SKILL.md and every commands/**/*.md (name a:b for a/b.md) that has a description; a skill without one lists its first body line (heading marks removed); when_to_use follows after ` - `; each run of tabs, carriage returns and newlines reads as one space; an entry whose name differs from its directory reads `dir (name)`; the description is cut to 1,536 UTF-16 units, the last one `…`; disable-model-invocation entries are absent; of one name the first listed stays (global over project, the project over its parents, a skill over a command)",
    "skills-*, commands, name-clashes",
  ),
  maxChars: 1536,
};

/** The listing budget. */
export const LISTING_BUDGET: LoadingRule & {
  readonly chars: number;
  readonly env: string;
  readonly builtin: {
    readonly entries: number;
    readonly chars: number;
    readonly competing: readonly { readonly name: string; readonly chars: number }[];
  };
} = {
  ...rule(
    "when the whole listing (entries joined by newlines, Claude Code's built-in skills included) exceeds the budget — SLASH_COMMAND_TOOL_CHAR_BUDGET from a settings file's env (it wins) or the environment, else Claude Code's own figure, 30,000 UTF-16 units for the default model — the bundled built-ins stay whole, every other entry is counted as its name, and in listing order (user entries, then the built-in init and security-review) each keeps its description while the remaining budget allows",
    "budget-*",
  ),
  chars: 30_000,
  env: "SLASH_COMMAND_TOOL_CHAR_BUDGET",
  // What an empty fixture lists (observed; the suite checks it): 11 bundled built-in skills that
  // always stay whole (their `- name: description` lines, 6,041 units without newlines), then two
  // built-ins that compete for the budget like user entries (full line lengths).
  builtin: {
    entries: 11,
    chars: 6041,
    competing: [{ name: "init", chars: 67 }, { name: "security-review", chars: 90 }],
  },
};

/** Agents in the listing. */
export const AGENT_LISTING: LoadingRule = rule(
  "the agent listing holds `- name: description (Tools: …)` for every agents/**/*.md of the global root and .claude/agents/**/*.md of the project and its parents that has both name and description; tools read `All tools`, the tools list, or `All tools except` the disallowedTools; of one name the project's agent wins over the global one",
  "agents, agents-yaml, parents-layout, name-clashes",
);

/** Plugins. */
export const PLUGINS: LoadingRule = rule(
  "a repository's own skills/, agents/, commands/ and hooks/ do not load when it is opened as a project; with --plugin-dir DIR its skills, commands (without a description: absent) and agents are listed as plugin:name (plugin name from .claude-plugin/plugin.json, else the folder), after the project's commands: first every plugin's commands (--plugin-dir folders, then installed plugins, in order), then every plugin's skills; a skill named apart from its folder reads plugin:folder (plugin:name), an agent in a subfolder plugin:sub:name; a plugin agent's description loses its final newline; its CLAUDE.md does not load",
  "plugin-as-project, plugin-dir, plugin-dir-two, plugin-names, combined, installed-order, plugin-agent-folded",
);

/** A plugin's manifest paths. */
export const PLUGIN_MANIFEST: LoadingRule = rule(
  "plugin.json commands and agents (a path or a list) replace the default commands/ and agents/ folders (a commands path may be a folder); an agents path that is a folder drops the whole plugin; skills paths (a skill folder or a folder of them) add to the default skills/ folder; a plugin with neither but a SKILL.md of its own is one skill named after its folder (anything but letters, digits, - and _ as -)",
  "plugin-manifest-*, plugin-root-skill",
);

/** Installed plugins. */
export const INSTALLED_PLUGINS: LoadingRule = rule(
  "a plugin name@mk loads like a --plugin-dir when the merged settings enable it (enabledPlugins: user, project, local, managed; a later false wins; order of first mention), G/plugins/installed_plugins.json has a record for it that applies (scope user, or project/local with this projectPath), G/plugins/known_marketplaces.json knows mk and its catalog (installLocation/.claude-plugin/marketplace.json) lists it; its folder is the record's installPath (one under another .../plugins/cache/ whose plugins folder is gone is read below G/plugins/), or for a directory marketplace the entry's source in that folder; a catalog entry's commands/agents/skills stand in for plugin.json's, and one rooted at the marketplace (source ./) that lists skills loads only those",
  "installed-*",
);

/** Settings that shape loading. */
export const SETTINGS: LoadingRule = rule(
  "claudeMdExcludes of every settings file (globs as picomatch with dot, or absolute paths, against the absolute path) keep user, project and local instruction files out (the managed policy's and MEMORY.md stay); env in settings sets the listing budget over the process's SLASH_COMMAND_TOOL_CHAR_BUDGET; SessionStart hooks of user, project and local settings inject like a plugin's (a JSON hookSpecificOutput.additionalContext as `SessionStart hook additional context: <text>`), UserPromptSubmit hooks as `UserPromptSubmit hook success: <output>`; outputStyle names .claude/output-styles/*.md (or G/output-styles) by its name: `# Output Style: <name>`, its body and a reminder line",
  "excludes, settings-*, output-style",
);

/** The managed policy. */
export const MANAGED_POLICY: LoadingRule = rule(
  "the managed policy folder (/etc/claude-code; /Library/Application Support/ClaudeCode on macOS; C:\\Program Files\\ClaudeCode on Windows) gives CLAUDE.md (its imports not followed), .claude/rules/**/*.md and .claude/skills/*/SKILL.md, first",
  "managed",
);

/** Where Claude Code looks from a start directory. */
export const PATHS: LoadingRule = rule(
  "a project opened through a link is walked and named from its physical path; skills, commands and agents are listed from the start directory up to its git root only (instruction files and rules above it still load); in a git worktree auto-memory is the main checkout's slug, and a worktree nested in its main checkout gets only the main checkout's CLAUDE.local.md",
  "link-root, git-root-listing, worktree, worktree-nested",
);

/** Frontmatter as Claude Code's YAML reader reads it. */
export const FRONTMATTER: LoadingRule = rule(
  'the last of duplicate keys wins; an indented only key still counts; paths: {**}, a number or ~ load unconditionally; a plain scalar ends at ` #`; a list-valued description falls back to the body; a first body line `##` lists as `##`; a command with neither description nor body lists `Custom command`; disable-model-invocation 1/true/yes/on hides; a name a:b lists as dir (a:b); a when_to_use block keeps its trailing space; a |+ description keeps its blank lines; tools "*" is All tools; disallowedTools are taken out of tools',
  "yaml-duplicate-keys, rules-paths-quirks, skills-frontmatter-quirks, commands-custom, agents-frontmatter-quirks",
);

/**
 * Two agents of one name in one folder: which one lists is version-dependent, recorded here as
 * data (`drift`), never guessed; the model follows {@linkcode OBSERVED_ON}'s.
 */
export const AGENT_NAME_CLASH: LoadingRule & {
  readonly drift: Readonly<Record<string, string>>;
} = {
  ...rule(
    "of two agents of one name in one folder the alphabetically last file is listed",
    "agents-same-name",
  ),
  drift: {
    "2.1.328": "the last in directory order (the file system's listing order)",
    "2.1.332": "the alphabetically last file",
  },
};

/** A plugin's SessionStart hooks. */
export const PLUGIN_HOOKS: LoadingRule = rule(
  "a plugin's SessionStart hooks whose matcher matches startup inject `SessionStart:startup hook success: <output>` and a blank line each, before the environment block; the output is known without running the hook only for `echo text`",
  "plugin-hooks-static, installed-plugin-hooks",
);

/**
 * Claude Code's own listing entries: what an empty project lists (the same on 2.1.328 and
 * 2.1.332; the differential suite's empty fixture checks the skills against
 * {@linkcode LISTING_BUDGET}). `--observe` calls only these built-in.
 */
export const BUILT_IN_ENTRIES: {
  readonly skills: readonly string[];
  readonly agents: readonly string[];
} = {
  skills: [
    "dataviz",
    "update-config",
    "keybindings-help",
    "code-review",
    "simplify",
    "fewer-permission-prompts",
    "loop",
    "claude-api",
    "workflow-authoring",
    "run",
    "plugin-authoring",
    "init",
    "security-review",
  ],
  agents: ["claude", "Explore", "general-purpose", "Plan", "statusline-setup"],
};

/** Every rule, in the order the reference lists them. */
export const LOADING_RULES: readonly LoadingRule[] = [
  INSTRUCTION_FILES,
  AGENTS_MD,
  SHOWN_TEXT,
  IMPORTS,
  PATH_SCOPED_RULES,
  MEMORY_INDEX,
  SKILL_LISTING,
  LISTING_BUDGET,
  AGENT_LISTING,
  PLUGINS,
  PLUGIN_HOOKS,
  PLUGIN_MANIFEST,
  INSTALLED_PLUGINS,
  SETTINGS,
  MANAGED_POLICY,
  PATHS,
  FRONTMATTER,
  AGENT_NAME_CLASH,
];

/** The Claude Code version the model is "as of". */
export const RULES_AS_OF: string = OBSERVED_ON;

/** What each limit code means, one short line (the table report prints it). */
export const LIMIT_MEANINGS: Readonly<Record<LimitCode, string>> = {
  "frontmatter-stripped": "YAML frontmatter not sent",
  "html-comments-hidden": "block-level HTML comments not sent",
  "import-depth-exceeded": "an import beyond 4 hops is not loaded",
  "import-external": "an import outside the project is not followed",
  "import-skipped": "a binary or unreadable import adds nothing",
  "memory-truncated": "MEMORY.md cut at 200 lines / 25,000 units",
  "description-capped": "listing description cut at 1,536 characters",
  "listing-budget": "over the listing budget: name only",
  "not-listed": "not in the listing (disabled or no description)",
  "path-scoped": "loads when a matching file is read; 0 at start",
  "on-demand": "loads only when read; 0 at start-up",
  "import-only": "not auto-loaded, only via @import; 0 at start",
  "agents-md-unused": "a CLAUDE.md exists, so AGENTS.md is not loaded",
  "not-loaded": "outside Claude Code's layout: never loaded",
  "loaded-elsewhere": "loaded once, as another row",
  "hook-runtime": "hook output is known only at run time",
  "estimated-large-file": "over 8 MiB: shown bytes estimated, not exact",
  unreadable: "not readable again; potential figure kept",
  "on-access": "sent when a file below its folder is read; 0 at start",
  "shell-runtime": "runs shell commands when invoked; counted disabled",
  "user-invoked-only": "disable-model-invocation: only the user's /name",
  "read-too-large": "over 256 KiB: the Read tool refuses it whole",
  excluded: "matched by claudeMdExcludes: not loaded",
};
