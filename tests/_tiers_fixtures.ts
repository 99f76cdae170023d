/**
 * The fixtures of the tiers' differential suite (`tests/context_scan_tiers_observe_test.ts`;
 * `references/context-scan.md#the-tiers-differential-suite`): each builds a project (`proj/`), a
 * config (`cfg/`) and plugins below a temp base, to observe one or more tier rules
 * (`lib/scan/tier_rules.ts`).
 *
 * @module
 */
import assert from "node:assert/strict";
import { enabling, installedLayout } from "./_diff.ts";
import type { ScanObservedTiers, ScanRow } from "../lib/scan/schema.ts";

/** What one fixture's scan and observation gave. */
export interface Seen {
  readonly rows: readonly ScanRow[];
  readonly tiers: ScanObservedTiers;
}

export type Files = Record<string, string | Uint8Array>;

/** One fixture: files below a temp base (`proj/` the project, `cfg/` the config, `home/`). */
export interface Fixture {
  readonly name: string;
  /** Its files (relative to the base; a function of the base where a file names it). */
  readonly files: Files | ((base: string) => Files);
  /** `--plugin-dir` folders below the base. */
  readonly pluginDirs?: readonly string[];
  /** Let hooks run (`--observe-hooks`). */
  readonly hooks?: boolean;
  /** Extra checks on the built fixture's observation. */
  readonly check?: (seen: Seen) => void;
}

/** The project's skills, agents and rules folders. */
export const S = "proj/.claude/skills";
export const A = "proj/.claude/agents";
export const R = "proj/.claude/rules";

/** Every fixture, each observing the rules its name is listed under. */
export const FIXTURES: Fixture[] = [
  {
    name: "skill-bodies",
    files: {
      [`${S}/plain/SKILL.md`]: "---\ndescription: plain\n---\nPlain body\n",
      [`${S}/trailing/SKILL.md`]: "---\ndescription: trailing\n---\nKeeps them\n\n\n\n",
      [`${S}/no-newline/SKILL.md`]: "---\ndescription: no newline\n---\nno newline at end",
      [`${S}/comments/SKILL.md`]:
        "---\ndescription: comments\n---\n<!-- kept -->\nText <!-- also kept -->\n\n   \n",
      [`${S}/mention/SKILL.md`]: "---\ndescription: mention\n---\nSee @references/none.md\n",
      [`${S}/empty/SKILL.md`]: "---\ndescription: empty\n---\n",
      [`${S}/unicode/SKILL.md`]: "---\ndescription: unicode\n---\nÜnïcödé — 日本 🎉\n",
    },
  },
  {
    name: "skill-no-frontmatter",
    files: {
      [`${S}/bare/SKILL.md`]: "\n\nNo frontmatter: leading blank lines kept\n\n",
      [`${S}/dashes/SKILL.md`]: "Text first\n---\nnot a fence\n",
    },
  },
  {
    name: "frontmatter-forms",
    files: {
      [`${S}/crlf/SKILL.md`]: "---\r\ndescription: crlf\r\n---\r\n\r\nCRLF body\r\n\r\n",
      [`${S}/bom/SKILL.md`]: "\uFEFF---\ndescription: bom\n---\nBOM body\n",
      [`${S}/fence-spaces/SKILL.md`]: "--- \ndescription: spaces\n---  \nbody\n",
      [`${S}/mid-line/SKILL.md`]: "---\ndescription: a---b\n---\nafter the fence\n",
      [`${S}/unclosed/SKILL.md`]: "---\ndescription: unclosed\nbody\n",
      [`${S}/indented/SKILL.md`]: "---\ndescription: indented\n---\n   indented first\nsecond\n",
      [`${S}/blank-lines/SKILL.md`]: "---\ndescription: blanks\n---\n\t\n \n\n\tTabbed\n",
      [`${A}/mid.md`]: "---\nname: mid\ndescription: a---b\ntools: Read\n---\nMid body\n",
    },
  },
  {
    name: "skill-substitutions",
    files: {
      [`${S}/vars/SKILL.md`]:
        "---\ndescription: vars\n---\nD ${CLAUDE_SKILL_DIR} P ${CLAUDE_PROJECT_DIR} S ${CLAUDE_SESSION_ID} E ${CLAUDE_EFFORT}\n",
      [`${S}/args/SKILL.md`]:
        "---\ndescription: args\narguments: [alpha, beta]\n---\nA $ARGUMENTS 0 $0 1 $ARGUMENTS[1] n $alpha $beta esc \\$ARGUMENTS $$ARGUMENTS\n",
    },
  },
  {
    // A skill's `effort:` becomes the session's: the next skill's ${CLAUDE_EFFORT} would read it.
    name: "skill-substitutions-effort",
    files: {
      [`${S}/effort/SKILL.md`]: "---\ndescription: effort\neffort: high\n---\nE ${CLAUDE_EFFORT}\n",
    },
  },
  {
    name: "skill-shell",
    files: {
      [`${S}/shell/SKILL.md`]:
        "---\ndescription: shell\n---\nA !`echo RAN` B `!`x`` C\n```!\necho fenced\n```\nD `code !`y``\n",
    },
  },
  {
    name: "skills-nested",
    files: {
      [`${S}/group/inner/SKILL.md`]: "---\ndescription: nested too deep\n---\nnever sent\n",
      [`${S}/top/SKILL.md`]: "---\ndescription: top\n---\nTop body\n",
      [`${S}/top/references/guide.md`]: "never sent with the body\n",
    },
    check: (seen) => {
      const row = seen.rows.find((r) => r.path.endsWith("group/inner/SKILL.md"));
      assert.deepEqual([row?.loaded_bytes, row?.limits], [0, ["not-loaded"]]);
      assert.equal(seen.tiers.invocations.length, 1, "only the top skill is planned");
    },
  },
  {
    name: "skill-fork",
    files: {
      [`${S}/forked/SKILL.md`]:
        "---\ndescription: forked\ncontext: fork\n---\nFork body $ARGUMENTS\n",
    },
    check: (seen) => assert.deepEqual(seen.tiers.invocations.map((i) => i.forked), [true]),
  },
  {
    name: "commands",
    files: {
      "proj/.claude/commands/one.md": "---\ndescription: cmd one\n---\n\nCommand body $ARGUMENTS\n",
      "proj/.claude/commands/ns/two.md": "Command two without frontmatter\n\n",
      "proj/.claude/commands/three.md": "---\ndescription: three\n---\nThird ${CLAUDE_PROJECT_DIR}",
    },
  },
  {
    name: "global-tiers",
    files: {
      "cfg/skills/gs/SKILL.md": "---\ndescription: global skill\n---\nGlobal body\n",
      "cfg/agents/ga.md":
        "---\nname: ga\ndescription: global agent\ntools: Read\n---\nGlobal agent\n",
      "cfg/commands/gc.md": "---\ndescription: global command\n---\nGlobal command\n",
    },
  },
  {
    name: "plugin-tiers",
    pluginDirs: ["plug"],
    files: {
      "proj/.keep": "",
      "plug/.claude-plugin/plugin.json": '{"name":"pp"}',
      "plug/skills/ps/SKILL.md":
        "---\ndescription: plugin skill\n---\nRoot ${CLAUDE_PLUGIN_ROOT} dir ${CLAUDE_SKILL_DIR} project ${CLAUDE_PROJECT_DIR} data ${CLAUDE_PLUGIN_DATA}\n",
      "plug/commands/pc.md":
        "---\ndescription: plugin cmd\n---\nPlugin command ${CLAUDE_PLUGIN_ROOT}\n",
      "plug/agents/pa.md":
        "---\nname: pa\ndescription: plugin agent\ntools: Read\n---\nPlugin agent ${CLAUDE_PLUGIN_ROOT} ${CLAUDE_PLUGIN_DATA} ${CLAUDE_PROJECT_DIR}\n",
    },
  },
  {
    // An installed, enabled plugin (as `claude plugin install` leaves it): loaded like a --plugin-dir.
    name: "plugin-tiers-installed",
    files: (base) => ({
      "proj/.keep": "",
      "cfg/settings.json": enabling({ "ip@mk": true }),
      ...installedLayout(base, {
        mk: {
          plugins: [{
            name: "ip",
            files: {
              "skills/s/SKILL.md":
                "---\ndescription: installed\n---\nD ${CLAUDE_PLUGIN_DATA} R ${CLAUDE_PLUGIN_ROOT}\n",
              "agents/ia.md":
                "---\nname: ia\ndescription: installed agent\ntools: Read\n---\nD ${CLAUDE_PLUGIN_DATA}\n",
            },
          }],
        },
      }),
    }),
  },
  {
    name: "agent-bodies",
    files: {
      [`${A}/trim.md`]:
        "---\nname: trim\ndescription: trims\ntools: Read\n---\n\n\n  Body <!-- kept -->\n\n\n",
      [`${A}/empty.md`]: "---\nname: empty\ndescription: no body\ntools: Read\n---\n",
      [`${A}/sub/nested.md`]:
        "---\nname: nested\ndescription: in a subfolder\ntools: Read\n---\nNested\n",
      [`${A}/project-dir.md`]:
        "---\nname: project-dir\ndescription: kept literal\ntools: Read\nmodel: haiku\n---\nDir ${CLAUDE_PROJECT_DIR}\n",
    },
    check: (seen) => {
      const haiku = seen.tiers.spawns.find((s) => s.name === "project-dir");
      assert.match(haiku?.model ?? "", /haiku/);
    },
  },
  {
    name: "agent-tools",
    files: {
      [`${S}/listed/SKILL.md`]: "---\ndescription: listed\n---\nListed\n",
      [`${A}/reader.md`]: "---\nname: reader\ndescription: reads\ntools: Read\n---\nReader\n",
      [`${A}/skilled.md`]:
        "---\nname: skilled\ndescription: skills\ntools: Read, Skill\n---\nSkilled\n",
      [`${A}/all.md`]: "---\nname: all\ndescription: every tool\n---\nAll\n",
    },
    check: (seen) => {
      const skills = (name: string) =>
        seen.tiers.spawns.find((s) => s.name === name)?.request?.categories.skills.bytes ?? -1;
      assert.equal(skills("reader"), 0, "no Skill tool: no listing");
      assert.ok(skills("skilled") > 0 && skills("all") > 0, "the Skill tool brings the listing");
    },
  },
  {
    name: "agent-preload",
    files: {
      [`${S}/pre/SKILL.md`]:
        "---\ndescription: pre\n---\n\nPre body $ARGUMENTS ${CLAUDE_SKILL_DIR}\n\n",
      [`${S}/pre2/SKILL.md`]: "---\ndescription: pre2\n---\nPre2 body\n",
      [`${A}/one.md`]:
        "---\nname: one\ndescription: one\ntools: Read, Skill\nskills: pre\n---\nOne\n",
      [`${A}/list.md`]:
        "---\nname: list\ndescription: list\ntools: Read\nskills:\n  - pre\n  - pre2\n---\nList\n",
    },
    check: (seen) => {
      const list = seen.tiers.spawns.find((s) => s.name === "list");
      assert.deepEqual(list?.preloaded.map((p) => p.name), ["pre", "pre2"]);
    },
  },
  {
    name: "on-access-nested",
    files: {
      "proj/CLAUDE.md": "top\n",
      [`${R}/r-src.md`]:
        "---\npaths: src/**\n---\n\n<!-- hidden -->\n  Rule src  <!-- inline -->\n\n",
      [`${R}/r-ts.md`]: '---\npaths:\n  - "**/*.ts"\n---\nRule ts\n',
      [`${R}/always.md`]: "Always rule\n",
      "proj/src/CLAUDE.md": "---\nx: 1\n---\n<!-- hidden -->\nSrc claude\n\n\n",
      "proj/src/CLAUDE.local.md": "Src local\n",
      "proj/src/.claude/CLAUDE.md": "Src dot claude\n",
      "proj/src/.claude/rules/inner.md": "Inner rule\n",
      "proj/src/.claude/rules/scoped.md": '---\npaths: "*.ts"\n---\nsrc-relative scoped\n',
      "proj/src/lib/CLAUDE.md": "Lib claude\n",
    },
  },
  {
    name: "on-access-text",
    files: {
      "proj/a/CLAUDE.md": "crlf one\r\ncrlf two\r\n\r\n",
      "proj/b/CLAUDE.md": "  \n\t\n",
      "proj/c/CLAUDE.md": "---\r\nx: 1\r\n---\r\nfm crlf\r\n<!-- x -->\r\nend\r\n",
      "proj/d/CLAUDE.md": "\n\nLeading blanks kept\n",
      "proj/e/CLAUDE.md": "a\n<!-- c -->\n\n\nb\n\n<!-- d -->\nc\n",
      "proj/f/CLAUDE.md": "<!-- only a comment -->\n",
      [`${R}/crlf.md`]: "---\npaths: g/**\n---\r\nrule crlf\r\n",
    },
  },
  {
    name: "on-access-imports",
    files: {
      "proj/CLAUDE.md": "top\n",
      "proj/other.md": "other\n",
      "proj/sub/CLAUDE.md": "sub\n@../CLAUDE.md\n@../other.md\n@inner.md\n",
      "proj/sub/inner.md": "inner\n",
    },
  },
  {
    name: "rule-already-loaded",
    files: {
      [`${R}/shared.md`]: "---\npaths: docs/**\n---\nShared rule\n",
      "proj/docs/CLAUDE.md": "Docs\n",
      "proj/docs/api/CLAUDE.md": "Docs api\n",
    },
  },
  {
    name: "user-and-project-rules",
    files: {
      "cfg/rules/user-src.md": "---\npaths: src/**\n---\nUser rule src\n",
      "cfg/rules/user-always.md": "User always\n",
      [`${R}/project-src.md`]: "---\npaths: src/**\n---\nProject rule src\n",
      "proj/src/.keep": "",
    },
  },
];
