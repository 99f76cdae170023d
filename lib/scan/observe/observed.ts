/**
 * From a parsed request to the document's `observed` object
 * (`references/context-scan.md#observed`): the bytes per `/context` group, and one source row per
 * instruction file (its real path, not the private copy's), listing entry (the file it came from
 * when one matches, else built-in) and hook output. Pure but for the reads that size a file and
 * read a listing entry's name.
 *
 * @module
 */

import { readHead } from "../../_fs/read.ts";
import { basename } from "../../paths.ts";
import { CONTEXT_CATEGORIES, type ContextCategory } from "../categories.ts";
import { tokensOf } from "../measure.ts";
import { type LoadedSource, type LoadingModel, loadingModel } from "../claude_model.ts";
import { BUILT_IN_ENTRIES } from "../loading_rules.ts";
import type { ScanObserved, ScanObservedSource } from "../schema.ts";
import { LAYOUT_CHECKED_ON, type ObservedRequest } from "./request.ts";

/** Where the sources of an observation live. */
export interface ObservedPlaces {
  /** The project root `claude` ran in. */
  readonly root: string;
  /** The real global root (`CLAUDE_CONFIG_DIR`, else `~/.claude`). */
  readonly global: string;
  /** `--plugin-dir` values (absolute). */
  readonly pluginDirs: readonly string[];
  /** Maps a path of the private config copy back to the real global root. */
  readonly realPath: (path: string) => string;
}

/** A listing entry's file: which kind it is and where it lies. */
interface ListedFile {
  readonly kind: "skill" | "command" | "agent";
  readonly path: string;
}

/**
 * Every skill, command and agent entry Claude Code could list for this run, by the name its entry
 * carries, and the file it comes from: the loading model's own listing
 * (`references/context-scan.md#loaded-figures`), so an observed entry is matched by the same
 * naming rules `--loaded` follows (`dir (name)`, `a:b` commands, `plugin:` prefixes). Global
 * entries count whether or not `--global` was given: Claude Code lists them.
 */
export function listedFiles(
  places: ObservedPlaces,
  model: LoadingModel = modelOf(places),
): Map<string, ListedFile> {
  const index = new Map<string, ListedFile>();
  for (const source of model.sources) {
    if (source.name === undefined || index.has(source.name)) continue;
    const kind = LISTING_KINDS[source.loading];
    if (kind !== undefined) index.set(source.name, { kind, path: source.path });
  }
  return index;
}

/** The loading model of the observed run (`references/context-scan.md#loaded-figures`). */
function modelOf(places: ObservedPlaces): LoadingModel {
  return loadingModel({
    project: places.root,
    global: places.global,
    includeGlobal: true,
    home: undefined,
    pluginDirs: places.pluginDirs,
  });
}

/**
 * What each instruction file of the model is, by its path: an import (it has an importer), the
 * memory index, a rule (below any `.claude/rules/` or the global `rules/`), else an instruction.
 */
function modelKinds(
  model: LoadingModel,
  places: Pick<ObservedPlaces, "root" | "global">,
): Map<string, InstructionKind> {
  const kinds = new Map<string, InstructionKind>();
  for (const s of model.sources) {
    if (s.category !== "memory-files") continue;
    kinds.set(
      s.path,
      s.importedBy !== undefined
        ? "import"
        : s.loading === "memory-index-limited"
        ? "memory-index"
        : s.rule || isRulePath(s.path, places)
        ? "rule"
        : "instruction",
    );
  }
  return kinds;
}

function isRulePath(path: string, places: Pick<ObservedPlaces, "global">): boolean {
  return path.includes("/.claude/rules/") || path.startsWith(`${places.global}/rules/`);
}

/** What an observed instruction file is. */
type InstructionKind = "instruction" | "rule" | "import" | "memory-index";

const LISTING_KINDS: Partial<Record<LoadedSource["loading"], ListedFile["kind"]>> = {
  "skill-listing": "skill",
  "command-listing": "command",
  "agent-listing": "agent",
};

function fileSize(path: string): number | null {
  try {
    return Deno.statSync(path).size;
  } catch {
    return null;
  }
}

function fileText(path: string): string | undefined {
  try {
    return new TextDecoder().decode(readHead(path, 64 * 1024 * 1024).bytes);
  } catch {
    return undefined;
  }
}

/**
 * What kind of instruction file `path` (a real path) is: as the loading model loaded it when it
 * did (`kinds`), else by its place.
 */
export function instructionKind(
  path: string,
  places: Pick<ObservedPlaces, "root" | "global">,
  kinds: ReadonlyMap<string, InstructionKind> = new Map(),
): InstructionKind {
  const known = kinds.get(path);
  if (known !== undefined) return known;
  const name = basename(path);
  if (name === "MEMORY.md" && path.startsWith(`${places.global}/projects/`)) return "memory-index";
  if (name === "CLAUDE.md" || name === "CLAUDE.local.md") return "instruction";
  for (const rules of [`${places.root}/.claude/rules/`, `${places.global}/rules/`]) {
    if (path.startsWith(rules)) return "rule";
  }
  return "import";
}

const size = (n: number) => ({ bytes: n, tokens: tokensOf(n) });

/** A request's bytes per `/context` group (every group, in report order) and in all. */
export function requestSizes(
  request: ObservedRequest,
): { categories: ScanObserved["categories"]; total: ScanObserved["total"] } {
  const bytes = new Map<ContextCategory, number>(CONTEXT_CATEGORIES.map((c) => [c.key, 0]));
  for (const p of request.parts) bytes.set(p.category, (bytes.get(p.category) ?? 0) + p.bytes);
  const categories = Object.fromEntries(
    CONTEXT_CATEGORIES.map((c) => [c.key, size(bytes.get(c.key) ?? 0)]),
  ) as ScanObserved["categories"];
  return { categories, total: size(request.parts.reduce((n, p) => n + p.bytes, 0)) };
}

/** Build the `observed` object of one observation. */
export function buildObserved(
  request: ObservedRequest,
  seen: { version: string; sandboxed: boolean; warnings: readonly string[] },
  places: ObservedPlaces,
): ScanObserved {
  const { categories, total } = requestSizes(request);

  const model = modelOf(places);
  const listed = listedFiles(places, model);
  const kinds = modelKinds(model, places);
  const style = model.sources.find((s) => s.loading === "output-style");
  const warnings: string[] = [];
  const sources: ScanObservedSource[] = [];
  for (const p of request.parts) {
    if (p.label === "output style") {
      sources.push({
        category: p.category,
        kind: "output-style",
        name: p.label,
        path: style?.path ?? null,
        built_in: style === undefined,
        ...size(p.bytes),
      });
    } else if (p.category === "memory-files" && p.path !== undefined) {
      const path = places.realPath(p.path);
      const kind = instructionKind(path, places, kinds);
      const row: ScanObservedSource = {
        category: p.category,
        kind,
        name: path,
        path,
        built_in: false,
        ...size(p.bytes),
        origin: p.origin ?? "",
        file_bytes: fileSize(path),
      };
      if (kind === "memory-index") {
        const whole = fileText(path);
        row.cut = whole === undefined || !p.text.startsWith(whole.trimEnd());
      }
      sources.push(row);
    } else if ((p.category === "skills" || p.category === "agents") && p.label !== "heading") {
      const file = listed.get(p.label);
      const matches = file !== undefined && (p.category === "agents") === (file.kind === "agent");
      // Claude Code's own entries are the ones it lists in an empty project (loading_rules.ts).
      const builtIn = !matches && BUILT_IN_ENTRIES[p.category].includes(p.label);
      if (!matches && !builtIn) {
        warnings.push(
          `not attributed: ${p.category} entry ${p.label} (${p.bytes} bytes): no file of this run lists it`,
        );
      }
      sources.push({
        category: p.category,
        kind: matches ? file.kind : p.category === "agents" ? "agent" : "skill",
        name: p.label,
        path: matches ? file.path : null,
        built_in: builtIn,
        ...size(p.bytes),
      });
    } else if (p.category === "hooks") {
      sources.push({
        category: "hooks",
        kind: "hook",
        name: p.label,
        path: null,
        built_in: false,
        ...size(p.bytes),
      });
    }
  }
  return {
    claude_code_version: seen.version,
    sandboxed: seen.sandboxed,
    layout_checked_on: [...LAYOUT_CHECKED_ON],
    categories,
    total,
    sources,
    warnings: [...seen.warnings, ...request.warnings, ...warnings],
  };
}
