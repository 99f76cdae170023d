/**
 * The guard's public part (re-exported by the root `mod.ts`): the context-guard workflow a skill
 * runs around an in-place rewrite — snapshot, checkpoint, verify (rolling the whole run back on a
 * failed gate), verify-deleted, restore and rollback — its roots, its reporter and its failure
 * kinds.
 *
 * @module
 */

export { type GuardRoots, guardRoots } from "./roots.ts";
export { collectingReporter, consoleReporter, type Reporter, silentReporter } from "./report.ts";
export { snapshot, type SnapshotOptions, type SnapshotResult } from "./commands/snapshot.ts";
export { checkpoint, type CheckpointOptions } from "./stage/checkpoint.ts";
export { verify, type VerifyOptions, type VerifyResult } from "./commands/verify.ts";
export {
  verifyDeleted,
  type VerifyDeletedOptions,
  type VerifyDeletedResult,
} from "./commands/verify_deleted.ts";
export type { RunDirRestore } from "./commands/restore_run.ts";
export {
  restore,
  type RestoreOptions,
  type RestoreResult,
  rollback,
  type RollbackOptions,
} from "./commands/restore.ts";
export {
  DirtyTreeError,
  ManifestError,
  PathRefusedError,
  RestoreRefusedError,
  SnapshotMissingError,
} from "./errors.ts";
