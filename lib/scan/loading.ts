/**
 * The `--loaded` step (`references/context-scan.md#loaded-figures`): what Claude Code loads of each
 * inventoried row, by the documented rules of `loading_rules.ts`. It adds one skill-listing row per
 * `SKILL.md`, then streams each row's file once more (bounded memory: one chunk plus the head of
 * one line) to give it `loaded_bytes`, `loaded_tokens` and `limits`.
 *
 * Loaded figures are what the agent receives at the point the row's tier names: session start for
 * `always-on` (so a path-scoped rule or a memory topic file counts 0 there, with a limit saying
 * why), the spawn of that agent for `per-spawn`, the invocation of that skill — or the read of that
 * reference — for `per-invocation`.
 *
 * @module
 */

import { isAbsent } from "../_fs/errors.ts";
import { basename, dirname, envValue } from "../paths.ts";
import type { CandidateRow } from "./discovery.ts";
import { scanFile, statFollow } from "./files.ts";
import { IMPORTS, LIMIT_MEANINGS, MEMORY_INDEX, SKILL_LISTING } from "./loading_rules.ts";
import { InstructionScanner, type SkillListingFields, SkillListingScanner } from "./markdown.ts";
import { tokensOf } from "./measure.ts";
import type { LoadingStep } from "./scan.ts";
import type { LimitCode, ScanRow } from "./schema.ts";

/** A row's loaded figure before it is written into the row. */
export interface LoadedFigure {
  /** Bytes the agent receives at the row's point. */
  bytes: number;
  /** The limits that shaped it. */
  limits: Set<LimitCode>;
}

// A plain list, not the zod enum: `--loaded` parses no JSON, so it needs no zod.
const LIMIT_ORDER = Object.keys(LIMIT_MEANINGS) as LimitCode[];

/** `limits` in the documented order (that of `LIMIT_MEANINGS` and `LimitCodeSchema`). */
function ordered(limits: ReadonlySet<LimitCode>): LimitCode[] {
  return LIMIT_ORDER.filter((code) => limits.has(code));
}

function figure(bytes: number, ...limits: LimitCode[]): LoadedFigure {
  return { bytes, limits: new Set(limits) };
}

/** How `--loaded` resolves what it cannot see in a file. */
export interface LoadingOptions {
  /** The home directory `@~/…` imports resolve against (default `$HOME`; none: not followed). */
  home?: string;
}

/**
 * The file an `@path` token names, or `undefined` when the token is not an import
 * (`references/context-scan.md#imports`): the text after `@` up to whitespace, minus a `#fragment`;
 * `~/…` is below `home`, `/…` absolute, and a path starting with a letter, digit, `.`, `_` or `-`
 * is relative to the importing file's directory.
 *
 * @example
 * ```ts
 * import { importTarget } from "./loading.ts";
 * importTarget("docs/a.md#setup", "/r/CLAUDE.md", "/home/u"); // "/r/docs/a.md"
 * importTarget("~/notes.md", "/r/CLAUDE.md", "/home/u"); // "/home/u/notes.md"
 * importTarget("someone", "/r/CLAUDE.md", undefined); // "/r/someone" (ignored unless it exists)
 * importTarget("#tag", "/r/CLAUDE.md", undefined); // undefined
 * ```
 */
export function importTarget(
  token: string,
  importer: string,
  home: string | undefined,
): string | undefined {
  const hash = token.indexOf("#");
  const path = hash === -1 ? token : token.slice(0, hash);
  if (path.startsWith("~/")) return home === undefined ? undefined : `${home}${path.slice(1)}`;
  if (path.startsWith("/")) return path === "/" ? undefined : path;
  if (!/^[A-Za-z0-9._-]/.test(path)) return undefined;
  return `${dirname(importer)}/${path}`;
}

/** The identity of a regular file for de-duplication: device + inode, else the path. */
function identity(info: Deno.FileInfo, path: string): string {
  return info.ino === null ? `path:${path}` : `${info.dev}:${info.ino}`;
}

/**
 * An auto-loaded instruction file with its `@path` imports: the file's shown bytes plus those of
 * every file reachable within {@linkcode IMPORTS.maxHops} hops (breadth first, each file once), all
 * with HTML comments hidden. `undefined` when the file itself cannot be read.
 */
export function instructionWithImports(
  path: string,
  home: string | undefined,
): LoadedFigure | undefined {
  const limits = new Set<LimitCode>();
  const seen = new Set<string>();
  const own = statFollow(path);
  if (!("error" in own)) seen.add(identity(own, path));
  const queue: { path: string; hop: number }[] = [{ path, hop: 0 }];
  let bytes = 0;
  for (let next = 0; next < queue.length; next++) {
    const at = queue[next];
    const onImport = (token: string) => {
      const target = importTarget(token, at.path, home);
      if (target === undefined) return;
      const st = statFollow(target);
      if ("error" in st) {
        if (!isAbsent(st.error)) limits.add("import-unreadable");
        return;
      }
      if (!st.isFile) return;
      const id = identity(st, target);
      if (seen.has(id)) return; // a cycle, or already counted
      if (at.hop + 1 > IMPORTS.maxHops) {
        limits.add("import-depth-exceeded");
        return;
      }
      seen.add(id);
      queue.push({ path: target, hop: at.hop + 1 });
    };
    const read = scanFile(at.path, new InstructionScanner({ onImport }));
    if (!read.ok) {
      if (at.hop === 0) return undefined;
      limits.add("import-unreadable");
      continue;
    }
    bytes += read.result.bytes;
    if (read.result.commentsHidden) limits.add("html-comments-hidden");
    if (at.hop > 0) limits.add("imports-included");
  }
  return { bytes, limits };
}

/** A rule or other auto-loaded file without imports: HTML comments hidden. */
function shownText(path: string): LoadedFigure | undefined {
  const read = scanFile(path, new InstructionScanner());
  if (!read.ok) return undefined;
  return figure(
    read.result.bytes,
    ...(read.result.commentsHidden ? ["html-comments-hidden" as const] : []),
  );
}

/** `MEMORY.md`: frontmatter and HTML comments removed, then the first 200 lines / 25 KB. */
export function memoryIndex(path: string): LoadedFigure | undefined {
  const limit = { lines: MEMORY_INDEX.lines, bytes: MEMORY_INDEX.bytes };
  const read = scanFile(path, new InstructionScanner({ frontmatter: true, limit }));
  if (!read.ok) return undefined;
  const limits = new Set<LimitCode>();
  if (read.result.commentsHidden) limits.add("html-comments-hidden");
  if (read.result.truncated) limits.add("memory-truncated");
  return { bytes: read.result.bytes, limits };
}

/** A skill's listing: its potential bytes (uncapped) and what loads at start-up. */
export interface SkillListing {
  /** Name + description (+ `\n` + when_to_use) bytes, uncapped. */
  bytes: number;
  /** What loads at start-up. */
  loaded: LoadedFigure;
}

const encoder = new TextEncoder();

/**
 * The listing of the skill whose `SKILL.md` gave `fields`: the name (the frontmatter's `name`, else
 * the skill directory's name) plus the description joined by `\n` with `when_to_use`, the latter
 * capped at {@linkcode SKILL_LISTING.maxChars} UTF-16 units.
 */
export function skillListing(skillPath: string, fields: SkillListingFields): SkillListing {
  const name = fields.name?.bytes ?? encoder.encode(basename(dirname(skillPath))).length;
  const d = fields.description;
  const w = fields.whenToUse;
  const sep = d !== undefined && w !== undefined ? 1 : 0;
  const units = (d?.units ?? 0) + sep + (w?.units ?? 0);
  const text = (d?.bytes ?? 0) + sep + (w?.bytes ?? 0);
  const cap = SKILL_LISTING.maxChars;
  let capped = text;
  if (units > cap) {
    const dUnits = d?.units ?? 0;
    if (d !== undefined && dUnits >= cap) capped = d.bytesWithin(cap);
    else {
      const rest = cap - dUnits - sep;
      capped = (d?.bytes ?? 0) + sep + (w === undefined ? 0 : w.bytesWithin(rest));
    }
  }
  const limits: LimitCode[] = fields.notListed
    ? ["not-listed"]
    : units > cap
    ? ["description-capped"]
    : [];
  return { bytes: name + text, loaded: figure(fields.notListed ? 0 : name + capped, ...limits) };
}

/** The loaded figure of an admitted row (`undefined`: its file could not be read again). */
function loadedOf(
  row: ScanRow,
  listings: ReadonlyMap<string, SkillListing>,
  home: string | undefined,
): LoadedFigure | undefined {
  const potential = () => figure(row.bytes);
  switch (row.loading) {
    case "startup-instruction":
      return instructionWithImports(row.path, home);
    case "unscoped-rule":
      return shownText(row.path);
    case "memory-index-limited":
      return memoryIndex(row.path);
    case "path-scoped-rule":
      return figure(0, "path-scoped");
    case "client-or-import-dependent":
    case "import-or-read-required":
      return figure(0, "import-only");
    case "on-demand":
      // A memory topic file loads when read; a skill's reference is read after its invocation.
      return row.tier === "always-on" ? figure(0, "on-demand") : potential();
    case "skill-listing":
      return listings.get(row.path)?.loaded;
    case "runtime-dependent":
    case "selected-agent":
    case "invoked-skill":
      return potential(); // no documented rule: the potential figure is kept
  }
}

/**
 * The `--loaded` step for a scan.
 *
 * @example
 * ```ts ignore
 * import { scanProject } from "./scan.ts";
 * import { createLoadingStep } from "./loading.ts";
 * const { document } = scanProject({ root: ".", loaded: true }, createLoadingStep());
 * console.log(document.totals["always-on"].loaded?.tokens);
 * ```
 */
export function createLoadingStep(options: LoadingOptions = {}): LoadingStep {
  const home = options.home ?? envValue("HOME");
  const listings = new Map<string, SkillListing>();
  return {
    addRows(candidates: readonly CandidateRow[]): CandidateRow[] {
      const rows: CandidateRow[] = [];
      for (const row of candidates) {
        rows.push(row);
        if (row.loading !== "invoked-skill" || row.kind !== "file") continue;
        const read = scanFile(row.path, new SkillListingScanner(SKILL_LISTING.maxChars));
        if (!read.ok) continue;
        const listing = skillListing(row.path, read.result);
        listings.set(row.path, listing);
        rows.push({
          path: row.path,
          root: row.root,
          tier: "always-on",
          kind: "field:description",
          bytes: listing.bytes,
          estimated: false,
          loading: "skill-listing",
        });
      }
      return rows;
    },
    annotate(rows: readonly ScanRow[]): ScanRow[] {
      return rows.map((row) => {
        const loaded = loadedOf(row, listings, home) ?? figure(row.bytes, "unreadable");
        return {
          ...row,
          loaded_bytes: loaded.bytes,
          loaded_tokens: tokensOf(loaded.bytes),
          limits: ordered(loaded.limits),
        };
      });
    },
  };
}
