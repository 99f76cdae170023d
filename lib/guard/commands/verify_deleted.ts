/**
 * context-guard `verify-deleted` (`references/context-guard.md#verify-deleted`): proves that
 * deleting a file lost no critical token, by gating a temporary **stand-in** (the survivors' bytes
 * concatenated) against the deleted file's snapshot copy.
 *
 * The stand-in is checkpointed so that a failed proof can roll the whole run back (the stand-in is
 * owned, so the original comes back). On success the stand-in is removed and the deleted file's
 * previous draft record is put back, so a later `rollback` of the run still has its proof.
 *
 * @module
 */

import { errorCode, firstLine } from "../../_fs/errors.ts";
import { existsNoFollow, isFileFollow } from "../../_fs/inspect.ts";
import { hashFile, readRegular } from "../../_fs/read.ts";
import { createFileExclusive } from "../../_fs/write.ts";
import { CtxkitError, UsageError } from "../../errors.ts";
import { joinText, text } from "../../text.ts";
import { resolveBackup } from "../backups.ts";
import { errorText, PathRefusedError, SnapshotMissingError } from "../errors.ts";
import { type Reporter, silentReporter } from "../report.ts";
import { type GuardRoots, type Layer, layerRoot, resolveLogical } from "../roots.ts";
import { draftRecordPath, isTrustedCopy, replaceFile, requireSnapshotDir } from "../run_dir.ts";
import { checkpoint } from "../stage/checkpoint.ts";
import { stageVerify } from "../stage/verify.ts";
import type { TokenAlphabet } from "../tokens.ts";
import { restoreRunDir } from "./restore_run.ts";
import { reportRunFailed } from "./verify.ts";

/** Inputs of {@linkcode verifyDeleted}. */
export interface VerifyDeletedOptions {
  /** The roots (`P`, `G`, `B`). */
  roots: GuardRoots;
  /** `--project`/`--global` (default `project`). */
  layer?: Layer;
  /** `--run-dir`, when given. */
  runDir?: string;
  /** A positional `last` or `<ts>` selector, when given. */
  selector?: string;
  /** Token alphabet (default `base`). */
  alphabet?: TokenAlphabet;
  /** `--survivor` values in order, as typed. */
  survivors: readonly string[];
  /** The deleted-file arguments (exactly one is valid), as typed. */
  targets: readonly string[];
}

/** Outcome of {@linkcode verifyDeleted}. */
export interface VerifyDeletedResult {
  /** `merged` (proven, stand-in removed), `unproven` (run rolled back), or `aborted`. */
  outcome: "merged" | "unproven" | "aborted";
  /** For `aborted`: the stage failure that stopped the proof (its code is the command's). */
  failure?: CtxkitError;
  /** For `aborted`: the stand-in changed under us and was kept. */
  standInChanged?: boolean;
}

/** The survivors' bytes concatenated in argument order. */
function concatenate(paths: readonly string[]): Uint8Array {
  const parts = paths.map((p) => readRegular(p));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
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

/** Create the stand-in exclusively (never over something that appeared meanwhile), owner-only. */
function writeStandIn(abs: string, rel: string, bytes: Uint8Array): string {
  try {
    return createFileExclusive(abs, bytes, 0o600, false).sha256;
  } catch (e) {
    if (errorCode(e) === "EEXIST") {
      throw new PathRefusedError(
        rel,
        "still-present",
        text`${rel} is still on disk - verify-deleted is for a DELETED file`,
      );
    }
    throw new PathRefusedError(
      rel,
      "unresolvable",
      text`cannot write stand-in: ${rel} (${firstLine(e)})`,
    );
  }
}

/** The stand-in's current hash, or `undefined` when it is gone or no longer a regular file. */
function standInHash(abs: string): string | undefined {
  try {
    return hashFile(abs, { follow: false }).sha256;
  } catch {
    return undefined;
  }
}

/**
 * context-guard `verify-deleted`. Argument and state errors are thrown (exit 2) before anything is
 * written; afterwards every path either proves the merge, rolls the run back, or cleans up.
 */
export function verifyDeleted(
  options: VerifyDeletedOptions,
  reporter: Reporter = silentReporter,
): VerifyDeletedResult {
  const { roots, survivors } = options;
  if (options.targets.length !== 1) {
    throw new UsageError(text`verify-deleted takes exactly one deleted file`);
  }
  if (survivors.length === 0) {
    throw new UsageError(text`verify-deleted needs at least one --survivor`);
  }
  const layer = options.layer ?? "project";
  const runDir = options.runDir ?? resolveBackup(roots.backups, options.selector ?? "last", layer);
  requireSnapshotDir(runDir);
  const root = layerRoot(roots, layer);
  const [target] = options.targets;
  const { abs, rel } = resolveLogical(target, root);
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

  const recordPath = draftRecordPath(runDir, rel);
  const previousRecord = readRecord(recordPath);
  const standIn = writeStandIn(abs, rel, concatenate(survivors));

  /** Refuse to touch a stand-in someone changed; else remove it and restore the record. */
  const cleanUp = (): boolean => {
    if (standInHash(abs) !== standIn) {
      reporter.err(text`❌ stand-in changed concurrently: ${rel}`);
      return false;
    }
    Deno.removeSync(abs);
    putRecordBack(recordPath, previousRecord);
    return true;
  };

  let failed: number;
  try {
    checkpoint({ projectDir: root, runDir, files: [target] }, reporter);
    failed = stageVerify({
      projectDir: root,
      runDir,
      files: [target],
      noRestore: true,
      alphabet: options.alphabet,
    }, reporter).filesFailed;
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    reporter.err(errorText(e));
    const cleaned = cleanUp();
    return { outcome: "aborted", failure: e, standInChanged: !cleaned };
  }

  if (failed === 0) {
    if (!cleanUp()) return { outcome: "aborted", standInChanged: true };
    reporter.out(text`MERGED_VERIFIED: ${rel} -> ${joinText(survivors, " ")}`);
    return { outcome: "merged" };
  }

  reporter.err(text`MERGE_UNPROVEN: ${rel} - survivors do not carry every critical token`);
  reporter.out(text`ROLLBACK: whole run (merge unproven) ${runDir}`);
  const rollback = restoreRunDir(runDir, "ROLLBACK_VERIFIED", [], reporter);
  reportRunFailed(runDir, rollback, reporter);
  return { outcome: "unproven" };
}
