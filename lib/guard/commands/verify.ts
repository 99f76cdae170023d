/**
 * context-guard `verify` (`references/context-guard.md#verify`): the text-guard gate without
 * per-file restore, then a whole-run rollback when any file fails.
 *
 * @module
 */

import { UsageError } from "../../errors.ts";
import { type Text, text } from "../../text.ts";
import { errorText, ManifestError, SnapshotDamagedError } from "../errors.ts";
import { ledgerCoverage as bindLedger, loadLedger } from "../ledger.ts";
import { readManifest } from "../manifest.ts";
import { type Reporter, silentReporter } from "../report.ts";
import type { GuardRoots } from "../roots.ts";
import { chooseRun } from "../selection.ts";
import { requireSnapshotDir } from "../run_dir.ts";
import { type MissCoverage, stageVerify } from "../stage/verify.ts";
import { decodeText, lineTokens, splitLines, type TokenAlphabet, tokenSet } from "../tokens.ts";
import { restoreRunDir, type RunDirRestore } from "./restore_run.ts";

/** Inputs of {@linkcode verify}. */
export interface VerifyOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** `--project`/`--global`, when given. */
  layer?: "project" | "global";
  /** `--run-dir`, when given. */
  runDir?: string;
  /** A positional `last` or `<ts>` selector, when given. */
  selector?: string;
  /** `--ledger`, when given. */
  ledger?: string;
  /** Token alphabet (`--tokens=`, default `base`; `references/context-guard.md#critical-tokens`). */
  alphabet?: "base" | "ext";
  /** File arguments, as typed. */
  files: readonly string[];
}

/** Outcome of {@linkcode verify}. */
export interface VerifyResult {
  /** The run dir verified. */
  runDir: string;
  /**
   * The gate's verdict per file, in argument order: its root-relative path, the critical tokens
   * its new bytes lack (sorted), and `pass`, `ledgered` (every miss covered by the ledger) or
   * `fail`; `filesFailed` counts the `fail`s.
   */
  gate: {
    files: Array<{ path: string; misses: string[]; gate: "pass" | "ledgered" | "fail" }>;
    filesFailed: number;
  };
  /** Copies that differ from their manifest hash: nothing was gated nor rolled back. */
  damaged?: readonly string[];
  /** The whole-run rollback, when the gate failed. */
  rollback?: RunDirRestore;
  /** True when every file passed (possibly through the ledger): nothing was rolled back. */
  passed: boolean;
}

/**
 * The hash the manifest recorded for each copy (`undefined` for an entry without one), or
 * `undefined` when the run has no readable manifest (the gate then runs as text-guard's does; a
 * rollback would die on the manifest).
 */
export function recordedHashes(runDir: string): Map<string, string | undefined> | undefined {
  try {
    return new Map(readManifest(runDir).files.map((f) => [f.path, f.sha256]));
  } catch (e) {
    if (e instanceof ManifestError) return undefined;
    throw e;
  }
}

/**
 * The `--ledger` coverage: the file is checked and validated as a whole before any gate output;
 * `undefined` without `--ledger` (plain gate output).
 */
function ledgerCoverage(
  ledger: string | undefined,
  alphabet: TokenAlphabet,
): MissCoverage | undefined {
  if (ledger === undefined) return undefined;
  return bindLedger(loadLedger(ledger), {
    lineTokens: (line) => lineTokens(line, alphabet),
    fileTokens: (bytes) => tokenSet(bytes, alphabet),
    lines: (bytes) => splitLines(decodeText(bytes)),
  });
}

/** The last line when a run's copies are damaged: nothing verified, nothing restored. */
export function runDamagedLine(runDir: string): Text {
  return text`RUN: FAILED - snapshot incomplete or damaged; nothing verified, current bytes preserved (${runDir})`;
}

/** The last line of a failed run: every file back, or recovery incomplete. */
export function reportRunFailed(runDir: string, rollback: RunDirRestore, reporter: Reporter): void {
  if (rollback.ok) {
    reporter.out(text`RUN: FAILED - every file of ${runDir} is back at its pre-edit bytes`);
  } else {
    reporter.err(
      text`RUN: FAILED - recovery incomplete; inspect preserved current files in ${runDir}`,
    );
  }
}

/**
 * context-guard `verify`: gate each file against its snapshot copy (misses may be covered by the
 * ledger); when any file fails, roll the whole run dir back.
 */
export async function verify(
  options: VerifyOptions,
  reporter: Reporter = silentReporter,
): Promise<VerifyResult> {
  const { runDir, root, rootName } = chooseRun(options.roots, options, reporter);
  requireSnapshotDir(runDir);
  if (options.files.length === 0) throw new UsageError(text`verify needs at least one file`);
  const coverage = ledgerCoverage(options.ledger, options.alphabet ?? "base");
  let staged: ReturnType<typeof stageVerify>;
  try {
    staged = stageVerify({
      projectDir: root,
      runDir,
      files: options.files,
      noRestore: true,
      alphabet: options.alphabet,
      coverage,
      rootName,
      copyHashes: recordedHashes(runDir),
    }, reporter);
  } catch (e) {
    if (!(e instanceof SnapshotDamagedError)) throw e;
    // A damaged copy gates nothing and restores nothing: the run stays as it is.
    reporter.err(errorText(e));
    reporter.err(runDamagedLine(runDir));
    return { runDir, gate: { files: [], filesFailed: 0 }, damaged: e.rels, passed: false };
  }
  const gate = {
    files: staged.files.map((v) => ({ path: v.target.rel, misses: v.misses, gate: v.gate })),
    filesFailed: staged.filesFailed,
  };
  if (gate.filesFailed === 0) return { runDir, gate, passed: true };
  reporter.out(text`ROLLBACK: whole run (gate failed) ${runDir}`);
  const rollback = await restoreRunDir(runDir, "ROLLBACK_VERIFIED", [], reporter);
  reportRunFailed(runDir, rollback, reporter);
  return { runDir, gate, rollback, passed: false };
}
