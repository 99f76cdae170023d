/**
 * context-guard `restore` and `rollback` (`references/context-guard.md#restore-and-rollback`).
 *
 * @module
 */

import { UsageError } from "../../errors.ts";
import { text } from "../../text.ts";
import { type Reporter, silentReporter } from "../report.ts";
import type { GuardRoots } from "../roots.ts";
import { chooseRun, chooseRunGroups, describeRun } from "../selection.ts";
import { restoreRunDir, type RunDirRestore } from "./restore_run.ts";

/** Inputs of {@linkcode restore}. */
export interface RestoreOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** `--project`/`--global`, when given. */
  layer?: "project" | "global";
  /** `--run-dir`, when given. */
  runDir?: string;
  /** A positional `last`/`<ts>` selector, when given. */
  selector?: string;
  /** Files to restore (none = every manifest entry). */
  files: readonly string[];
  /**
   * `--force`: restore the named files whatever their ownership proof says, keeping their current
   * bytes in `displaced/` (`references/context-guard.md#snapshot-trust`). Needs `runDir` and files.
   */
  force?: boolean;
}

/** Outcome of a restore or rollback over one or more run dirs. */
export interface RestoreResult {
  /** One outcome per run dir, in order. */
  runs: RunDirRestore[];
  /** True when every run dir was restored and verified. */
  ok: boolean;
  /** The exit code of the command line: 0 when `ok`, 2 when an OS error stopped a run dir, else 1. */
  exitCode: number;
}

/** The exit code of a batch of run dirs: the highest any asks for. */
function batchExit(runs: readonly RunDirRestore[]): number {
  return runs.reduce((rc, r) => Math.max(rc, r.exitCode), 0);
}

/**
 * The run dirs `restore` works on: `--run-dir`; else, with a layer flag or files, the selected run
 * of that layer; else every layer of this invocation's newest run (or of the runs a `<ts>` names).
 */
export function restoreRunDirs(options: RestoreOptions, reporter: Reporter): string[] {
  const { roots } = options;
  if (options.runDir !== undefined) {
    return [describeRun(options.runDir, options.layer, roots).runDir];
  }
  if (options.layer !== undefined || options.files.length > 0) {
    return [chooseRun(roots, options, reporter).runDir];
  }
  return chooseRunGroups(roots, options.selector, reporter);
}

/** `--force` acts on named files of a named run dir only: never implied. */
export function requireForceTargets(options: RestoreOptions): void {
  if (options.force && (options.runDir === undefined || options.files.length === 0)) {
    throw new UsageError(text`restore --force needs --run-dir and the files to restore`);
  }
}

/**
 * context-guard `restore`: every listed file (or every file) of the selected run dirs, each proven
 * owned and verified by hash afterwards.
 */
export async function restore(
  options: RestoreOptions,
  reporter: Reporter = silentReporter,
): Promise<RestoreResult> {
  requireForceTargets(options);
  const runs: RunDirRestore[] = [];
  for (const dir of restoreRunDirs(options, reporter)) {
    runs.push(
      await restoreRunDir(dir, "RESTORE_VERIFIED", options.files, reporter, options.force),
    );
  }
  return { runs, ok: runs.every((r) => r.ok), exitCode: batchExit(runs) };
}

/** Inputs of {@linkcode rollback}. */
export interface RollbackOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** Literal run dirs (`--run-dir` values and operands); none = every layer of the newest run. */
  runDirs: readonly string[];
}

/** context-guard `rollback`: every file of every named run dir (or of the newest run). */
export async function rollback(
  options: RollbackOptions,
  reporter: Reporter = silentReporter,
): Promise<RestoreResult> {
  const dirs = options.runDirs.length > 0
    ? [...options.runDirs]
    : chooseRunGroups(options.roots, undefined, reporter);
  const runs: RunDirRestore[] = [];
  for (const dir of dirs) {
    reporter.out(text`ROLLBACK: ${dir}`);
    runs.push(await restoreRunDir(dir, "ROLLBACK_VERIFIED", [], reporter));
  }
  const ok = runs.every((r) => r.ok);
  reporter.out(text`ROLLBACK_RESULT: ${runs.length} layer(s), ${ok ? "ok" : "FAILED"}`);
  return { runs, ok, exitCode: batchExit(runs) };
}
