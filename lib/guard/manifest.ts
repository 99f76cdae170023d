/**
 * `manifest.json` of a context-guard run dir (spec §7.2): the one place that writes, parses and
 * validates it. The zod schema below is the document's single definition.
 *
 * @module
 */

import { lstatSync, readFileSync } from "node:fs";
import { z } from "zod";
import { writeFileAtomic } from "../atomic.ts";
import { die } from "../exit.ts";
import { jsonString } from "../json.ts";
import { isDirectory } from "../paths.ts";
import { listRegularFiles, sha256Hex } from "./fsx.ts";
import type { Layer } from "./roots.ts";

/**
 * The manifest as read from disk. Loose on purpose: unknown keys are ignored, and the fields whose
 * defects have their own message (`root`, `sha256`, `layer`) are checked after parsing.
 */
export const ManifestSchema = z.looseObject({
  root: z.unknown().optional(),
  layer: z.unknown().optional(),
  files: z.array(
    z.looseObject({ path: z.string(), sha256: z.unknown().optional() }),
  ),
});

/** The part of a manifest `list` reads: only `layer`. */
export const ManifestHeadSchema = z.looseObject({ layer: z.unknown().optional() });

/**
 * The manifest exactly as `snapshot` writes it (§7.2), published as
 * `references/schemas/manifest.schema.json` by `scripts/schemas.ts`. Readers use the loose
 * {@linkcode ManifestSchema}, whose defects each have their own message.
 */
export const WrittenManifestSchema = z.strictObject({
  timestamp: z.string().regex(/^[0-9]{8}-[0-9]{6}$/),
  mode: z.literal("snapshot"),
  layer: z.enum(["project", "global"]),
  root: z.string().startsWith("/"),
  run_dir: z.string().min(1),
  restore_cmd: z.string().startsWith("deno run --allow-all "),
  files: z.array(z.strictObject({
    path: z.string().min(1),
    size: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })).min(1),
});

/** A manifest entry as written. */
export interface ManifestEntry {
  /** Path relative to the root. */
  path: string;
  /** Byte count of the snapshot copy. */
  size: number;
  /** SHA-256 of the snapshot copy. */
  sha256: string;
}

/** The fields of a manifest written by `snapshot`. */
export interface ManifestDocument {
  /** `YYYYMMDD-HHMMSS` of the snapshot's clock reading. */
  timestamp: string;
  /** The layer. */
  layer: Layer;
  /** Layer root `R`. */
  root: string;
  /** Run dir as used. */
  runDir: string;
  /** The restore command line. */
  restoreCmd: string;
  /** Entries sorted by path. */
  files: ManifestEntry[];
}

/** A validated manifest, ready for restoring. */
export interface ManifestRead {
  /** Path of the manifest file. */
  path: string;
  /** Its absolute root `M`. */
  root: string;
  /** Entries in manifest order; `sha256` undefined when not a string (never matches). */
  files: { path: string; sha256: string | undefined }[];
}

/** POSIX single-quoting when `word` holds a character outside `A-Za-z0-9_@%+=:,./-` (§9 G12). */
export function shellQuote(word: string): string {
  if (word !== "" && /^[A-Za-z0-9_@%+=:,.\/-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** The manifest's `restore_cmd`. */
export function restoreCommand(scriptPath: string, layer: Layer, runDir: string): string {
  return `deno run --allow-all ${shellQuote(scriptPath)} restore --${layer} --run-dir ${
    shellQuote(runDir)
  }`;
}

/** Entries for every distinct regular file under `<run dir>/orig`, sorted by path. */
export function manifestEntries(runDir: string): ManifestEntry[] {
  return listRegularFiles(`${runDir}/orig`).map((rel) => {
    const bytes = readFileSync(`${runDir}/orig/${rel}`);
    return { path: rel, size: bytes.length, sha256: sha256Hex(bytes) };
  });
}

/** The exact manifest text (§7.2 layout and key order, final `\n`). */
export function renderManifest(doc: ManifestDocument): string {
  const entries = doc.files.map((e) =>
    `    {"path": ${jsonString(e.path)}, "size": ${e.size}, "sha256": ${jsonString(e.sha256)}}`
  );
  return [
    "{",
    `  "timestamp": ${jsonString(doc.timestamp)},`,
    `  "mode": "snapshot",`,
    `  "layer": ${jsonString(doc.layer)},`,
    `  "root": ${jsonString(doc.root)},`,
    `  "run_dir": ${jsonString(doc.runDir)},`,
    `  "restore_cmd": ${jsonString(doc.restoreCmd)},`,
    `  "files": [`,
    entries.join(",\n"),
    "  ]",
    "}",
    "",
  ].join("\n");
}

/** Write the manifest atomically (`0600`), then re-read and parse it. Returns its path. */
export function writeManifest(doc: ManifestDocument): string {
  const path = `${doc.runDir}/manifest.json`;
  writeFileAtomic(path, renderManifest(doc), { mode: 0o600, exactMode: true });
  try {
    ManifestSchema.parse(JSON.parse(new TextDecoder().decode(readFileSync(path))));
  } catch {
    die(`❌ manifest is not valid JSON: ${path}`);
  }
  return path;
}

/** True when a manifest path is safe: relative, non-empty, no NUL, no empty/`.`/`..` component. */
export function isSafeManifestPath(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.includes("\0")) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/**
 * Read and validate the manifest of `runDir`, dying with the §7.2 messages in their order (before
 * anything is written).
 */
export function readManifest(runDir: string): ManifestRead {
  if (!isDirectory(`${runDir}/orig`)) die(`❌ no snapshot dir: ${runDir}/orig`);
  const m = `${runDir}/manifest.json`;
  let regular = false;
  try {
    regular = lstatSync(m).isFile();
  } catch { /* absent */ }
  if (!regular) die(`❌ no manifest: ${m}`);
  let parsed: z.infer<typeof ManifestSchema>;
  try {
    const text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(m));
    parsed = ManifestSchema.parse(JSON.parse(text));
  } catch {
    die(`❌ unreadable manifest (invalid JSON?): ${m}`);
  }
  const root = parsed.root;
  if (root === undefined || root === null || root === "") die(`❌ manifest has no root: ${m}`);
  if (typeof root !== "string" || !root.startsWith("/") || root.includes("\0")) {
    die(`❌ manifest root is not an absolute path: ${m}`);
  }
  if (parsed.files.length === 0) die(`❌ empty snapshot: ${m} lists no files`);
  const seen = new Set<string>();
  const files: ManifestRead["files"] = [];
  for (const entry of parsed.files) {
    if (!isSafeManifestPath(entry.path)) die(`❌ unsafe manifest path: ${entry.path} (${m})`);
    if (seen.has(entry.path)) die(`❌ duplicate manifest path: ${entry.path} (${m})`);
    seen.add(entry.path);
    files.push({
      path: entry.path,
      sha256: typeof entry.sha256 === "string" ? entry.sha256 : undefined,
    });
  }
  return { path: m, root: root.length > 1 ? root.replace(/\/+$/, "") : root, files };
}

/** The manifest's `layer` for `list`: lowercase ASCII letters, else `?` (also when unreadable). */
export function manifestLayer(runDir: string): string {
  try {
    const raw: unknown = JSON.parse(
      new TextDecoder().decode(readFileSync(`${runDir}/manifest.json`)),
    );
    const layer = ManifestHeadSchema.parse(raw).layer;
    return typeof layer === "string" && /^[a-z]+$/.test(layer) ? layer : "?";
  } catch {
    return "?";
  }
}
