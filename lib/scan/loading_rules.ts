/**
 * Claude Code's documented loading rules, as data: the one module `--loaded` models them from, each
 * rule with the Claude Code version it comes from (`null` where the documentation names none), and
 * the one-line meaning of every limit code a row may carry. A change in Claude Code is one edit
 * here (and its line in `references/context-scan.md#loading-rules`).
 *
 * @module
 */

import type { LimitCode } from "./schema.ts";

/** One documented loading rule. */
export interface LoadingRule {
  /** The rule, one line. */
  readonly rule: string;
  /** The Claude Code version the rule comes from, or `null` when the documentation names none. */
  readonly since: string | null;
}

/** `MEMORY.md`: the first 200 lines or 25 KB, whichever comes first (2.1.83). */
export const MEMORY_INDEX: LoadingRule & { readonly lines: number; readonly bytes: number } = {
  rule: "MEMORY.md: only the first 200 lines or 25 KB load, whichever comes first",
  since: "2.1.83",
  lines: 200,
  bytes: 25_000,
};

/** Frontmatter and HTML comments do not count toward the `MEMORY.md` limit (2.1.211). */
export const MEMORY_INDEX_EXCLUSIONS: LoadingRule = {
  rule: "MEMORY.md: frontmatter and HTML comments do not count toward that limit",
  since: "2.1.211",
};

/** Memory topic files load on demand. */
export const MEMORY_TOPICS: LoadingRule = {
  rule: "memory topic files (every other *.md of a memory folder) load on demand",
  since: "2.1.83",
};

/** HTML comments are hidden when `CLAUDE.md` or a rule is auto-loaded (2.1.72). */
export const HTML_COMMENTS: LoadingRule = {
  rule: "CLAUDE.md and rules: HTML comments are hidden when the file is auto-loaded",
  since: "2.1.72",
};

/** `@path` imports: recursive, at most 5 hops, never inside code spans or fenced blocks. */
export const IMPORTS: LoadingRule & { readonly maxHops: number } = {
  rule: "@path imports are followed recursively up to 5 hops, never inside code spans or fences",
  since: null,
  maxHops: 5,
};

/** At start-up a skill contributes only its listing, capped at 1,536 characters (2.1.105). */
export const SKILL_LISTING: LoadingRule & { readonly maxChars: number } = {
  rule:
    "skills: at start-up only the listing (name, description, when_to_use) loads, capped at 1,536 characters",
  since: "2.1.105",
  maxChars: 1536,
};

/** `disable-model-invocation: true` keeps a skill out of the listing. */
export const SKILL_NOT_LISTED: LoadingRule = {
  rule:
    "skills with disable-model-invocation: true are not listed (their description is not in context)",
  since: null,
};

/** Path-scoped rules load only when a matching file is read. */
export const PATH_SCOPED_RULES: LoadingRule = {
  rule: "rules with paths: load only when a matching file is read; nested rule folders count",
  since: null,
};

/** Subdirectory `CLAUDE.md` files load on access (not inventoried, so nothing to model). */
export const SUBDIRECTORY_CLAUDE_MD: LoadingRule = {
  rule: "subdirectory CLAUDE.md files load on access, not at start-up",
  since: null,
};

/** Claude Code reads `CLAUDE.md`, not `AGENTS.md`; other files enter through an import. */
export const IMPORT_ONLY: LoadingRule = {
  rule: "AGENTS.md and .claude/convention files are not auto-loaded: they enter through an @import",
  since: null,
};

/** Every rule, in the order the reference lists them. */
export const LOADING_RULES: readonly LoadingRule[] = [
  MEMORY_INDEX,
  MEMORY_INDEX_EXCLUSIONS,
  MEMORY_TOPICS,
  HTML_COMMENTS,
  IMPORTS,
  SKILL_LISTING,
  SKILL_NOT_LISTED,
  PATH_SCOPED_RULES,
  SUBDIRECTORY_CLAUDE_MD,
  IMPORT_ONLY,
];

/** The newest Claude Code version any rule comes from: what the model is "as of". */
export const RULES_AS_OF: string = LOADING_RULES
  .map((r) => r.since)
  .filter((v): v is string => v !== null)
  .sort((a, b) => {
    const pa = a.split(".").map(Number);
    const pb = b.split(".").map(Number);
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      const d = (pa[i] ?? 0) - (pb[i] ?? 0);
      if (d !== 0) return d;
    }
    return 0;
  })
  .at(-1) ?? "unknown";

/** What each limit code means, one short line (the table report prints it). */
export const LIMIT_MEANINGS: Readonly<Record<LimitCode, string>> = {
  "html-comments-hidden": "HTML comments not shown to the agent",
  "imports-included": "@path imports counted into the importer",
  "import-depth-exceeded": "an import beyond 5 hops is not loaded",
  "import-unreadable": "an import could not be read (counted 0)",
  "memory-truncated": "MEMORY.md cut at 200 lines / 25 KB",
  "description-capped": "skill listing cut at 1,536 characters",
  "not-listed": "disable-model-invocation: not listed",
  "path-scoped": "loads when a matching file is read; 0 at start",
  "on-demand": "loads only when read; 0 at start-up",
  "import-only": "not auto-loaded, only via @import; 0 at start",
  unreadable: "not readable again; potential figure kept",
};
