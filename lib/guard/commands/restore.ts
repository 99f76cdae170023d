/**
 * context-guard `restore` and `rollback` (`references/context-guard.md#restore-and-rollback`).
 *
 * @module
 */

import { text } from "../../text.ts";
import { backupsWithPrefix, newestRunDirs, noBackups, resolveBackup } from "../backups.ts";
import { type Reporter, silentReporter } from "../report.ts";
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
}

/** Outcome of a restore or rollback over one or more run dirs. */
export interface RestoreResult {
  /** One outcome per run dir, in order. */
  runs: RunDirRestore[];
  /** True when every run dir was restored and verified. */
  ok: boolean;
}

/** The run dirs `restore` works on; {@linkcode noBackups} when there are none. */
export function restoreRunDirs(options: RestoreOptions): string[] {
  const { roots } = options;
  let dirs: string[];
  if (options.runDir !== undefined) dirs = [options.runDir];
  else if (options.layer !== undefined || options.files.length > 0) {
    dirs = [resolveBackup(roots.backups, options.selector ?? "last", options.layer ?? "project")];
  } else if (options.selector !== undefined && options.selector !== "last") {
    dirs = backupsWithPrefix(roots.backups, options.selector);
  } else dirs = newestRunDirs(roots.backups);
  if (dirs.length === 0 || dirs.some((d) => d === "")) throw noBackups(roots.backups);
  return dirs;
}

/**
 * context-guard `restore`: every listed file (or every file) of the selected run dirs, each proven
 * owned and verified by hash afterwards.
 */
export function restore(
  options: RestoreOptions,
  reporter: Reporter = silentReporter,
): RestoreResult {
  const runs = restoreRunDirs(options).map((dir) =>
    restoreRunDir(dir, "RESTORE_VERIFIED", options.files, reporter)
  );
  return { runs, ok: runs.every((r) => r.ok) };
}

/** Inputs of {@linkcode rollback}. */
export interface RollbackOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** Literal run dirs (`--run-dir` values and operands); none = the newest run's dirs. */
  runDirs: readonly string[];
}

/** context-guard `rollback`: every file of every named run dir (or of the newest run). */
export function rollback(
  options: RollbackOptions,
  reporter: Reporter = silentReporter,
): RestoreResult {
  const dirs = options.runDirs.length > 0
    ? [...options.runDirs]
    : newestRunDirs(options.roots.backups);
  if (dirs.length === 0) throw noBackups(options.roots.backups);
  const runs: RunDirRestore[] = [];
  for (const dir of dirs) {
    reporter.out(text`ROLLBACK: ${dir}`);
    runs.push(restoreRunDir(dir, "ROLLBACK_VERIFIED", [], reporter));
  }
  const ok = runs.every((r) => r.ok);
  reporter.out(text`ROLLBACK_RESULT: ${runs.length} layer(s), ${ok ? "ok" : "FAILED"}`);
  return { runs, ok };
}
