/**
 * Public API of the guard tools (re-exported by the root `mod.ts`): text-guard's operations
 * (`stage*`), context-guard's commands, tokens, manifests and backups. Every operation prints
 * through a {@linkcode Reporter} and returns a typed result; failures throw `CtxkitError`.
 *
 * @module
 */

export {
  extractBaseTokens,
  lineTokens,
  missingTokens,
  parseAlphabet,
  type TokenAlphabet,
  tokenSet,
} from "./tokens.ts";
export {
  type CollectingReporter,
  collectingReporter,
  consoleReporter,
  type ReportedLine,
  type Reporter,
  silentReporter,
} from "./report.ts";
export {
  type GuardRoots,
  guardRoots,
  type Layer,
  layerRoot,
  projectRoot,
  type ResolvedPath,
  resolveLogical,
  resolvePhysical,
  textGuardRoot,
} from "./roots.ts";
export {
  type FileVerdict,
  localStamp,
  type MissCoverage,
  stageCheckpoint,
  type StageFilesOptions,
  stageRestore,
  stageSnapshot,
  type StageSnapshotOptions,
  type StageSnapshotResult,
  stageStatus,
  stageVerify,
  type StageVerifyOptions,
  type StageVerifyResult,
} from "./stage.ts";
export { mayRestore, restoreFile, writeDraftRecord } from "./ownership.ts";
export {
  type ManifestDocument,
  type ManifestEntry,
  type ManifestRead,
  readManifest,
  renderManifest,
  restoreCommand,
  shellQuote,
} from "./manifest.ts";
export {
  compareBackups,
  listBackups,
  newestRunDirs,
  pruneBackups,
  resolveBackup,
} from "./backups.ts";
export { snapshot, type SnapshotOptions, type SnapshotResult } from "./commands/snapshot.ts";
export { verify, type VerifyOptions, type VerifyResult } from "./commands/verify.ts";
export {
  type BackupRow,
  list,
  restore,
  type RestoreOptions,
  type RestoreResult,
  rollback,
  type RollbackOptions,
} from "./commands/restore.ts";
export { type RestoreLabel, restoreRunDir, type RunDirRestore } from "./commands/restore_run.ts";

/** text-guard `checkpoint` (alias of {@linkcode stageCheckpoint}, §5.2). */
export { stageCheckpoint as checkpoint } from "./stage.ts";

// --- ledger, state, verify-deleted, extended alphabet (issue 4) ---
export { EXT_PREFIXES, extractExtendedTokens } from "./tokens_ext.ts";
export {
  allLedgered,
  type CoverageInputs,
  coverageLine,
  coverMisses,
  type LedgerAlphabet,
  ledgerCoverage,
  LedgerIndex,
  type LedgerLine,
  ledgerLines,
  type LedgerRow,
  type LedgerValidation,
  type LedgerVerdict,
  loadLedger,
  malformedLedgerMessage,
  malformedReason,
  type MissDecision,
  parseLineRange,
  rangeTokens,
  resolveLedgerPath,
  sameLedgerFile,
  survivorTokenLookup,
  validateLedger,
} from "./ledger.ts";
export {
  achievedRatio,
  buildStateDocument,
  checkScanFile,
  checkScanText,
  localTimestamp,
  parseJsonIntegerLiterals,
  parseStateArgs,
  pythonFloatRepr,
  ratioToDouble,
  renderStateDocument,
  roundHalfEven,
  type ScanCheck,
  type ScanRejection,
  type StateDocument,
  type StateDrop,
  stateDrops,
  type StateFile,
  stateFiles,
  type StateInputs,
  stateMain,
  type StateOptions,
  statePath,
  type StateScanInput,
} from "./state.ts";
export {
  parseVerifyDeletedArgs,
  verifyDeleted,
  verifyDeletedMain,
  type VerifyDeletedOptions,
  type VerifyDeletedResult,
} from "./verify_deleted.ts";
