/**
 * `manifest.json` of a context-guard run dir (`references/context-guard.md#the-manifest`): the one
 * place that writes, parses and validates it. The zod schema below is the document's single
 * definition.
 *
 * @module
 */

import * as z from "../_zod.ts";
import { listRegularFiles } from "../_fs/dirs.ts";
import { isRegularNoFollow, physicalPath } from "../_fs/inspect.ts";
import { hashFile, readRegular } from "../_fs/read.ts";
import { type Invoker, ownPrivate } from "../_fs/owner.ts";
import { writeFileAtomic } from "../_fs/write.ts";
import { jsonString } from "../json.ts";
import { shellCommand } from "../shell.ts";
import { selfCommand } from "../_cli/self.ts";
import { text } from "../text.ts";
import { asFileSystemError, ManifestError } from "./errors.ts";
import { requireSnapshotDir } from "./run_dir.ts";
import type { Layer } from "./roots.ts";

/**
 * The manifest as read from disk. Loose on purpose: unknown keys are ignored, and the fields whose
 * defects have their own message (`root`, `sha256`, `layer`) are checked after parsing.
 */
export const ManifestSchema = z.deferred(() =>
  z.looseObject({
    root: z.optional(z.unknown()),
    root_physical: z.optional(z.unknown()),
    layer: z.optional(z.unknown()),
    files: z.array(
      z.looseObject({
        path: z.string(),
        sha256: z.optional(z.unknown()),
        mode: z.optional(z.unknown()),
        link_target: z.optional(z.unknown()),
      }),
    ),
  })
);

/**
 * The largest creation sequence number a manifest may hold
 * (`references/context-guard.md#order`): far more runs than any backup root makes, and far below
 * 2^53, where `max + 1` stops counting.
 */
export const MAX_SEQ = 2 ** 31 - 1;

/** A valid `seq`: an integer from 1 to {@linkcode MAX_SEQ}. */
export const SeqSchema = z.deferred(() => z.int().check(z.minimum(1), z.maximum(MAX_SEQ)));

/**
 * What run selection needs from a manifest (`lib/guard/runs.ts`). A run whose manifest does not
 * give a layer, an absolute root and at least one file is not complete. `seq` is read through
 * {@linkcode SeqSchema} on its own: an invalid one is ignored (the run still counts, ordered as
 * one that recorded none), so one file can neither hide its run nor push every later run behind
 * it.
 */
export const ManifestHeadSchema = z.deferred(() =>
  z.looseObject({
    layer: z.enum(["project", "global"]),
    root: z.string().check(z.startsWith("/")),
    root_physical: z.optional(z.unknown()),
    files: z.array(z.unknown()).check(z.minLength(1)),
    created: z.optional(z.string()),
    seq: z.optional(z.unknown()),
    project_root: z.optional(z.string()),
  })
);

/** A file mode as the manifest records it: four octal digits, e.g. `0644`. */
const MODE = /^0[0-7]{3}$/;

/**
 * The manifest exactly as `snapshot` writes it, published as
 * `references/schemas/manifest.schema.json` by `scripts/schemas.ts`. Readers use the loose
 * {@linkcode ManifestSchema}, whose defects each have their own message.
 */
export const WrittenManifestSchema = z.deferred(() =>
  z.strictObject({
    timestamp: z.string().check(z.regex(/^[0-9]{8}-[0-9]{6}$/)),
    mode: z.literal("snapshot"),
    layer: z.enum(["project", "global"]),
    root: z.string().check(z.startsWith("/")),
    root_physical: z.optional(z.string().check(z.startsWith("/"))),
    run_dir: z.string().check(z.minLength(1)),
    restore_cmd: z.string().check(z.minLength(1)),
    created: z.iso.datetime(),
    seq: SeqSchema,
    project_root: z.optional(z.string().check(z.startsWith("/"))),
    files: z.array(z.strictObject({
      path: z.string().check(z.minLength(1)),
      size: z.int().check(z.nonnegative()),
      sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
      mode: z.string().check(z.regex(MODE)),
      link_target: z.optional(z.string().check(z.startsWith("/"))),
    })).check(z.minLength(1)),
  })
);

/** A manifest entry as written. */
export interface ManifestEntry {
  /** Path relative to the root. */
  path: string;
  /** Byte count of the snapshot copy. */
  size: number;
  /** SHA-256 of the snapshot copy. */
  sha256: string;
  /** The file's permission bits at snapshot time (restored with it); absent in older manifests. */
  mode?: number;
  /** For a global file that is a link (dotfiles): the physical file it resolved to. */
  linkTarget?: string;
}

/** The fields of a manifest written by `snapshot`. */
export interface ManifestDocument {
  /** `YYYYMMDD-HHMMSS` of the snapshot's clock reading. */
  timestamp: string;
  /** The layer. */
  layer: Layer;
  /** Layer root `R`. */
  root: string;
  /** The physical path `R` resolved to at snapshot time: whose the run is, links re-pointed or not. */
  rootPhysical?: string;
  /** Run dir as used. */
  runDir: string;
  /** The restore command line. */
  restoreCmd: string;
  /** The creation instant (UTC, written as ISO 8601 with milliseconds); absent in older manifests. */
  created?: Date;
  /** The creation sequence number in `B` (newest runs have the highest); absent in older ones. */
  seq?: number;
  /** For a global run: the project root of the invocation that took it. */
  projectRoot?: string;
  /** Entries sorted by path. */
  files: ManifestEntry[];
}

/** A validated manifest, ready for restoring. */
export interface ManifestRead {
  /** Path of the manifest file. */
  path: string;
  /** Its absolute root `M`. */
  root: string;
  /** The physical path `M` resolved to at snapshot time, when the manifest records it. */
  rootPhysical?: string;
  /** Its layer, when it names a valid one. */
  layer?: Layer;
  /** Entries in manifest order; `sha256` undefined when not a string (never matches). */
  files: ManifestFile[];
}

/** One entry of a read manifest. */
export interface ManifestFile {
  /** Path relative to the root. */
  path: string;
  /** The snapshot copy's hash, `undefined` when not a string (never matches). */
  sha256: string | undefined;
  /** The recorded mode, when the manifest has one. */
  mode?: number;
  /** The recorded link target of a dotfiles-linked global file. */
  linkTarget?: string;
}

/**
 * The manifest's `restore_cmd`: the restore that puts this run back, runnable as printed (absolute
 * runtime and script, every word shell-quoted).
 */
export function restoreCommand(scriptPath: string, layer: Layer, runDir: string): string {
  return shellCommand([
    ...selfCommand(scriptPath, ["--allow-all"]),
    "restore",
    `--${layer}`,
    "--run-dir",
    runDir,
  ]);
}

/**
 * Entries for every distinct regular file under `<run dir>/orig`, sorted by path (hashed in
 * chunks), with each file's mode and link target as `recorded` says (by rel).
 */
export function manifestEntries(
  runDir: string,
  recorded: ReadonlyMap<
    string,
    { mode: number; linkTarget?: string; written?: { size: number; sha256: string } }
  >,
): ManifestEntry[] {
  return listRegularFiles(`${runDir}/orig`).map((rel) => {
    const r = recorded.get(rel);
    const { size, sha256 } = r?.written ?? hashFile(`${runDir}/orig/${rel}`, { follow: false });
    const entry: ManifestEntry = { path: rel, size, sha256, mode: r?.mode ?? 0o600 };
    if (r?.linkTarget !== undefined) entry.linkTarget = r.linkTarget;
    return entry;
  });
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, "0")}`;
}

/** The exact manifest text (documented layout and key order, final `\n`). */
export function renderManifest(doc: ManifestDocument): string {
  const entries = doc.files.map((e) => {
    const parts = [
      `"path": ${jsonString(e.path)}`,
      `"size": ${e.size}`,
      `"sha256": ${jsonString(e.sha256)}`,
    ];
    if (e.mode !== undefined) parts.push(`"mode": ${jsonString(octal(e.mode))}`);
    if (e.linkTarget !== undefined) parts.push(`"link_target": ${jsonString(e.linkTarget)}`);
    return `    {${parts.join(", ")}}`;
  });
  return [
    "{",
    `  "timestamp": ${jsonString(doc.timestamp)},`,
    `  "mode": "snapshot",`,
    `  "layer": ${jsonString(doc.layer)},`,
    `  "root": ${jsonString(doc.root)},`,
    ...(doc.rootPhysical === undefined
      ? []
      : [`  "root_physical": ${jsonString(doc.rootPhysical)},`]),
    `  "run_dir": ${jsonString(doc.runDir)},`,
    `  "restore_cmd": ${jsonString(doc.restoreCmd)},`,
    ...(doc.created === undefined
      ? []
      : [`  "created": ${jsonString(doc.created.toISOString())},`]),
    ...(doc.seq === undefined ? [] : [`  "seq": ${doc.seq},`]),
    ...(doc.projectRoot === undefined ? [] : [`  "project_root": ${jsonString(doc.projectRoot)},`]),
    `  "files": [`,
    entries.join(",\n"),
    "  ]",
    "}",
    "",
  ].join("\n");
}

/**
 * The JSON value of the manifest at `path`, read without following a link (and refused above
 * `maxBytes`, or, with `owner`, when the file opened is not that user's own) and decoded as strict
 * UTF-8: the one place a manifest file is read. Throws on any
 * defect; callers parse the value through {@linkcode ManifestSchema} or the run list's head schema.
 */
export function readManifestJson(path: string, maxBytes?: number, owner?: Invoker): unknown {
  const ownedBy = owner === undefined
    ? undefined
    : (info: Deno.FileInfo) => ownPrivate(info, owner);
  const json = new TextDecoder("utf-8", { fatal: true }).decode(
    readRegular(path, { follow: false, maxBytes, ownedBy }),
  );
  return JSON.parse(json);
}

/** The manifest at `path` parsed through {@linkcode ManifestSchema}. Throws on any defect. */
function parseManifestFile(path: string): z.infer<typeof ManifestSchema> {
  return ManifestSchema.parse(readManifestJson(path));
}

/**
 * Write the manifest atomically (`0600`) into `dir` (default: the run dir), then re-read and parse
 * it. Returns its path.
 */
export function writeManifest(doc: ManifestDocument, dir: string = doc.runDir): string {
  const path = `${dir}/manifest.json`;
  try {
    writeFileAtomic(path, renderManifest(doc), { mode: 0o600, exactMode: true });
  } catch (e) {
    throw asFileSystemError(e, "write", path);
  }
  try {
    parseManifestFile(path);
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
    parsed = parseManifestFile(m);
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
  const trimmed = root.length > 1 ? root.replace(/\/+$/, "") : root;
  const recorded = typeof parsed.root_physical === "string" ? parsed.root_physical : undefined;
  if (recorded !== undefined) {
    const now = physicalPath(trimmed);
    if (now !== undefined && now !== recorded) throw movedRoot(m, trimmed, now, recorded);
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
    const file: ManifestFile = {
      path: entry.path,
      sha256: typeof entry.sha256 === "string" ? entry.sha256 : undefined,
    };
    if (typeof entry.mode === "string" && MODE.test(entry.mode)) {
      file.mode = parseInt(entry.mode, 8);
    }
    if (typeof entry.link_target === "string" && entry.link_target.startsWith("/")) {
      file.linkTarget = entry.link_target;
    }
    files.push(file);
  }
  const read: ManifestRead = { path: m, root: trimmed, files };
  if (recorded !== undefined) read.rootPhysical = recorded;
  if (parsed.layer === "project" || parsed.layer === "global") read.layer = parsed.layer;
  return read;
}

/**
 * The run's root now resolves to another directory than the one it was taken in (a re-pointed
 * link): its files belong there, not here (`references/context-guard.md#reading`).
 */
export function movedRoot(m: string, root: string, now: string, recorded: string): ManifestError {
  return new ManifestError(
    m,
    "moved-root",
    text`manifest root ${root} is now ${now}, not ${recorded} where the run was taken (${m})`,
  );
}

/**
 * The dotfiles links a run dir's manifest records: rel → the physical file the link resolved to
 * at snapshot time. Empty when there is no readable manifest (text-guard's own run dirs).
 */
export function manifestLinks(runDir: string): Map<string, string> {
  const links = new Map<string, string>();
  try {
    for (const e of parseManifestFile(`${runDir}/manifest.json`).files) {
      if (typeof e.link_target === "string") links.set(e.path, e.link_target);
    }
  } catch { /* no manifest: no links */ }
  return links;
}

/**
 * {@linkcode manifestLinks} read the first time it is asked for, then remembered: a run whose
 * arguments are no links never parses its manifest for them.
 */
export function manifestLinkLookup(runDir: string): () => Map<string, string> {
  let links: Map<string, string> | undefined;
  return () => (links ??= manifestLinks(runDir));
}

/** The `path` of every entry of a run dir's manifest; empty when there is no readable manifest. */
export function manifestPaths(runDir: string): Set<string> {
  try {
    return new Set(parseManifestFile(`${runDir}/manifest.json`).files.map((f) => f.path));
  } catch {
    return new Set();
  }
}
