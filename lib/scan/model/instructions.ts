/**
 * Instruction files as Claude Code loads them at start-up (`references/context-scan.md#loaded-figures`):
 * the global CLAUDE.md and rules, then from `/` down to the project each folder's CLAUDE.md,
 * `.claude/CLAUDE.md` (AGENTS.md when no CLAUDE.md is anywhere), rules and CLAUDE.local.md; each
 * file's `@` imports depth first after it; path-scoped rules left out.
 *
 * @module
 */

import { isAbsent } from "../../_fs/errors.ts";
import { basename, dirname, normalizeLexical } from "../../paths.ts";
import { parseFrontmatter, splitFrontmatter } from "../frontmatter.ts";
import { shownText } from "../claude_text.ts";
import { scanFile, statFollow } from "../files.ts";
import { IMPORTS, TEXT_EXTENSIONS } from "../loading_rules.ts";
import { InstructionScanner } from "../markdown.ts";
import { RuleScopeScanner } from "../measure.ts";
import type { LimitCode, RootLabel } from "../schema.ts";
import { excluder, expandBraces } from "./excludes.ts";
import { memoryIndexSource } from "./memory.ts";
import type { Places } from "./places.ts";
import type { LoadingSettings } from "./settings.ts";
import {
  isFile,
  isInside,
  join,
  markdownFilesBelow,
  namesIn,
  readText,
  realOrSelf,
} from "./read.ts";
import { type LoadedSource, type ModelRoots, utf8 } from "./source.ts";

/** The file an `@path` token names, or undefined when it is not an import. */
export function importPath(token: string, importer: string, home: string | undefined) {
  const hash = token.indexOf("#");
  const path = hash === -1 ? token : token.slice(0, hash);
  if (path.startsWith("~/")) {
    return home === undefined ? undefined : normalizeLexical(path.slice(2), home);
  }
  if (path.startsWith("/")) return path === "/" ? undefined : normalizeLexical(path, "/");
  if (!/^[A-Za-z0-9._-]/.test(path)) return undefined;
  return normalizeLexical(path, dirname(importer));
}

/** True when Claude Code skips an import of `path` for its extension (as `path.extname` reads it). */
function isNonTextName(path: string): boolean {
  const name = basename(path);
  const dot = name.lastIndexOf(".");
  if (dot <= 0) return false; // no extension, or a dot-name such as `.env`: text
  return !TEXT_EXTENSIONS.has(name.slice(dot).toLowerCase());
}

/** A `paths` string split at commas outside braces, each part trimmed, empty ones dropped. */
export function splitGlobs(value: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const c of value) {
    if (c === "{") depth++;
    else if (c === "}") depth--;
    if (c === "," && depth === 0) {
      out.push(current.trim());
      current = "";
    } else current += c;
  }
  out.push(current.trim());
  return out.filter((g) => g !== "");
}

/**
 * Whether `paths:` frontmatter makes a rule conditional: not when `paths` is absent or empty, nor
 * when its globs — a trailing `/**` dropped, empty ones dropped — are none or all `**`.
 */
export function ruleIsConditional(yaml: string | undefined): boolean {
  if (yaml === undefined) return false;
  const value = parseFrontmatter(yaml).get("paths");
  if (value === undefined || value === "" || (Array.isArray(value) && value.length === 0)) {
    return false;
  }
  // A number is no glob: the rule loads (observed: rules-paths-quirks).
  if (typeof value === "string" && /^[-+]?[0-9]+(\.[0-9]+)?$/.test(value)) return false;
  const globs = (typeof value === "string" ? [value] : value).flatMap(splitGlobs)
    .flatMap((g) => expandBraces(g))
    .map((g) => (g.endsWith("/**") ? g.slice(0, -3) : g))
    .filter((g) => g !== "");
  return !(globs.length === 0 || globs.every((g) => g === "**"));
}

/** Collects instruction sources in request order, each file once. */
class Instructions {
  readonly sources: LoadedSource[] = [];
  /** Every instruction file Claude Code reads (loaded, empty once shown, or path-scoped). */
  readonly read = new Set<string>();
  /** Every instruction file `claudeMdExcludes` kept out. */
  readonly excluded = new Set<string>();
  readonly #seen = new Set<string>();
  readonly #project: string;
  readonly #home: string | undefined;
  readonly #excludes: (path: string) => boolean;

  constructor(project: string, home: string | undefined, excludes: (path: string) => boolean) {
    this.#project = project;
    this.#home = home;
    this.#excludes = excludes;
  }

  has(path: string): boolean {
    return this.#seen.has(this.#key(path));
  }

  #key(path: string): string {
    return realOrSelf(path);
  }

  /**
   * Add `path` (and its imports, depth first after it) when it exists and sends any text.
   * `userLevel` files may import anything; project files only inside the project.
   */
  add(
    path: string,
    root: RootLabel,
    options: {
      userLevel: boolean;
      rule?: boolean;
      importedBy?: string;
      depth?: number;
      /** The managed policy's files: never excluded, their imports not followed. */
      managed?: boolean;
      /** `path` is its own real path already. */
      real?: boolean;
    },
  ): "added" | "skipped" {
    const key = options.real ? path : this.#key(path);
    if (this.#seen.has(key)) return "added";
    const read = readText(path);
    if (read.kind === "missing") return "skipped";
    if (!options.managed && this.#excludes(path)) {
      this.excluded.add(path);
      return "skipped";
    }
    this.read.add(path);
    // An import that cannot be read adds nothing (the importer says so); a file found by name is a row.
    if (read.kind === "unreadable" && options.importedBy !== undefined) return "skipped";
    this.#seen.add(key);
    const depth = options.depth ?? 0;
    const limits = new Set<LimitCode>();
    const base = {
      path,
      root,
      category: "memory-files" as const,
      kind: "file" as const,
      loading: options.importedBy === undefined
        ? "startup-instruction" as const
        : "imported-instruction" as const,
      ...(options.importedBy === undefined ? {} : { importedBy: options.importedBy }),
      ...(options.rule ? { rule: true } : {}),
    };
    if (read.kind === "unreadable") {
      this.sources.push({ ...base, potential: 0, loaded: 0, limits: new Set(["unreadable"]) });
      return "added";
    }
    if (read.kind === "large") {
      // Streamed, never read whole: a path-scoped rule is left out as RuleScopeScanner sees it.
      if (options.rule) {
        const scope = scanFile(path, new RuleScopeScanner());
        if (scope.ok && scope.result) return "added";
      }
      const scanned = scanFile(path, new InstructionScanner({ frontmatter: true }));
      limits.add("estimated-large-file");
      const loaded = scanned.ok ? scanned.result.bytes : 0;
      this.sources.push({ ...base, potential: read.size, loaded, limits });
      return "added";
    }
    // A path-scoped rule is not loaded, and — read once — is not loaded by a later import either.
    if (options.rule && ruleIsConditional(splitFrontmatter(read.text).yaml)) return "added";
    const shown = shownText(read.text);
    if (shown.frontmatterStripped) limits.add("frontmatter-stripped");
    if (shown.commentsHidden) limits.add("html-comments-hidden");
    const source: LoadedSource = {
      ...base,
      potential: read.size,
      loaded: utf8(shown.text),
      limits,
    };
    this.sources.push(source);
    if (options.managed) return "added"; // observed: managed
    // Imports resolve from the importer's real folder (a linked CLAUDE.md imports beside its
    // target), and a project file's import must really lie inside the project (links resolved).
    const from = shown.imports.length === 0 ? path : options.real ? path : realOrSelf(path);
    const project = this.#project;
    for (const token of shown.imports) {
      const target = importPath(token, from, this.#home);
      if (target === undefined) continue;
      const real = realOrSelf(target);
      if (!options.userLevel && !isInside(real, project)) {
        // Worth saying when something is there (even what the sandbox will not let us examine).
        const there = statFollow(target);
        if ("error" in there ? !isAbsent(there.error) : there.isFile) limits.add("import-external");
        continue;
      }
      const st = statFollow(target);
      if ("error" in st) {
        // Missing: an @mention, nothing to say; there but not examinable: skipped.
        if (!isAbsent(st.error)) limits.add("import-skipped");
        continue;
      }
      if (!st.isFile) continue;
      if (isNonTextName(target)) {
        limits.add("import-skipped");
        continue;
      }
      if (this.has(target)) continue;
      if (depth + 1 > IMPORTS.maxDepth) {
        limits.add("import-depth-exceeded");
        continue;
      }
      const added = this.add(target, root, {
        userLevel: options.userLevel,
        importedBy: path,
        depth: depth + 1,
      });
      if (added === "skipped") limits.add("import-skipped");
    }
    return "added";
  }
}

/** What the instruction files of a run depend on besides the roots. */
export interface InstructionContext {
  /** Where the run looks from. */
  readonly places: Places;
  /** The merged settings (`claudeMdExcludes`). */
  readonly settings: LoadingSettings;
  /** The managed policy folder. */
  readonly managed: string;
}

const NO_NAMES: ReadonlySet<string> = new Set();

/** The instruction files of the run, in request order. */
export interface InstructionResult {
  /** Every instruction source, auto-memory's index last. */
  readonly sources: LoadedSource[];
  /** Every instruction file Claude Code reads. */
  readonly read: ReadonlySet<string>;
  /** Every instruction file `claudeMdExcludes` kept out. */
  readonly excluded: ReadonlySet<string>;
  /** True when AGENTS.md stood in for a missing CLAUDE.md. */
  readonly agentsMdLoaded: boolean;
  /** The auto-memory folder Claude Code reads. */
  readonly memoryDir: string;
}

/**
 * The instruction sources of a run, and auto-memory's index after them: the managed policy's
 * `CLAUDE.md` (its imports not followed) and `.claude/rules/`, the global `CLAUDE.md` and rules,
 * then from `/` down to the start directory each folder's files — in a worktree nested in its main
 * checkout, the main checkout's folders give only `CLAUDE.local.md`.
 */
export function instructionSources(
  roots: ModelRoots,
  context: InstructionContext,
): InstructionResult {
  const { places, managed } = context;
  const out = new Instructions(
    places.project,
    roots.home,
    excluder(context.settings.claudeMdExcludes),
  );
  out.add(`${managed}/CLAUDE.md`, "managed", { userLevel: true, managed: true });
  for (const rule of markdownFilesBelow(`${managed}/.claude/rules`)) {
    out.add(rule.real, "managed", { userLevel: true, rule: true, managed: true, real: true });
  }
  if (roots.includeGlobal) {
    out.add(`${roots.global}/CLAUDE.md`, "global", { userLevel: true });
    // A rule is read under its real path (links resolved), as Claude Code names it.
    for (const rule of markdownFilesBelow(`${roots.global}/rules`)) {
      out.add(rule.real, "global", { userLevel: true, rule: true, real: true });
    }
  }
  const dirs = places.dirs;
  const project = places.project;
  // A worktree nested in its main checkout: the main checkout's own files are the worktree's.
  const main = places.mainCheckout;
  const shadowed = (dir: string) =>
    main !== undefined && places.gitRoot !== undefined && dir !== places.gitRoot &&
    isInside(dir, main) && isInside(places.gitRoot, main);
  // One listing of each directory and its .claude/ instead of a probe per file name (the walk
  // from / goes through every parent: probing each name there would cost a failed stat each).
  const names = dirs.map((d) => {
    const top = namesIn(d);
    // Listed without a `.claude` entry: nothing to list there (a failed listing costs more than
    // a look). A folder that cannot be listed may still lead into its `.claude`.
    const dot = top === undefined || top.has(".claude") ? namesIn(join(d, ".claude")) : undefined;
    return { top: top ?? NO_NAMES, dot: dot ?? NO_NAMES };
  });
  const there = (i: number, file: string) =>
    file.startsWith(".claude/")
      ? names[i].dot.has(file.slice(8)) && isFile(join(dirs[i], file))
      : names[i].top.has(file) && isFile(join(dirs[i], file));
  const claudeMdAnywhere = dirs.some((_, i) =>
    ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"].some((f) => there(i, f))
  );
  dirs.forEach((dir, i) => {
    const add = (file: string) => {
      if (there(i, file)) out.add(join(dir, file), "project", { userLevel: false });
    };
    if (!shadowed(dir)) {
      add("CLAUDE.md");
      add(".claude/CLAUDE.md");
      if (!claudeMdAnywhere) {
        add("AGENTS.md");
        add(".claude/AGENTS.md");
      }
      const rules = names[i].dot.has("rules") ? markdownFilesBelow(join(dir, ".claude/rules")) : [];
      for (const rule of rules) {
        // A project rule reached through a link that leads outside the project is not loaded
        // (a parent directory's own rules are).
        if (rule.real !== rule.path && !isInside(rule.real, project)) continue;
        out.add(rule.real, "project", { userLevel: false, rule: true, real: true });
      }
    }
    add("CLAUDE.local.md");
  });
  const memory = memoryIndexSource(roots.global, places);
  if (memory.source !== undefined) out.sources.push(memory.source);
  return {
    sources: out.sources,
    read: out.read,
    excluded: out.excluded,
    agentsMdLoaded: !claudeMdAnywhere,
    memoryDir: memory.memoryDir,
  };
}
