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
import { PluginManifestSchema, type ScanObserved, type ScanObservedSource } from "../schema.ts";
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

const FRONTMATTER_HEAD = 64 * 1024;

/** The `name:` value of a Markdown file's frontmatter (quotes dropped), or undefined. */
export function frontmatterName(path: string): string | undefined {
  let text: string;
  try {
    text = new TextDecoder().decode(readHead(path, FRONTMATTER_HEAD).bytes);
  } catch {
    return undefined;
  }
  const lines = text.split("\n");
  if (lines[0]?.trimEnd() !== "---") return undefined;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, "");
    if (line.trimEnd() === "---") return undefined;
    if (line.startsWith("name:")) {
      const value = line.slice(5).trim().replace(/^(["'])(.*)\1$/, "$2");
      return value === "" ? undefined : value;
    }
  }
  return undefined;
}

function listNames(dir: string): string[] {
  try {
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  } catch {
    return [];
  }
}

function isDirectory(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** `.md` files below `dir` as `a:b:c` names (Claude Code's namespacing of nested commands). */
function commandFiles(dir: string, prefix = "", depth = 0): [string, string][] {
  const out: [string, string][] = [];
  if (depth > 8) return out;
  for (const name of listNames(dir)) {
    const path = `${dir}/${name}`;
    if (isDirectory(path)) out.push(...commandFiles(path, `${prefix}${name}:`, depth + 1));
    else if (name.endsWith(".md")) out.push([`${prefix}${name.slice(0, -3)}`, path]);
  }
  return out;
}

/**
 * Every skill, command and agent file Claude Code could list for this run, by the name its entry
 * carries: the project's `.claude/`, the global root, and each `--plugin-dir` (names prefixed
 * `<plugin>:`). The first place wins a name.
 */
export function listedFiles(places: ObservedPlaces): Map<string, ListedFile> {
  const index = new Map<string, ListedFile>();
  const add = (name: string, file: ListedFile) => {
    if (!index.has(name)) index.set(name, file);
  };
  const scanBase = (base: string, prefix: string) => {
    for (const dir of listNames(`${base}/skills`)) {
      const path = `${base}/skills/${dir}/SKILL.md`;
      try {
        if (!Deno.statSync(path).isFile) continue;
      } catch {
        continue;
      }
      add(`${prefix}${frontmatterName(path) ?? dir}`, { kind: "skill", path });
    }
    for (const [name, path] of commandFiles(`${base}/commands`)) {
      add(`${prefix}${name}`, { kind: "command", path });
    }
    for (const [name, path] of commandFiles(`${base}/agents`)) {
      add(`${prefix}${frontmatterName(path) ?? basename(name)}`, { kind: "agent", path });
    }
  };
  scanBase(`${places.root}/.claude`, "");
  scanBase(places.global, "");
  for (const dir of places.pluginDirs) scanBase(dir, `${pluginName(dir)}:`);
  return index;
}

/** A plugin's name: its `.claude-plugin/plugin.json` `name`, else its directory's name. */
export function pluginName(dir: string): string {
  try {
    const bytes = readHead(`${dir}/.claude-plugin/plugin.json`, 1024 * 1024).bytes;
    const parsed = PluginManifestSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    if (parsed.success) return parsed.data.name;
  } catch { /* no manifest: the directory's name */ }
  return basename(dir.replace(/\/+$/, ""));
}

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

/** What kind of instruction file `path` (a real path) is. */
export function instructionKind(
  path: string,
  places: Pick<ObservedPlaces, "root" | "global">,
): "instruction" | "rule" | "import" | "memory-index" {
  const name = basename(path);
  if (name === "MEMORY.md" && path.startsWith(`${places.global}/projects/`)) return "memory-index";
  if (name === "CLAUDE.md" || name === "CLAUDE.local.md") return "instruction";
  for (const rules of [`${places.root}/.claude/rules/`, `${places.global}/rules/`]) {
    if (path.startsWith(rules)) return "rule";
  }
  return "import";
}

/** Build the `observed` object of one observation. */
export function buildObserved(
  request: ObservedRequest,
  seen: { version: string; sandboxed: boolean; warnings: readonly string[] },
  places: ObservedPlaces,
): ScanObserved {
  const bytes = new Map<ContextCategory, number>(CONTEXT_CATEGORIES.map((c) => [c.key, 0]));
  for (const p of request.parts) bytes.set(p.category, (bytes.get(p.category) ?? 0) + p.bytes);
  const size = (n: number) => ({ bytes: n, tokens: tokensOf(n) });
  const categories = Object.fromEntries(
    CONTEXT_CATEGORIES.map((c) => [c.key, size(bytes.get(c.key) ?? 0)]),
  ) as ScanObserved["categories"];
  const total = size(request.parts.reduce((n, p) => n + p.bytes, 0));

  const listed = listedFiles(places);
  const sources: ScanObservedSource[] = [];
  for (const p of request.parts) {
    if (p.category === "memory-files" && p.path !== undefined) {
      const path = places.realPath(p.path);
      const kind = instructionKind(path, places);
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
      sources.push({
        category: p.category,
        kind: matches ? file.kind : p.category === "agents" ? "agent" : "skill",
        name: p.label,
        path: matches ? file.path : null,
        // A plugin's entry (`plugin:name`) whose file is not found is not Claude Code's own.
        built_in: !matches && !p.label.includes(":"),
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
    warnings: [...seen.warnings, ...request.warnings],
  };
}
