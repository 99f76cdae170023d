/**
 * `manifest.json` of a context-guard run dir (`references/context-guard.md#the-manifest`): the one
 * place that writes, parses and validates it. The zod schema below is the document's single
 * definition.
 *
 * @module
 */

import { z } from "zod";
import { listRegularFiles } from "../_fs/dirs.ts";
import { isRegularNoFollow } from "../_fs/inspect.ts";
import { hashFile, readRegular } from "../_fs/read.ts";
import { writeFileAtomic } from "../_fs/write.ts";
import { jsonString } from "../json.ts";
import { shellQuote } from "../shell.ts";
import { text } from "../text.ts";
import { ManifestError } from "./errors.ts";
import { requireSnapshotDir } from "./run_dir.ts";
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
 * The manifest exactly as `snapshot` writes it, published as
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

/** The manifest's `restore_cmd`. */
export function restoreCommand(scriptPath: string, layer: Layer, runDir: string): string {
  return `deno run --allow-all ${shellQuote(scriptPath)} restore --${layer} --run-dir ${
    shellQuote(runDir)
  }`;
}

/** Entries for every distinct regular file under `<run dir>/orig`, sorted by path (hashed in chunks). */
export function manifestEntries(runDir: string): ManifestEntry[] {
  return listRegularFiles(`${runDir}/orig`).map((rel) => {
    const { size, sha256 } = hashFile(`${runDir}/orig/${rel}`, { follow: false });
    return { path: rel, size, sha256 };
  });
}

/** The exact manifest text (documented layout and key order, final `\n`). */
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

/**
 * Write the manifest atomically (`0600`) into `dir` (default: the run dir), then re-read and parse
 * it. Returns its path.
 */
export function writeManifest(doc: ManifestDocument, dir: string = doc.runDir): string {
  const path = `${dir}/manifest.json`;
  writeFileAtomic(path, renderManifest(doc), { mode: 0o600, exactMode: true });
  try {
    ManifestSchema.parse(JSON.parse(new TextDecoder().decode(readRegular(path))));
  } catch {
    throw new ManifestError(path, "not-written", text`manifest is not valid JSON: ${path}`);
  }
  return path;
}

/** True when a manifest path is safe: relative, non-empty, no NUL, no empty/`.`/`..` component. */
export function isSafeManifestPath(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.includes("\0")) return false;
  return path.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/**
 * Read and validate the manifest of `runDir`; every defect is a {@linkcode ManifestError}, checked
 * in the documented order before anything is written.
 */
export function readManifest(runDir: string): ManifestRead {
  requireSnapshotDir(runDir);
  const m = `${runDir}/manifest.json`;
  if (!isRegularNoFollow(m)) throw new ManifestError(m, "missing", text`no manifest: ${m}`);
  let parsed: z.infer<typeof ManifestSchema>;
  try {
    const json = new TextDecoder("utf-8", { fatal: true }).decode(
      readRegular(m, { follow: false }),
    );
    parsed = ManifestSchema.parse(JSON.parse(json));
  } catch {
    throw new ManifestError(m, "unreadable", text`unreadable manifest (invalid JSON?): ${m}`);
  }
  const root = parsed.root;
  if (root === undefined || root === null || root === "") {
    throw new ManifestError(m, "no-root", text`manifest has no root: ${m}`);
  }
  if (typeof root !== "string" || !root.startsWith("/") || root.includes("\0")) {
    throw new ManifestError(m, "relative-root", text`manifest root is not an absolute path: ${m}`);
  }
  if (parsed.files.length === 0) {
    throw new ManifestError(m, "empty", text`empty snapshot: ${m} lists no files`);
  }
  const seen = new Set<string>();
  const files: ManifestRead["files"] = [];
  for (const entry of parsed.files) {
    if (!isSafeManifestPath(entry.path)) {
      throw new ManifestError(
        m,
        "unsafe-path",
        text`unsafe manifest path: ${entry.path} (${m})`,
        entry.path,
      );
    }
    if (seen.has(entry.path)) {
      throw new ManifestError(
        m,
        "duplicate-path",
        text`duplicate manifest path: ${entry.path} (${m})`,
        entry.path,
      );
    }
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
      new TextDecoder().decode(readRegular(`${runDir}/manifest.json`, { follow: false })),
    );
    const layer = ManifestHeadSchema.parse(raw).layer;
    return typeof layer === "string" && /^[a-z]+$/.test(layer) ? layer : "?";
  } catch {
    return "?";
  }
}
