/**
 * What Claude Code sends when a file is read or written (`references/context-scan.md#tier-rules`):
 * the path-scoped rules whose globs match it and, for every folder between the project and the
 * file, that folder's `CLAUDE.md` (with its imports), `.claude/CLAUDE.md`, `CLAUDE.local.md` and
 * `.claude/rules/` — each once per agent, its text untrimmed. Reads files, never writes.
 *
 * @module
 */

import { basename, dirname } from "../../paths.ts";
import { compareUtf8 } from "../../sort.ts";
import { isInstructionName } from "../discovery.ts";
import { statFollow } from "../files.ts";
import { walk } from "../walk.ts";
import { parseFrontmatter } from "../frontmatter.ts";
import { shownText } from "../claude_text.ts";
import { TEXT_EXTENSIONS } from "../loading_rules.ts";
import type { LimitCode, RootLabel } from "../schema.ts";
import { importPath, ruleIsConditional, splitGlobs } from "./instructions.ts";
import { splitClaudeFrontmatter } from "./invocation.ts";
import { ancestry, isFile, isInside, join, markdownBelow, readText, realOrSelf } from "./read.ts";
import { type ModelRoots, utf8 } from "./source.ts";
import { IMPORTS } from "../loading_rules.ts";

/** A file's text as an access sends it. */
export interface OnAccessText {
  /** The text: frontmatter removed; with a `<!--`, CRs as newlines and block comments hidden. */
  readonly text: string;
  /** False when the text is blank: then nothing is sent. */
  readonly sends: boolean;
  /** Its `@path` imports (outside code). */
  readonly imports: readonly string[];
  /** True when a frontmatter was removed. */
  readonly frontmatterStripped: boolean;
  /** True when a block comment was hidden. */
  readonly commentsHidden: boolean;
}

/**
 * The text Claude Code sends for an instruction file on access: Claude Code's frontmatter
 * pattern removes the frontmatter (and the whitespace after it); a text holding `<!--` goes
 * through the markdown reader, which turns every CR or CRLF into a newline, and its block-level
 * comments are hidden; the result is not trimmed.
 *
 * @example
 * ```ts
 * import { onAccessText } from "./on_access.ts";
 * onAccessText("---\npaths: src/**\n---\n<!-- x -->\nRule\n\n").text; // "Rule\n\n"
 * ```
 */
export function onAccessText(fileText: string): OnAccessText {
  const split = splitClaudeFrontmatter(fileText);
  let body = split.body.startsWith("\uFEFF") ? split.body.slice(1) : split.body;
  const markdown = body.includes("<!--");
  if (markdown) body = body.replace(/\r\n?/g, "\n");
  const shown = shownText(body, { frontmatter: false, trim: false });
  return {
    text: shown.text,
    sends: shown.text.trim() !== "",
    imports: shown.imports,
    frontmatterStripped: split.yaml !== undefined,
    commentsHidden: shown.commentsHidden,
  };
}

/** One source an access can send. */
export interface OnAccessSource {
  /** The file. */
  readonly path: string;
  /** Its root label. */
  readonly root: RootLabel;
  /** A path-scoped `rule`, a folder's `instruction` file, or an `import` of one of them. */
  readonly kind: "rule" | "instruction" | "import";
  /**
   * The folder an access must lie below: a rule's globs are relative to it (the project for the
   * project's and the user's rules, the folder holding `.claude/` for a subfolder's).
   */
  readonly base: string;
  /** A rule's globs (none: any file below `base`). */
  readonly globs: readonly string[];
  /** Bytes sent on the first access (0 when its text is blank). */
  readonly bytes: number;
  /** What shaped `bytes`. */
  readonly limits: ReadonlySet<LimitCode>;
  /** An import: the file that imported it. */
  readonly importedBy?: string;
}

/** The globs of a path-scoped rule's `paths:` (a list, or a string split at commas). */
export function ruleGlobs(yaml: string | undefined): string[] {
  if (yaml === undefined) return [];
  const value = parseFrontmatter(yaml).get("paths");
  if (value === undefined) return [];
  return (typeof value === "string" ? [value] : value).flatMap(splitGlobs)
    .filter((g) => g !== "" && g !== "**" && g !== "/**");
}

/** The folder a nested instruction file belongs to, and whether it is one of its rules. */
function folderOf(path: string): { folder: string; rule: boolean } {
  const rules = path.indexOf("/.claude/rules/");
  if (rules !== -1) return { folder: path.slice(0, rules), rule: true };
  const parent = dirname(path);
  return basename(parent) === ".claude" && basename(path) === "CLAUDE.md"
    ? { folder: dirname(parent), rule: false }
    : { folder: parent, rule: false };
}

function isTextName(path: string): boolean {
  const name = basename(path);
  const dot = name.lastIndexOf(".");
  return dot <= 0 || TEXT_EXTENSIONS.has(name.slice(dot).toLowerCase());
}

/** Collects on-access sources, each file once, its imports depth first after it. */
class Collector {
  readonly sources: OnAccessSource[] = [];
  readonly #seen = new Set<string>();
  readonly #project: string;

  constructor(readonly roots: ModelRoots, startupFiles: ReadonlySet<string>) {
    this.#project = realOrSelf(roots.project);
    for (const f of startupFiles) this.#seen.add(realOrSelf(f));
  }

  add(
    path: string,
    entry: { root: RootLabel; kind: OnAccessSource["kind"]; base: string; globs?: string[] },
    importedBy?: string,
    depth = 0,
  ): void {
    const key = realOrSelf(path);
    if (this.#seen.has(key)) return;
    const read = readText(path);
    if (read.kind === "missing") return;
    this.#seen.add(key);
    const limits = new Set<LimitCode>();
    if (read.kind !== "text") {
      limits.add(read.kind === "large" ? "estimated-large-file" : "unreadable");
      this.sources.push({ path, ...entry, globs: entry.globs ?? [], bytes: 0, limits });
      return;
    }
    const shown = onAccessText(read.text);
    if (shown.frontmatterStripped) limits.add("frontmatter-stripped");
    if (shown.commentsHidden) limits.add("html-comments-hidden");
    this.sources.push({
      path,
      ...entry,
      globs: entry.globs ?? [],
      bytes: shown.sends ? utf8(shown.text) : 0,
      limits,
      ...(importedBy === undefined ? {} : { importedBy }),
    });
    if (!shown.sends) return;
    for (const token of shown.imports) {
      const target = importPath(token, realOrSelf(path), this.roots.home);
      if (target === undefined || !isFile(target) || !isTextName(target)) continue;
      if (!isInside(realOrSelf(target), this.#project)) continue;
      if (depth + 1 > IMPORTS.maxDepth) continue;
      this.add(target, { root: entry.root, kind: "import", base: entry.base }, path, depth + 1);
    }
  }
}

/**
 * Every source an access can send in `roots`: the user's and the project's (and its parents')
 * path-scoped rules, then each subfolder's instruction files (from `nested`, the instruction
 * files the inventory's root walk met), with their imports. Files already loaded at start-up
 * (`startupFiles`) are not sent again.
 */
export function onAccessSources(
  roots: ModelRoots,
  nested: readonly string[],
  startupFiles: ReadonlySet<string>,
): OnAccessSource[] {
  const out = new Collector(roots, startupFiles);
  const scoped = (path: string, root: RootLabel, base: string) => {
    const read = readText(path);
    if (read.kind !== "text") return;
    const yaml = splitClaudeFrontmatter(read.text).yaml;
    if (!ruleIsConditional(yaml)) return;
    out.add(path, { root, kind: "rule", base, globs: ruleGlobs(yaml) });
  };
  for (const rule of markdownBelow(`${roots.global}/rules`)) {
    scoped(realOrSelf(rule), "global", roots.project);
  }
  for (const dir of ancestry(roots.project)) {
    for (const rule of markdownBelow(join(dir, ".claude/rules"))) scoped(rule, "project", dir);
  }
  const folders = new Map<string, string[]>();
  for (const path of nested) {
    const { folder } = folderOf(path);
    if (folder === roots.project || !folder.startsWith(`${roots.project}/`)) continue;
    folders.set(folder, [...(folders.get(folder) ?? []), path]);
  }
  for (const folder of [...folders.keys()].sort(compareUtf8)) {
    const files = new Set(folders.get(folder));
    for (const name of ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"]) {
      const path = `${folder}/${name}`;
      if (files.has(path)) out.add(path, { root: "project", kind: "instruction", base: folder });
    }
    const rules = [...files].filter((p) => folderOf(p).rule).sort(compareUtf8);
    for (const path of rules) {
      const read = readText(path);
      const yaml = read.kind === "text" ? splitClaudeFrontmatter(read.text).yaml : undefined;
      out.add(path, {
        root: "project",
        kind: ruleIsConditional(yaml) ? "rule" : "instruction",
        base: folder,
        globs: ruleIsConditional(yaml) ? ruleGlobs(yaml) : [],
      });
    }
  }
  return out.sources;
}

/**
 * The instruction files below `project` an access can send, found as the inventory's root walk
 * finds them (physical, pruned): for a caller without a scan (the observation).
 */
export function nestedInstructionFiles(project: string): string[] {
  const st = statFollow(project);
  if ("error" in st || !st.isDirectory) return [];
  return walk(project, st, { follow: false, prune: true }, {
    child: () => null,
    file: (path, name) => isInstructionName(name, path),
  }, null).files;
}

/** A file name a probe uses: never one a project is likely to hold. */
const PROBE = "ctxkit-observe-probe";

/**
 * One concrete path the glob `glob` matches (relative; brace groups take their first choice, a
 * class its first member, `*` and `**` a probe name), for the observation to read.
 */
export function globExample(glob: string): string {
  let g = glob.replace(/^\.\//, "").replace(/^\/+/, "");
  if (g === "" || g.endsWith("/")) g += "**";
  // Innermost brace groups first, until none is left (each pass removes at least one).
  for (let guard = 0; guard < 64 && /\{[^{}]*\}/.test(g); guard++) {
    g = g.replace(/\{([^{}]*)\}/g, (_, alternatives: string) => alternatives.split(",")[0]);
  }
  g = g.replace(/\[([!^])?([^\]]*)\]/g, (_, negated: string | undefined, members: string) => {
    if (negated !== undefined) return members.includes("_") ? "~" : "_";
    return members.replace(/\\/g, "")[0] ?? "_";
  });
  const segments = g.split("/").map((s) =>
    s === "**" ? PROBE : s.replace(/\\(.)/g, "$1").replaceAll("*", PROBE).replaceAll("?", "x")
  );
  if (g.split("/").at(-1) === "**") segments.push(PROBE);
  return segments.join("/");
}

/** A path whose access sends `source` (its base, then a glob's example or a probe file below). */
export function accessProbe(source: OnAccessSource): string {
  const rel = source.globs.length > 0 ? globExample(source.globs[0]) : PROBE;
  return `${source.base}/${rel}`;
}
