/**
 * context-guard `verify` (spec §7.4): the text-guard gate without per-file restore, then a whole-run
 * rollback when any file fails.
 *
 * @module
 */

import { CtxkitError, die } from "../../exit.ts";
import { isDirectory } from "../../paths.ts";
import { resolveBackup } from "../backups.ts";
import type { Reporter } from "../report.ts";
import { type GuardRoots, type Layer, layerRoot } from "../roots.ts";
import { type MissCoverage, stageVerify, type StageVerifyResult } from "../stage.ts";
import { decodeText, lineTokens, splitLines, type TokenAlphabet, tokenSet } from "../tokens.ts";
import { ledgerCoverage as bindLedger, loadLedger } from "../ledger.ts";
import { restoreRunDir, type RunDirRestore } from "./restore_run.ts";

/** Inputs of {@linkcode verify}. */
export interface VerifyOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** `--project`/`--global`, when given. */
  layer?: Layer;
  /** `--run-dir`, when given. */
  runDir?: string;
  /** A positional `last` or `<ts>` selector, when given. */
  selector?: string;
  /** `--ledger`, when given (§7.5). */
  ledger?: string;
  /** Token alphabet (default `base`). */
  alphabet?: TokenAlphabet;
  /** File arguments, as typed. */
  files: readonly string[];
  /** Output sink. */
  reporter: Reporter;
}

/** Outcome of {@linkcode verify}. */
export interface VerifyResult {
  /** The run dir verified. */
  runDir: string;
  /** The gate's report. */
  gate: StageVerifyResult;
  /** The whole-run rollback, when the gate failed. */
  rollback?: RunDirRestore;
  /** Exit code: 0 pass, 1 failed gate (rolled back or not). */
  exitCode: number;
}

/**
 * The `--ledger` coverage of §7.5: the file is checked and validated as a whole (§7.4 step 2) before
 * any gate output; `undefined` without `--ledger` (plain §5.3 output).
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

/** The run dir `verify` works on: `--run-dir`, else Resolve(selector or `last`, layer or any). */
export function verifyRunDir(options: VerifyOptions): string {
  const runDir = options.runDir ??
    resolveBackup(options.roots.backups, options.selector ?? "last", options.layer);
  if (runDir === "") die(`❌ no backups under ${options.roots.backups}`);
  return runDir;
}

/** context-guard `verify` (§7.4). */
export function verify(options: VerifyOptions): VerifyResult {
  const { reporter } = options;
  const runDir = verifyRunDir(options);
  if (!isDirectory(`${runDir}/orig`)) die(`❌ no snapshot dir: ${runDir}/orig`);
  if (options.files.length === 0) die("❌ verify needs at least one file");
  const coverage = ledgerCoverage(options.ledger, options.alphabet ?? "base");
  const root = layerRoot(options.roots, options.layer ?? "project");
  const gate = stageVerify({
    projectDir: root,
    runDir,
    files: options.files,
    noRestore: true,
    alphabet: options.alphabet,
    coverage,
    reporter,
  });
  if (gate.filesFailed === 0) return { runDir, gate, exitCode: 0 };
  reporter.out(`ROLLBACK: whole run (gate failed) ${runDir}`);
  let rollback: RunDirRestore;
  try {
    rollback = restoreRunDir(runDir, "ROLLBACK_VERIFIED", [], reporter);
  } catch (e) {
    if (e instanceof CtxkitError) throw new CtxkitError(2, e.message);
    throw e;
  }
  if (rollback.ok) {
    reporter.out(`RUN: FAILED - every file of ${runDir} is back at its pre-edit bytes`);
  } else {
    reporter.err(`RUN: FAILED - recovery incomplete; inspect preserved current files in ${runDir}`);
  }
  return { runDir, gate, rollback, exitCode: 1 };
}
