/**
 * Backups under the backup root `B` (`references/context-guard.md#backups-and-run-dirs`): naming,
 * the newest-first order, layer filters, run selection and retention.
 *
 * @module
 */

import { isAbsent } from "../_fs/errors.ts";
import { compareUtf8 } from "../sort.ts";
import { text } from "../text.ts";
import { PathRefusedError, SnapshotMissingError } from "./errors.ts";
import type { Layer } from "./roots.ts";
import type { Reporter } from "./report.ts";

const SUFFIX = "_context-slim";

/** The automatic run-dir path for `layer`, stamp and collision index `n` (1 = no suffix). */
export function autoRunDirName(backups: string, stamp: string, layer: Layer, n: number): string {
  return `${backups}/${stamp}-${layer}${n === 1 ? "" : `-${n}`}${SUFFIX}`;
}

interface SortKey {
  stamp: string;
  suffix: string;
  layerRank: number;
}

function sortKey(name: string): SortKey {
  const stamp = name.slice(0, 15);
  const m = /-([0-9]+)_context-slim$/.exec(name);
  const suffix = (m?.[1] ?? "1").replace(/^0+(?=.)/, "");
  const layerRank = /-project(-[0-9]+)?_context-slim$/.test(name)
    ? 0
    : /-global(-[0-9]+)?_context-slim$/.test(name)
    ? 1
    : 2;
  return { stamp, suffix, layerRank };
}

function compareNumeric(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : compareUtf8(a, b);
}

/**
 * Newest-first order of backup names: timestamp descending, collision suffix descending as a number
 * (none = 1), `project` before `global`; ties by name for a total order.
 */
export function compareBackups(a: string, b: string): number {
  const x = sortKey(a);
  const y = sortKey(b);
  return compareUtf8(y.stamp, x.stamp) || compareNumeric(y.suffix, x.suffix) ||
    x.layerRank - y.layerRank || compareUtf8(a, b);
}

/** Names of the backups in `B`: non-link directories named `*_context-slim`, newest first. */
export function listBackups(backups: string): string[] {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(backups)];
  } catch {
    return [];
  }
  return entries.filter((e) => e.isDirectory && e.name.endsWith(SUFFIX)).map((e) => e.name)
    .sort(compareBackups);
}

/** The `no backups under <B>` failure. */
export function noBackups(backups: string): SnapshotMissingError {
  return new SnapshotMissingError("no-backups", backups, text`no backups under ${backups}`);
}

/** True when backup `name` belongs to `layer` (`-L(-N)?_context-slim` at its end). */
export function isLayerBackup(name: string, layer: Layer): boolean {
  return new RegExp(`-${layer}(-[0-9]+)?_context-slim$`).test(name);
}

/**
 * Resolve(spec, layer): `last` → the newest backup of the layer (or `""`); a spec ending
 * `_context-slim` or starting `/` → verbatim; else the newest backup of the layer whose name starts
 * with spec, else `B/<spec>-<layer or project>_context-slim`.
 */
export function resolveBackup(backups: string, spec: string, layer: Layer | undefined): string {
  const names = listBackups(backups).filter((n) => layer === undefined || isLayerBackup(n, layer));
  if (spec === "last") return names.length > 0 ? `${backups}/${names[0]}` : "";
  if (spec.endsWith(SUFFIX) || spec.startsWith("/")) return spec;
  const hit = names.find((n) => n.startsWith(spec));
  return hit !== undefined
    ? `${backups}/${hit}`
    : `${backups}/${spec}-${layer ?? "project"}${SUFFIX}`;
}

/** The newest run's dirs: every backup sharing the first backup's timestamp, in order. */
export function newestRunDirs(backups: string): string[] {
  const names = listBackups(backups);
  if (names.length === 0) return [];
  const stamp = names[0].slice(0, 15);
  return names.filter((n) => n.startsWith(`${stamp}-`)).map((n) => `${backups}/${n}`);
}

/** Every backup whose name starts with `prefix` (any layer), newest first. */
export function backupsWithPrefix(backups: string, prefix: string): string[] {
  return listBackups(backups).filter((n) => n.startsWith(prefix)).map((n) => `${backups}/${n}`);
}

/** How many backups besides the newest run retention keeps. */
export const RETAIN_OTHERS = 4;

/**
 * Retention: keep the first four backups other than `justWritten`, delete the rest without
 * following links, printing `PRUNED: <dir>`. Returns the pruned dirs.
 */
export function pruneBackups(backups: string, justWritten: string, reporter: Reporter): string[] {
  const others = listBackups(backups).map((n) => `${backups}/${n}`).filter((d) =>
    d !== justWritten
  );
  const pruned: string[] = [];
  for (const dir of others.slice(RETAIN_OTHERS)) {
    let ok = false;
    try {
      const st = Deno.lstatSync(dir);
      const name = dir.slice(backups.length + 1);
      ok = st.isDirectory && dir.startsWith(`${backups}/`) && !name.includes("/") &&
        name.endsWith(SUFFIX);
    } catch { /* vanished: refuse below */ }
    if (!ok) {
      throw new PathRefusedError(
        dir,
        "outside-root",
        text`refusing to prune outside ${backups}: ${dir}`,
      );
    }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch (e) {
      if (!isAbsent(e)) throw e; // else: removed meanwhile by another run's retention
    }
    reporter.out(text`PRUNED: ${dir}`);
    pruned.push(dir);
  }
  return pruned;
}
