/**
 * context-guard `restore`, `rollback` and `list` (spec §7.7, §7.8, §7.10).
 *
 * @module
 */

import { die } from "../../exit.ts";
import { backupsWithPrefix, listBackups, newestRunDirs, resolveBackup } from "../backups.ts";
import { listRegularFiles } from "../fsx.ts";
import { manifestLayer } from "../manifest.ts";
import type { Reporter } from "../report.ts";
import type { GuardRoots, Layer } from "../roots.ts";
import { restoreRunDir, type RunDirRestore } from "./restore_run.ts";

/** Inputs of {@linkcode restore}. */
export interface RestoreOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** `--project`/`--global`, when given. */
  layer?: Layer;
  /** `--run-dir`, when given. */
  runDir?: string;
  /** A positional `last`/`<ts>` selector, when given. */
  selector?: string;
  /** Files to restore (none = every manifest entry). */
  files: readonly string[];
  /** Output sink. */
  reporter: Reporter;
}

/** Outcome of a multi-run-dir restore. */
export interface RestoreResult {
  /** One outcome per run dir, in order. */
  runs: RunDirRestore[];
  /** 0 when every run dir was restored, else 1. */
  exitCode: number;
}

/** The run dirs `restore` works on (§7.8); dies `❌ no backups under <B>` when there are none. */
export function restoreRunDirs(options: RestoreOptions): string[] {
  const { roots } = options;
  let dirs: string[];
  if (options.runDir !== undefined) dirs = [options.runDir];
  else if (options.layer !== undefined || options.files.length > 0) {
    dirs = [resolveBackup(roots.backups, options.selector ?? "last", options.layer ?? "project")];
  } else if (options.selector !== undefined && options.selector !== "last") {
    dirs = backupsWithPrefix(roots.backups, options.selector);
  } else dirs = newestRunDirs(roots.backups);
  if (dirs.length === 0 || dirs.some((d) => d === "")) die(`❌ no backups under ${roots.backups}`);
  return dirs;
}

/** context-guard `restore` (§7.8). */
export function restore(options: RestoreOptions): RestoreResult {
  const runs = restoreRunDirs(options).map((dir) =>
    restoreRunDir(dir, "RESTORE_VERIFIED", options.files, options.reporter)
  );
  return { runs, exitCode: runs.every((r) => r.ok) ? 0 : 1 };
}

/** Inputs of {@linkcode rollback}. */
export interface RollbackOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** Literal run dirs (`--run-dir` values and positionals); none = the newest run's dirs. */
  runDirs: readonly string[];
  /** Output sink. */
  reporter: Reporter;
}

/** context-guard `rollback` (§7.7): every file of every named run dir. */
export function rollback(options: RollbackOptions): RestoreResult {
  const { reporter } = options;
  const dirs = options.runDirs.length > 0
    ? [...options.runDirs]
    : newestRunDirs(options.roots.backups);
  if (dirs.length === 0) die(`❌ no backups under ${options.roots.backups}`);
  const runs: RunDirRestore[] = [];
  for (const dir of dirs) {
    reporter.out(`ROLLBACK: ${dir}`);
    runs.push(restoreRunDir(dir, "ROLLBACK_VERIFIED", [], reporter));
  }
  const ok = runs.every((r) => r.ok);
  reporter.out(`ROLLBACK_RESULT: ${runs.length} layer(s), ${ok ? "ok" : "FAILED"}`);
  return { runs, exitCode: ok ? 0 : 1 };
}

/** One row of `list`. */
export interface BackupRow {
  /** Backup directory name. */
  name: string;
  /** Regular files under `orig/` (0 when absent). */
  files: number;
  /** Manifest layer, or `?`. */
  layer: string;
}

/** context-guard `list` (§7.10): the backups, newest first. */
export function list(roots: GuardRoots, reporter: Reporter): BackupRow[] {
  const rows = listBackups(roots.backups).map((name) => {
    const dir = `${roots.backups}/${name}`;
    return { name, files: listRegularFiles(`${dir}/orig`).length, layer: manifestLayer(dir) };
  });
  reporter.out("| Backup | Files | Layer |");
  reporter.out("|--------|-------|-------|");
  for (const r of rows) reporter.out(`| ${r.name} | ${r.files} | ${r.layer} |`);
  return rows;
}
