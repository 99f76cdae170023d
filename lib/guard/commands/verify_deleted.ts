/**
 * context-guard `verify-deleted` (`references/context-guard.md#verify-deleted`): proves that
 * deleting a file lost no critical token, by gating the survivors' bytes (concatenated in order)
 * against the deleted file's snapshot copy.
 *
 * Nothing is ever written at the deleted path: the proof runs in memory. Its ownership is recorded
 * first (the deletion is checkpointed: `MISSING`), so a failed proof rolls the whole run back and
 * brings the file back; a passed proof puts the previous draft record back. So after a kill at any
 * point the deleted path is absent or back at its snapshot bytes, and a rerun succeeds or refuses
 * cleanly.
 *
 * @module
 */

import { existsNoFollow, isFileFollow } from "../../_fs/inspect.ts";
import { readRegular } from "../../_fs/read.ts";
import { UsageError } from "../../errors.ts";
import { joinText, text } from "../../text.ts";
import {
  errorText,
  PathRefusedError,
  SnapshotDamagedError,
  SnapshotMissingError,
} from "../errors.ts";
import { sha256Hex } from "../../_fs/sha256.ts";
import { writeDraftRecord } from "../ownership.ts";
import { type Reporter, silentReporter } from "../report.ts";
import { type GuardRoots, resolveLogical, resolvePhysical, textGuardRoot } from "../roots.ts";
import {
  draftRecordPath,
  isTrustedCopy,
  replaceFile,
  requireSnapshotDir,
  snapshotCopyPath,
} from "../run_dir.ts";
import { chooseRun } from "../selection.ts";
import { gateMisses, reportMisses } from "../stage/verify.ts";
import { GATE_MAX_BYTES, readForGate, refuseTooLarge } from "../gate_input.ts";
import { restoreRunDir, type RunDirRestore } from "./restore_run.ts";
import { recordedHashes, reportRunFailed, runDamagedLine } from "./verify.ts";

/** Inputs of {@linkcode verifyDeleted}. */
export interface VerifyDeletedOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** `--project`/`--global` (default: the run's, or the layer the target implies). */
  layer?: "project" | "global";
  /** `--run-dir`, when given. */
  runDir?: string;
  /** A positional `last` or `<ts>` selector, when given. */
  selector?: string;
  /** Token alphabet (`--tokens=`, default `base`; `references/context-guard.md#critical-tokens`). */
  alphabet?: "base" | "ext";
  /** `--survivor` values in order, as typed. */
  survivors: readonly string[];
  /** The deleted-file arguments (exactly one is valid), as typed. */
  targets: readonly string[];
}

/** Outcome of {@linkcode verifyDeleted}. */
export interface VerifyDeletedResult {
  /**
   * `merged`: every critical token survives; `unproven`: the whole run was rolled back;
   * `damaged`: the deleted file's copy differs from its manifest hash — nothing proven, nothing
   * written.
   */
  outcome: "merged" | "unproven" | "damaged";
  /** The whole-run rollback, when the merge was unproven. */
  rollback?: RunDirRestore;
}

/** The survivors' bytes concatenated in argument order (together at most the gate's limit). */
function concatenate(paths: readonly string[]): Uint8Array {
  const parts = paths.map((p) => readForGate(p, p));
  const total = parts.reduce((n, p) => n + p.length, 0);
  if (total > GATE_MAX_BYTES) {
    throw new PathRefusedError(
      paths[0],
      "too-large",
      text`too large for the token gate: the survivors (${total} bytes; the limit is ${GATE_MAX_BYTES})`,
    );
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The draft record's bytes, `null` when there is none (a link or a directory counts as none). */
function readRecord(path: string): Uint8Array | null {
  try {
    return readRegular(path, { follow: false });
  } catch {
    return null;
  }
}

/** Put the remembered draft record back: its bytes, or its absence. */
function putRecordBack(path: string, previous: Uint8Array | null): void {
  if (previous !== null) {
    replaceFile(path, previous, { mode: 0o600, exactMode: true });
    return;
  }
  try {
    if (Deno.lstatSync(path).isFile) Deno.removeSync(path);
  } catch { /* nothing recorded: nothing to remove */ }
}

/**
 * context-guard `verify-deleted`. Argument and state errors are thrown (exit 2) before anything is
 * written; afterwards the proof either passes (the draft record is as before) or rolls the run
 * back.
 */
export async function verifyDeleted(
  options: VerifyDeletedOptions,
  reporter: Reporter = silentReporter,
): Promise<VerifyDeletedResult> {
  const { roots, survivors } = options;
  if (options.targets.length !== 1) {
    throw new UsageError(text`verify-deleted takes exactly one deleted file`);
  }
  if (survivors.length === 0) {
    throw new UsageError(text`verify-deleted needs at least one --survivor`);
  }
  const [target] = options.targets;
  const { runDir, root, rootName } = chooseRun(roots, { ...options, files: [target] }, reporter);
  requireSnapshotDir(runDir);
  const { abs, rel } = resolveLogical(target, root, undefined, undefined, true);
  if (!isTrustedCopy(`${runDir}/orig`, rel)) {
    throw new SnapshotMissingError(
      "no-snapshot",
      runDir,
      text`no snapshot for ${rel} in ${runDir} - snapshot before deleting`,
      rel,
    );
  }
  if (existsNoFollow(abs)) {
    throw new PathRefusedError(
      rel,
      "still-present",
      text`${rel} is still on disk - verify-deleted is for a DELETED file`,
    );
  }
  for (const s of survivors) {
    if (!isFileFollow(s)) {
      throw new PathRefusedError(s, "not-a-file", text`survivor is not a file: ${s}`);
    }
  }
  // The checks the text-guard stage made of the file (physically inside the root, its copy
  // trusted), before anything is written.
  // A deleted file's directory may be gone with it (issue 22 item 16): it resolves below the
  // nearest directory still there, and a rollback makes it again.
  const physical = resolvePhysical(
    target,
    textGuardRoot(root, rootName),
    rootName,
    undefined,
    undefined,
    true,
  );
  if (!isTrustedCopy(`${runDir}/orig`, physical.rel)) {
    throw new SnapshotMissingError("no-snapshot", runDir, text`no snapshot for ${physical.rel}`);
  }
  const copy = snapshotCopyPath(runDir, physical.rel);
  refuseTooLarge(copy, physical.rel);
  const standIn = concatenate(survivors);
  const snapshot = readForGate(copy, physical.rel);
  // A copy that is not the one the manifest recorded proves nothing: checked as verify checks it,
  // before anything is written (references/context-guard.md#verify-deleted).
  const recorded = recordedHashes(runDir);
  if (recorded !== undefined && recorded.get(physical.rel) !== sha256Hex(snapshot)) {
    const damaged = new SnapshotDamagedError(runDir, [physical.rel]);
    reporter.err(errorText(damaged));
    reporter.err(runDamagedLine(runDir));
    return { outcome: "damaged" };
  }

  // Own the deletion first: a failed proof (or a kill before it ends) can bring the file back.
  const recordPath = draftRecordPath(runDir, physical.rel);
  const previousRecord = readRecord(recordPath);
  writeDraftRecord(runDir, physical.rel, "MISSING");
  reporter.out(text`CHECKPOINT: ${physical.rel}`);
  const misses = gateMisses(snapshot, standIn, options.alphabet ?? "base");
  reportMisses(physical.rel, misses, reporter);
  reporter.out(misses.length === 0 ? text`GATE: PASS` : text`GATE: FAIL`);
  reporter.out(text`ACTION: kept`);
  reporter.out(text`FILES_FAILED: ${misses.length === 0 ? 0 : 1}`);

  if (misses.length === 0) {
    putRecordBack(recordPath, previousRecord);
    reporter.out(text`MERGED_VERIFIED: ${rel} -> ${joinText(survivors, " ")}`);
    return { outcome: "merged" };
  }
  reporter.err(text`MERGE_UNPROVEN: ${rel} - survivors do not carry every critical token`);
  reporter.out(text`ROLLBACK: whole run (merge unproven) ${runDir}`);
  const rollback = await restoreRunDir(runDir, "ROLLBACK_VERIFIED", [], reporter);
  reportRunFailed(runDir, rollback, reporter);
  return { outcome: "unproven", rollback };
}
