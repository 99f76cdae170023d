/**
 * Claude Code's loading model (`--loaded`; `references/context-scan.md#loaded-figures`): every
 * source Claude Code puts into a session's first request, found the way Claude Code finds it and
 * sized as the exact text it sends — each instruction file and each import its own source, each
 * skill, command and agent listing entry its own source, with the listing budget applied to the
 * whole listing. The rules and their numbers are `loading_rules.ts`; the text rules
 * `claude_text.ts`. Reads files (each instruction file once, whole, up to 8 MiB), never writes.
 *
 * @module
 */

import { isAbsent, rethrowPermission } from "../_fs/errors.ts";
import { ReadRefusedError, readRegular } from "../_fs/read.ts";
import { gitToplevel } from "../git.ts";
import { basename, dirname, normalizeLexical } from "../paths.ts";
import { compareUtf8 } from "../sort.ts";
import {
  memoryIndexText,
  parseFrontmatter,
  scalar,
  shownText,
  splitFrontmatter,
} from "./claude_text.ts";
import { scanFile, statFollow } from "./files.ts";
import {
  IMPORTS,
  LISTING_BUDGET,
  MEMORY_INDEX,
  SKILL_LISTING,
  TEXT_EXTENSIONS,
} from "./loading_rules.ts";
import { InstructionScanner } from "./markdown.ts";
import { RuleScopeScanner } from "./measure.ts";
import {
  type LimitCode,
  type LoadedCategory,
  type Loading,
  type PluginHooks,
  PluginHooksSchema,
  PluginManifestSchema,
  type RootLabel,
  type RowKind,
} from "./schema.ts";

/** Files above this size are not read whole: their shown bytes are estimated by streaming. */
export const LARGE_FILE_BYTES = 8 * 1024 * 1024;

/** One source of the start-up context, as the model sees it. */
export interface LoadedSource {
  /** The file the source comes from. */
  readonly path: string;
  /** Which root it belongs to. */
  readonly root: RootLabel;
  /** The `/context` group it counts in. */
  readonly category: LoadedCategory;
  /** Row kind: `file` for an instruction file, `field:description` for a listing entry. */
  readonly kind: RowKind;
  /** The `loading` a new row for it carries. */
  readonly loading: Loading;
  /** Potential bytes: the file's size, or a listing entry's bytes before any cut. */
  readonly potential: number;
  /** Bytes Claude Code sends for it. */
  loaded: number;
  /** The limits that shaped `loaded`. */
  readonly limits: Set<LimitCode>;
  /** A listing entry's name as the listing writes it. */
  readonly name?: string;
  /** An import: the file that imported it. */
  readonly importedBy?: string;
}

/** Where the model looks. */
export interface ModelRoots {
  /** The project root `R` (Claude Code's working directory). */
  readonly project: string;
  /** The global root `G` (`CLAUDE_CONFIG_DIR`). */
  readonly global: string;
  /** Whether global sources are reported (`--global`); auto-memory always is. */
  readonly includeGlobal: boolean;
  /** `~` for `@~/…` imports. */
  readonly home: string | undefined;
  /** `--plugin-dir` folders, resolved. */
  readonly pluginDirs: readonly string[];
  /** `SLASH_COMMAND_TOOL_CHAR_BUDGET`, when set. */
  readonly budgetOverride?: string;
}

/** The model's answer: the sources, and facts the rows of the inventory need. */
export interface LoadingModel {
  /** Every source, in request order. */
  readonly sources: readonly LoadedSource[];
  /** True when AGENTS.md stood in for a missing CLAUDE.md. */
  readonly agentsMdLoaded: boolean;
  /** The auto-memory folder Claude Code reads. */
  readonly memoryDir: string;
  /** Every `SKILL.md` and command file Claude Code read for its listing (listed or not). */
  readonly listingFiles: ReadonlySet<string>;
  /** Every instruction file Claude Code reads, whether it sends any text or not. */
  readonly instructionFiles: ReadonlySet<string>;
  /** Claude Code's own built-in skills the budget cuts to their name (no row of ours). */
  readonly builtinsCut: readonly string[];
}

/**
 * The listing entry bytes of a `SKILL.md` outside Claude Code's layout, as it would be listed
 * (`- dir: description\n`, uncapped): the potential of its listing row; 0 when it lists nothing.
 */
export function skillListingPotential(path: string): number {
  const dir = basename(dirname(path));
  return listingEntry(path, dir, "project", "skill-listing", true, true)?.source.potential ?? 0;
}

const encoder = new TextEncoder();
const utf8 = (s: string) => encoder.encode(s).length;

type TextRead =
  | { kind: "text"; text: string; size: number }
  | { kind: "large"; size: number }
  | { kind: "missing" }
  | { kind: "unreadable" };

function readText(path: string): TextRead {
  try {
    const bytes = readRegular(path, { maxBytes: LARGE_FILE_BYTES });
    return { kind: "text", text: new TextDecoder().decode(bytes), size: bytes.length };
  } catch (e) {
    if (e instanceof ReadRefusedError) {
      if (e.refusal === "too-large") {
        const st = statFollow(path);
        return { kind: "large", size: "error" in st ? 0 : st.size };
      }
      // A directory or device where a file is looked for is no file: Claude Code skips it too.
      return e.refusal === "absent" || e.refusal === "not-regular"
        ? { kind: "missing" }
        : { kind: "unreadable" };
    }
    rethrowPermission(e);
    return isAbsent(e) ? { kind: "missing" } : { kind: "unreadable" };
  }
}

function isFile(path: string): boolean {
  const st = statFollow(path);
  return !("error" in st) && st.isFile;
}

function isDirectory(path: string): boolean {
  const st = statFollow(path);
  return !("error" in st) && st.isDirectory;
}

function listNames(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)].sort((a, b) => compareUtf8(a.name, b.name));
  } catch {
    return [];
  }
}

/** Every `*.md` below `dir` (links followed, each real directory once), sorted per directory. */
function markdownBelow(dir: string, seen = new Set<string>()): string[] {
  let real: string;
  try {
    real = Deno.realPathSync(dir);
  } catch {
    return [];
  }
  if (seen.has(real)) return [];
  seen.add(real);
  const out: string[] = [];
  for (const entry of listNames(dir)) {
    const path = `${dir}/${entry.name}`;
    if (isDirectory(path)) out.push(...markdownBelow(path, seen));
    else if (entry.name.endsWith(".md") && isFile(path)) out.push(path);
  }
  return out;
}

/** True when the real path `real` is `root` or below it. */
function isInside(real: string, root: string): boolean {
  return real === root || real.startsWith(root === "/" ? "/" : `${root}/`);
}

/** `path` with every link resolved, or `path` itself when it cannot be resolved. */
function realOrSelf(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}

/** The directories from `/` down to `root`, `root` last. */
function ancestry(root: string): string[] {
  const dirs: string[] = [];
  for (let d = root;; d = dirname(d)) {
    dirs.unshift(d);
    if (d === "/" || d === "" || dirname(d) === d) break;
  }
  return dirs;
}

function join(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

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
function splitGlobs(value: string): string[] {
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
  const globs = (typeof value === "string" ? [value] : value).flatMap(splitGlobs)
    .map((g) => (g.endsWith("/**") ? g.slice(0, -3) : g))
    .filter((g) => g !== "");
  return !(globs.length === 0 || globs.every((g) => g === "**"));
}

/** Collects instruction sources in request order, each file once. */
class Instructions {
  readonly sources: LoadedSource[] = [];
  /** Every instruction file Claude Code reads (loaded, empty once shown, or path-scoped). */
  readonly read = new Set<string>();
  readonly #seen = new Set<string>();
  readonly #roots: ModelRoots;

  constructor(roots: ModelRoots) {
    this.#roots = roots;
  }

  has(path: string): boolean {
    return this.#seen.has(this.#key(path));
  }

  #key(path: string): string {
    try {
      return Deno.realPathSync(path);
    } catch {
      return path;
    }
  }

  /**
   * Add `path` (and its imports, depth first after it) when it exists and sends any text.
   * `userLevel` files may import anything; project files only inside the project.
   */
  add(
    path: string,
    root: RootLabel,
    options: { userLevel: boolean; rule?: boolean; importedBy?: string; depth?: number },
  ): "added" | "skipped" {
    const key = this.#key(path);
    if (this.#seen.has(key)) return "added";
    const read = readText(path);
    if (read.kind === "missing") return "skipped";
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
    // Imports resolve from the importer's real folder (a linked CLAUDE.md imports beside its
    // target), and a project file's import must really lie inside the project (links resolved).
    const from = realOrSelf(path);
    const project = realOrSelf(this.#roots.project);
    for (const token of shown.imports) {
      const target = importPath(token, from, this.#roots.home);
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

/**
 * Claude Code's project folder name for `path`: every UTF-16 unit outside `[A-Za-z0-9]` as `-`;
 * past {@linkcode MEMORY_INDEX.maxSlug} units, the first ones, `-` and a base-36 hash of the path
 * (`(h << 5) - h + unit`, 32-bit, its absolute value).
 *
 * @example
 * ```ts
 * import { projectSlug } from "./claude_model.ts";
 * projectSlug("/home/u/my_app.v2"); // "-home-u-my-app-v2"
 * ```
 */
export function projectSlug(path: string): string {
  const slug = path.replace(/[^A-Za-z0-9]/g, "-");
  if (slug.length <= MEMORY_INDEX.maxSlug) return slug;
  let hash = 0;
  for (let i = 0; i < path.length; i++) hash = ((hash << 5) - hash + path.charCodeAt(i)) | 0;
  return `${slug.slice(0, MEMORY_INDEX.maxSlug)}-${Math.abs(hash).toString(36)}`;
}

/** The auto-memory folder Claude Code reads for `project` (its git top-level, else itself). */
export function memoryFolder(global: string, project: string): string {
  return `${global}/projects/${projectSlug(gitToplevel(project) ?? project)}/memory`;
}

function instructionSources(roots: ModelRoots): {
  sources: LoadedSource[];
  read: ReadonlySet<string>;
  agentsMdLoaded: boolean;
  memoryDir: string;
} {
  const out = new Instructions(roots);
  if (roots.includeGlobal) {
    out.add(`${roots.global}/CLAUDE.md`, "global", { userLevel: true });
    // A rule is read under its real path (links resolved), as Claude Code names it.
    for (const rule of markdownBelow(`${roots.global}/rules`)) {
      out.add(realOrSelf(rule), "global", { userLevel: true, rule: true });
    }
  }
  const dirs = ancestry(roots.project);
  const project = realOrSelf(roots.project);
  const claudeMdAnywhere = dirs.some((d) =>
    ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"].some((f) => isFile(join(d, f)))
  );
  for (const dir of dirs) {
    out.add(join(dir, "CLAUDE.md"), "project", { userLevel: false });
    out.add(join(dir, ".claude/CLAUDE.md"), "project", { userLevel: false });
    if (!claudeMdAnywhere) {
      out.add(join(dir, "AGENTS.md"), "project", { userLevel: false });
      out.add(join(dir, ".claude/AGENTS.md"), "project", { userLevel: false });
    }
    for (const rule of markdownBelow(join(dir, ".claude/rules"))) {
      // A project rule reached through a link that leads outside the project is not loaded
      // (a parent directory's own rules are).
      const real = realOrSelf(rule);
      if (real !== rule && !isInside(real, project)) continue;
      out.add(real, "project", { userLevel: false, rule: true });
    }
    out.add(join(dir, "CLAUDE.local.md"), "project", { userLevel: false });
  }
  const memoryDir = memoryFolder(roots.global, roots.project);
  const memory = `${memoryDir}/MEMORY.md`;
  const read = readText(memory);
  if (read.kind === "text") {
    const shown = shownText(read.text);
    const cut = memoryIndexText(shown.text);
    const limits = new Set<LimitCode>();
    if (shown.frontmatterStripped) limits.add("frontmatter-stripped");
    if (shown.commentsHidden) limits.add("html-comments-hidden");
    if (cut.truncated) limits.add("memory-truncated");
    if (cut.text !== "") {
      out.sources.push({
        path: memory,
        root: "project",
        category: "memory-files",
        kind: "file",
        loading: "memory-index-limited",
        potential: read.size,
        loaded: utf8(cut.text),
        limits,
      });
    }
  } else if (read.kind === "large" || read.kind === "unreadable") {
    out.sources.push({
      path: memory,
      root: "project",
      category: "memory-files",
      kind: "file",
      loading: "memory-index-limited",
      potential: read.kind === "large" ? read.size : 0,
      loaded: 0,
      limits: new Set([read.kind === "large" ? "estimated-large-file" : "unreadable"]),
    });
  }
  return { sources: out.sources, read: out.read, agentsMdLoaded: !claudeMdAnywhere, memoryDir };
}

/** One listing entry before the budget. */
interface Entry {
  readonly source: LoadedSource;
  /** `- name`. */
  readonly nameOnly: string;
  /** `- name: description` (cut at the cap). */
  readonly full: string;
}

/** The description a skill or command lists, or undefined when it lists none. */
function listedDescription(
  fields: Map<string, unknown>,
  body: string,
  fallbackToBody: boolean,
): string | undefined {
  // Each run of tabs, carriage returns and newlines becomes one space; spaces stay as they are.
  const collapse = (s: string) => s.replace(/[\t\r\n]+/g, " ").trim();
  const described = scalar(fields.get("description") as string | string[] | undefined);
  let description = described === undefined ? "" : collapse(described);
  if (description === "" && fallbackToBody) {
    const first = body.split("\n").find((l) => l.trim() !== "");
    description = first === undefined ? "" : collapse(first.replace(/^\s*#+\s*/, ""));
  }
  const when = scalar(fields.get("when_to_use") as string | string[] | undefined);
  const whenText = when === undefined ? "" : collapse(when);
  if (description === "" && whenText === "") return undefined;
  return whenText === "" ? description : `${description} - ${whenText}`;
}

function cut(description: string): { text: string; capped: boolean } {
  const max = SKILL_LISTING.maxChars;
  return description.length > max
    ? { text: `${description.slice(0, max - 1)}…`, capped: true }
    : { text: description, capped: false };
}

function isTrue(value: unknown): boolean {
  return value === "true" || value === "True" || value === "yes";
}

function listingEntry(
  path: string,
  shownName: string,
  root: RootLabel,
  loading: Loading,
  fallbackToBody: boolean,
  evenIfDisabled = false,
): Entry | undefined {
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  const split = splitFrontmatter(read.text.replace(/^\uFEFF/, ""));
  const fields = split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml);
  if (!evenIfDisabled && isTrue(fields.get("disable-model-invocation"))) return undefined;
  const description = listedDescription(fields, split.body, fallbackToBody);
  if (description === undefined) return undefined;
  const listed = cut(description);
  const nameOnly = `- ${shownName}`;
  const full = `${nameOnly}: ${listed.text}`;
  const limits = new Set<LimitCode>(listed.capped ? ["description-capped"] : []);
  return {
    nameOnly,
    full,
    source: {
      path,
      root,
      category: "skills",
      kind: "field:description",
      loading,
      potential: utf8(`${nameOnly}: ${description}\n`),
      loaded: utf8(`${full}\n`),
      limits,
      name: shownName,
    },
  };
}

/** The skills of a `skills` folder: `<dir>/SKILL.md`, one level. */
function skillEntries(
  dir: string,
  root: RootLabel,
  prefix: string,
  considered: Set<string>,
): Entry[] {
  const out: Entry[] = [];
  for (const entry of listNames(dir)) {
    const path = `${dir}/${entry.name}/SKILL.md`;
    if (!isFile(path)) continue;
    considered.add(path);
    const name = `${prefix}${entry.name}`;
    const fields = frontmatterOf(path);
    const own = scalar(fields.get("name"));
    const shown = own !== undefined && own !== "" && own !== entry.name &&
        /^[A-Za-z0-9][A-Za-z0-9_.-]*$/.test(own)
      ? `${name} (${prefix}${own})`
      : name;
    const e = listingEntry(path, shown, root, "skill-listing", true);
    if (e !== undefined) out.push(e);
  }
  return out;
}

function frontmatterOf(path: string): Map<string, string | string[] | undefined> {
  const read = readText(path);
  if (read.kind !== "text") return new Map();
  const split = splitFrontmatter(read.text.replace(/^\uFEFF/, ""));
  return split.yaml === undefined ? new Map() : parseFrontmatter(split.yaml);
}

/** The commands of a `commands` folder: every `**\/*.md`, named `a:b` for `a/b.md`. */
function commandFiles(dir: string): { path: string; name: string }[] {
  return markdownBelow(dir).map((path) => ({
    path,
    name: path.slice(dir.length + 1, -3).replaceAll("/", ":"),
  }));
}

function commandEntries(
  files: { path: string; name: string; root: RootLabel }[],
  prefix: string,
): Entry[] {
  const out: Entry[] = [];
  for (const f of files) {
    const name = `${prefix}${f.name}`;
    // A project or global command without a description lists its first line; a plugin's is absent.
    const e = listingEntry(f.path, name, f.root, "command-listing", prefix === "");
    if (e !== undefined) out.push(e);
  }
  return out;
}

/** The listing budget in UTF-16 units. */
export function listingBudget(override: string | undefined): number {
  if (override !== undefined && /^[0-9]+$/.test(override.trim()) && Number(override) > 0) {
    return Number(override);
  }
  return LISTING_BUDGET.chars;
}

/**
 * Apply the listing budget to the user entries, as Claude Code applies it to the whole listing
 * (its built-in skills counted whole): when everything fits, nothing changes; otherwise each entry
 * counts as its name, and in listing order an entry keeps its description while what is left of
 * the budget covers it.
 */
export function applyBudget(entries: readonly Entry[], budget: number): string[] {
  const builtin = LISTING_BUDGET.builtin;
  const competing = builtin.competing.map((b) => ({
    full: b.chars,
    nameOnly: `- ${b.name}`.length,
  }));
  const count = entries.length + builtin.entries + competing.length;
  const sum = (f: (e: { full: number; nameOnly: number }) => number) =>
    entries.reduce((n, e) => n + f({ full: e.full.length, nameOnly: e.nameOnly.length }), 0) +
    competing.reduce((n, c) => n + f(c), 0) + builtin.chars + count - 1;
  if (sum((e) => e.full) <= budget) return [];
  let left = budget - sum((e) => e.nameOnly);
  for (const e of entries) {
    const extra = e.full.length - e.nameOnly.length;
    if (extra <= left) {
      left -= extra;
      continue;
    }
    e.source.loaded = utf8(`${e.nameOnly}\n`);
    e.source.limits.add("listing-budget");
  }
  // The competing built-ins come last; the names of those cut to their name.
  const cut: string[] = [];
  builtin.competing.forEach((b, i) => {
    const extra = competing[i].full - competing[i].nameOnly;
    if (extra <= left) left -= extra;
    else cut.push(b.name);
  });
  return cut;
}

/** The plugin name: `.claude-plugin/plugin.json`'s `name`, else the folder's name. */
export function pluginName(dir: string): string {
  const read = readText(`${dir}/.claude-plugin/plugin.json`);
  if (read.kind === "text") {
    try {
      const parsed = PluginManifestSchema.safeParse(JSON.parse(read.text));
      if (parsed.success && parsed.data.name !== "") return parsed.data.name;
    } catch { /* not JSON: the folder's name */ }
  }
  return basename(dir);
}

function agentSource(path: string, root: RootLabel, prefix: string): LoadedSource | undefined {
  const fields = frontmatterOf(path);
  const name = scalar(fields.get("name"));
  const description = scalar(fields.get("description"));
  if (name === undefined || name === "" || description === undefined || description === "") {
    return undefined;
  }
  const tools = fields.get("tools");
  const disallowed = fields.get("disallowedTools");
  const list = (v: unknown) =>
    (typeof v === "string" ? v.split(",") : Array.isArray(v) ? v : []).map((s) => String(s).trim())
      .filter((s) => s !== "");
  const allowed = list(tools);
  const denied = list(disallowed);
  const toolText = allowed.length > 0
    ? allowed.join(", ")
    : denied.length > 0
    ? `All tools except ${denied.join(", ")}`
    : "All tools";
  const entry = `- ${prefix}${name}: ${description} (Tools: ${toolText})\n`;
  return {
    path,
    root,
    category: "agents",
    kind: "field:description",
    loading: "agent-listing",
    potential: utf8(entry),
    loaded: utf8(entry),
    limits: new Set(),
    name: `${prefix}${name}`,
  };
}

/** What a `SessionStart` command prints when that is plain from the command itself. */
export function staticHookOutput(command: string): string | undefined {
  const echo =
    /^echo[ \t]+(?:"([^"`$\\]*)"|'([^']*)'|([^\s"'`$\\;&|<>(){}*?[\]~#]+(?:[ \t]+[^\s"'`$\\;&|<>(){}*?[\]~#]+)*))[ \t]*$/
      .exec(command.trim());
  if (echo === null) return undefined;
  return echo[1] ?? echo[2] ?? echo[3];
}

/**
 * A plugin's `SessionStart` hooks (`hooks/hooks.json`) as one source: the context the start-up hooks
 * inject (`SessionStart:startup hook success: <output>` and a blank line each) where the output is
 * plain from the command (`echo text`); any other command's output is known only when it runs
 * (`hook-runtime`, counted 0).
 */
function pluginHookSource(dir: string): LoadedSource | undefined {
  const path = `${dir}/hooks/hooks.json`;
  const read = readText(path);
  if (read.kind !== "text") return undefined;
  let parsed: PluginHooks | undefined;
  try {
    const result = PluginHooksSchema.safeParse(JSON.parse(read.text));
    parsed = result.success ? result.data : undefined;
  } catch {
    parsed = undefined;
  }
  const groups = parsed?.hooks?.SessionStart ?? [];
  if (groups.length === 0) return undefined;
  const limits = new Set<LimitCode>();
  let loaded = 0;
  for (const group of groups) {
    let matches = true;
    try {
      matches = group.matcher === undefined || group.matcher === "" ||
        group.matcher === "*" || new RegExp(`^(?:${group.matcher})$`).test("startup");
    } catch {
      matches = group.matcher === "startup";
    }
    if (!matches) continue;
    for (const hook of group.hooks ?? []) {
      if (hook.type !== "command" || hook.command === undefined) continue;
      const output = staticHookOutput(hook.command);
      if (output === undefined) limits.add("hook-runtime");
      else if (output.trim() !== "") {
        loaded += utf8(`SessionStart:startup hook success: ${output.trim()}\n\n`);
      }
    }
  }
  return {
    path,
    root: "plugin",
    category: "hooks",
    kind: "hook-payload",
    loading: "hook-context",
    potential: read.size,
    loaded,
    limits,
  };
}

/**
 * The whole model for `roots`: instruction sources, auto-memory, then the skill listing (global
 * skills, the project's and its parents' skills, commands, then plugins' commands and skills, the
 * budget applied to all of them), the agent listing and plugin hooks.
 */
export function loadingModel(roots: ModelRoots): LoadingModel {
  const instructions = instructionSources(roots);
  const dirs = ancestry(roots.project).reverse(); // the project first, then its parents
  const entries: Entry[] = [];
  const considered = new Set<string>();
  if (roots.includeGlobal) {
    entries.push(...skillEntries(`${roots.global}/skills`, "global", "", considered));
  }
  for (const dir of dirs) {
    entries.push(...skillEntries(join(dir, ".claude/skills"), "project", "", considered));
  }
  const commands: { path: string; name: string; root: RootLabel }[] = [];
  if (roots.includeGlobal) {
    for (const c of commandFiles(`${roots.global}/commands`)) {
      commands.push({ ...c, root: "global" });
    }
  }
  for (const dir of dirs) {
    for (const c of commandFiles(join(dir, ".claude/commands"))) {
      commands.push({ ...c, root: "project" });
    }
  }
  commands.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const c of commands) considered.add(c.path);
  entries.push(...commandEntries(commands, ""));
  const agents: LoadedSource[] = [];
  // Agents of one name: the project's (nearest folder first) win over the global one.
  const agentFiles: { path: string; root: RootLabel }[] = [];
  for (const dir of dirs) {
    for (const p of markdownBelow(join(dir, ".claude/agents"))) {
      agentFiles.push({ path: p, root: "project" });
    }
  }
  if (roots.includeGlobal) {
    for (const p of markdownBelow(`${roots.global}/agents`)) {
      agentFiles.push({ path: p, root: "global" });
    }
  }
  const hooks: LoadedSource[] = [];
  for (const dir of roots.pluginDirs) {
    const prefix = `${pluginName(dir)}:`;
    const pluginCommands = commandFiles(`${dir}/commands`).map((c) => ({
      ...c,
      root: "plugin" as const,
    }));
    entries.push(...commandEntries(pluginCommands, prefix));
    entries.push(...skillEntries(`${dir}/skills`, "plugin", prefix, considered));
    // A plugin agent in a subfolder is namespaced by it too (`plugin:sub:name`).
    for (const p of markdownBelow(`${dir}/agents`)) {
      const folders = dirname(p).slice(`${dir}/agents`.length).split("/").filter((f) => f !== "");
      const a = agentSource(p, "plugin", `${prefix}${folders.map((f) => `${f}:`).join("")}`);
      if (a !== undefined) agents.push(a);
    }
    const hook = pluginHookSource(dir);
    if (hook !== undefined) hooks.push(hook);
  }
  const named = new Set<string>();
  for (const f of agentFiles) {
    const a = agentSource(f.path, f.root, "");
    if (a === undefined || named.has(a.name!)) continue;
    named.add(a.name!);
    agents.push(a);
  }
  // One entry per name, the first listed: global over project, project over parents, skills over
  // commands (observed: name-clashes).
  const names = new Set<string>();
  const listed = entries.filter((e) => {
    if (names.has(e.nameOnly)) return false;
    names.add(e.nameOnly);
    return true;
  });
  const builtinsCut = applyBudget(listed, listingBudget(roots.budgetOverride));
  return {
    sources: [...instructions.sources, ...listed.map((e) => e.source), ...agents, ...hooks],
    agentsMdLoaded: instructions.agentsMdLoaded,
    memoryDir: instructions.memoryDir,
    listingFiles: considered,
    instructionFiles: instructions.read,
    builtinsCut,
  };
}
