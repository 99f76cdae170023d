/**
 * Fixtures for the context-scan CLI tests: the worked example and small helpers.
 *
 * @module
 */

import { mkdirSync, symlinkSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { makeTempDir, type RunOptions, type RunResult, runTool, writeTree } from "./_helpers.ts";
import { type ScanDocument, ScanDocumentSchema } from "../lib/scan/schema.ts";

/** The 15-file worked-example fixture, relative to the stand-in for `/` (HOME is `home/u`). */
export const EXAMPLE_FILES: Record<string, string> = {
  "home/u/demo/CLAUDE.md": "# Demo\nUse pnpm.\n",
  "home/u/demo/.claude/rules/style.md": "Two-space indent.\n",
  "home/u/demo/.claude/rules/api/scoped.md": '---\npaths: ["src/api/**"]\n---\nValidate input.\n',
  "home/u/demo/.claude/rules/empty.md": "",
  "home/u/demo/.claude/convention/naming.txt": "camelCase for vars\n",
  "home/u/demo/.claude/agents/reviewer.md":
    "---\nname: reviewer\ndescription: |\n  Reviews diffs.\n  Flags risk.\n\nmodel: opus\n---\nYou review code.\n",
  "home/u/demo/tools/agents/helper.md": '---\ndescription: "Small helper"\n---\nHelp.\n',
  "home/u/demo/tools/hooks/lib/inject.mjs":
    'export const REMINDER_TEXT = "Run tests";\nconst X = 1;\nconst MAX_TRIES = 3;\n',
  "home/u/demo/tools/skills/demo/SKILL.md": "---\nname: demo\n---\nDo the demo.\n",
  "home/u/demo/tools/skills/demo/references/guide.md": "Привет 🌱\n",
  "home/u/demo/tools/skills/demo/references/reports/old.md": "snapshot copy\n",
  "home/u/demo/node_modules/pkg/SKILL.md": "vendored\n",
  "home/u/.claude/projects/-home-u-demo/memory/MEMORY.md": "- [topic](topic.md)\n",
  "home/u/.claude/projects/-home-u-demo/memory/topic.md": "Deploys on Fridays are frozen.\n",
  "home/u/.claude/CLAUDE.md": "Global: be terse.\n",
};

/** The worked example's expected stdout (paths under `/home/u`). */
export const EXAMPLE_STDOUT = `{
  "roots": {"project": "/home/u/demo", "global": "/home/u/.claude"},
  "tier_filter": "all",
  "token_model": "chars/4",
  "measurement": {"scope": "potential-inventory", "token_proxy": "bytes/4", "actual_loading_observed": false},
  "files": [
    {"path":"/home/u/demo/CLAUDE.md","root":"project","tier":"always-on","kind":"file","bytes":17,"tokens":4,"estimated":false,"loading":"startup-instruction"},
    {"path":"/home/u/demo/.claude/rules/api/scoped.md","root":"project","tier":"always-on","kind":"file","bytes":46,"tokens":11,"estimated":false,"loading":"path-scoped-rule"},
    {"path":"/home/u/demo/.claude/rules/style.md","root":"project","tier":"always-on","kind":"file","bytes":18,"tokens":4,"estimated":false,"loading":"unscoped-rule"},
    {"path":"/home/u/demo/.claude/convention/naming.txt","root":"project","tier":"always-on","kind":"file","bytes":19,"tokens":4,"estimated":false,"loading":"import-or-read-required"},
    {"path":"/home/u/demo/tools/hooks/lib/inject.mjs","root":"project","tier":"always-on","kind":"hook-payload","bytes":14,"tokens":3,"estimated":true,"loading":"runtime-dependent"},
    {"path":"/home/u/demo/.claude/agents/reviewer.md","root":"project","tier":"per-spawn","kind":"file","bytes":99,"tokens":24,"estimated":false,"loading":"selected-agent"},
    {"path":"/home/u/demo/.claude/agents/reviewer.md","root":"project","tier":"always-on","kind":"field:description","bytes":32,"tokens":8,"estimated":false,"loading":"runtime-dependent"},
    {"path":"/home/u/demo/tools/agents/helper.md","root":"project","tier":"per-spawn","kind":"file","bytes":42,"tokens":10,"estimated":false,"loading":"selected-agent"},
    {"path":"/home/u/demo/tools/agents/helper.md","root":"project","tier":"always-on","kind":"field:description","bytes":15,"tokens":3,"estimated":false,"loading":"runtime-dependent"},
    {"path":"/home/u/demo/tools/skills/demo/SKILL.md","root":"project","tier":"per-invocation","kind":"file","bytes":32,"tokens":8,"estimated":false,"loading":"invoked-skill"},
    {"path":"/home/u/demo/tools/skills/demo/references/guide.md","root":"project","tier":"per-invocation","kind":"file","bytes":18,"tokens":4,"estimated":false,"loading":"on-demand"},
    {"path":"/home/u/.claude/projects/-home-u-demo/memory/MEMORY.md","root":"project","tier":"always-on","kind":"file","bytes":20,"tokens":5,"estimated":false,"loading":"memory-index-limited"},
    {"path":"/home/u/.claude/projects/-home-u-demo/memory/topic.md","root":"project","tier":"always-on","kind":"file","bytes":31,"tokens":7,"estimated":false,"loading":"on-demand"},
    {"path":"/home/u/.claude/CLAUDE.md","root":"global","tier":"always-on","kind":"file","bytes":18,"tokens":4,"estimated":false,"loading":"startup-instruction"}
  ],
  "scan_issues": [
  ],
  "totals": {
    "always-on": {"files": 10, "bytes": 230, "tokens": 53},
    "per-spawn": {"files": 2, "bytes": 141, "tokens": 34},
    "per-invocation": {"files": 2, "bytes": 50, "tokens": 12},
    "grand": {"files": 14, "bytes": 421, "tokens": 99}
  }
}
`;

/** The worked-example tree built under a temp prefix standing in for `/`. */
export interface Example {
  /** The temp prefix (stands in for the empty string before `/home/u`). */
  prefix: string;
  /** `<prefix>/home/u`. */
  home: string;
  /** `<prefix>/home/u/demo`. */
  demo: string;
  /** `<prefix>/home/u/.claude`. */
  global: string;
  /** The expected stdout with the prefix (and the memory slug) substituted. */
  expected: string;
}

/** The original `/`→`-` memory slug of a path. */
export function slugOf(path: string): string {
  return path.replaceAll("/", "-");
}

/** Build the worked example under a fresh temp dir. */
export function buildExample(): Example {
  const prefix = makeTempDir("ctxkit-scan-ex-");
  const home = `${prefix}/home/u`;
  const demo = `${home}/demo`;
  const files: Record<string, string> = {};
  for (const [rel, content] of Object.entries(EXAMPLE_FILES)) {
    files[rel.replace("-home-u-demo", slugOf(demo))] = content;
  }
  writeTree(prefix, files);
  const expected = EXAMPLE_STDOUT
    .replaceAll("-home-u-demo", slugOf(demo))
    .replaceAll('"/home/u', `"${home}`);
  return { prefix, home, demo, global: `${home}/.claude`, expected };
}

/** A CLI run plus its parsed document (when stdout parses). */
export interface ScanRun extends RunResult {
  /** The parsed document, or `undefined` when stdout is not a valid scan document. */
  doc?: ScanDocument;
}

/** Run context-scan and parse its stdout through the schema. */
export function scan(args: string[], options: RunOptions = {}): ScanRun {
  const result = runTool("context-scan", args, options);
  let doc: ScanDocument | undefined;
  try {
    doc = ScanDocumentSchema.parse(JSON.parse(result.stdout));
  } catch {
    doc = undefined;
  }
  return { ...result, doc };
}

/** Create a symlink, making its parent directory first. */
export function link(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/**
 * Create `<dir>/<name>` where `name` is a printf format with octal escapes (e.g. `bad\\377.md`), so
 * the name can hold bytes that are not valid UTF-8 (Deno's fs APIs only take valid strings).
 */
export function writeRawName(dir: string, name: string, content: string): void {
  const r = spawnSync("bash", [
    "-c",
    'printf "%s" "$3" > "$1/$(printf "$2")"',
    "_",
    dir,
    name,
    content,
  ]);
  if (r.status !== 0) throw new Error(`cannot create raw name ${name} in ${dir}`);
}
