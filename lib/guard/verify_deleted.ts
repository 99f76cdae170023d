/**
 * context-guard `verify-deleted` (spec §7.6): proves that deleting a file lost no critical token,
 * by gating a temporary **stand-in** (the survivors' bytes concatenated) against the deleted file's
 * snapshot copy.
 *
 * The stand-in is checkpointed so that a failed proof can roll the whole run back (the stand-in is
 * owned, so the original comes back). On success the stand-in is removed and the deleted file's
 * previous draft record is put back (§9 G8), so a later `rollback` of the run still has its proof.
 *
 * @module
 */

import {
  closeSync,
  constants,
  lstatSync,
  openSync,
  readFileSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { ArgCursor } from "../args.ts";
import { writeFileAtomic } from "../atomic.ts";
import { CtxkitError, die } from "../exit.ts";
import { isDirectory } from "../paths.ts";
import { resolveBackup } from "./backups.ts";
import { existsFollow, existsNoFollow, isFileFollow, isTrustedCopy, sha256Hex } from "./fsx.ts";
import { draftRecordPath } from "./ownership.ts";
import type { Reporter } from "./report.ts";
import { type GuardRoots, type Layer, layerRoot, resolveLogical } from "./roots.ts";
import { stageCheckpoint, stageVerify } from "./stage.ts";
import { parseAlphabet, type TokenAlphabet } from "./tokens.ts";
import { restoreRunDir } from "./commands/restore_run.ts";

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
  /** Output sink. */
  reporter: Reporter;
}

/** Outcome of {@linkcode verifyDeleted}. */
export interface VerifyDeletedResult {
  /** `merged` (proven, stand-in removed), `unproven` (run rolled back or refused), or `aborted`. */
  outcome: "merged" | "unproven" | "aborted";
  /** Exit code. */
  exitCode: number;
}

/**
 * Parse `verify-deleted`'s arguments (after the subcommand word). A positional is the selector when
 * no `--run-dir`, selector or target was seen yet, nothing exists at that path, and Resolve(arg,
 * layer so far) is an existing directory (§6.1); else it is a target.
 */
export function parseVerifyDeletedArgs(
  args: readonly string[],
  roots: GuardRoots,
): Omit<VerifyDeletedOptions, "roots" | "reporter"> {
  const cursor = new ArgCursor(args);
  const parsed: Omit<VerifyDeletedOptions, "roots" | "reporter"> & {
    survivors: string[];
    targets: string[];
  } = { survivors: [], targets: [] };
  let runDirSeen = false;
  while (!cursor.done) {
    const arg = cursor.next();
    if (arg === "--run-dir") {
      parsed.runDir = cursor.requireValue(arg);
      runDirSeen = true;
    } else if (arg === "--survivor") {
      parsed.survivors.push(cursor.requireValue(arg));
    } else if (arg === "--project" || arg === "--global") {
      parsed.layer = arg === "--project" ? "project" : "global";
    } else if (arg.startsWith("--tokens=")) {
      parsed.alphabet = parseAlphabet(arg.slice("--tokens=".length));
    } else if (arg.startsWith("-")) {
      die(`❌ unknown option: ${arg}`);
    } else if (
      !runDirSeen && parsed.selector === undefined && parsed.targets.length === 0 &&
      !existsFollow(arg) &&
      isDirectory(resolveBackup(roots.backups, arg, parsed.layer ?? "project"))
    ) {
      parsed.selector = arg;
    } else {
      parsed.targets.push(arg);
    }
  }
  return parsed;
}

/** The survivors' bytes concatenated in argument order. */
function concatenate(paths: readonly string[]): Uint8Array {
  const parts = paths.map((p) => readFileSync(p));
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
    return lstatSync(path).isFile() ? readFileSync(path) : null;
  } catch {
    return null;
  }
}

/** Put the remembered draft record back: its bytes, or its absence (§9 G8). */
function putRecordBack(path: string, previous: Uint8Array | null): void {
  if (previous !== null) {
    writeFileAtomic(path, previous, { mode: 0o600, exactMode: true });
    return;
  }
  try {
    if (lstatSync(path).isFile()) unlinkSync(path);
  } catch { /* nothing recorded: nothing to remove */ }
}

/** Create the stand-in exclusively (never over something that appeared meanwhile), owner-only. */
function writeStandIn(abs: string, rel: string, bytes: Uint8Array): void {
  let fd: number;
  try {
    fd = openSync(
      abs,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
  } catch (e) {
    if ((e as { code?: string }).code === "EEXIST") {
      die(`❌ ${rel} is still on disk - verify-deleted is for a DELETED file`);
    }
    die(`❌ cannot write stand-in: ${rel} (${(e as Error).message.split("\n")[0]})`);
  }
  try {
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
  } finally {
    closeSync(fd);
  }
}

/** The stand-in's current hash, or `undefined` when it is gone or no longer a regular file. */
function standInHash(abs: string): string | undefined {
  try {
    if (!lstatSync(abs).isFile()) return undefined;
    return sha256Hex(readFileSync(abs));
  } catch {
    return undefined;
  }
}

/**
 * context-guard `verify-deleted` (§7.6). Argument and state errors die (exit 2) before anything is
 * written; afterwards every path either proves the merge, rolls the run back, or cleans up.
 */
export function verifyDeleted(options: VerifyDeletedOptions): VerifyDeletedResult {
  const { roots, reporter, survivors } = options;
  if (options.targets.length !== 1) die("❌ verify-deleted takes exactly one deleted file");
  if (survivors.length === 0) die("❌ verify-deleted needs at least one --survivor");
  const layer = options.layer ?? "project";
  const runDir = options.runDir ?? resolveBackup(roots.backups, options.selector ?? "last", layer);
  if (!isDirectory(`${runDir}/orig`)) die(`❌ no snapshot dir: ${runDir}/orig`);
  const root = layerRoot(roots, layer);
  const [target] = options.targets;
  const { abs, rel } = resolveLogical(target, root);
  if (!isTrustedCopy(`${runDir}/orig`, rel)) {
    die(`❌ no snapshot for ${rel} in ${runDir} - snapshot before deleting`);
  }
  if (existsNoFollow(abs)) die(`❌ ${rel} is still on disk - verify-deleted is for a DELETED file`);
  for (const s of survivors) if (!isFileFollow(s)) die(`❌ survivor is not a file: ${s}`);

  const recordPath = draftRecordPath(runDir, rel);
  const previousRecord = readRecord(recordPath);
  const bytes = concatenate(survivors);
  writeStandIn(abs, rel, bytes);
  const standIn = sha256Hex(bytes);

  /** Step 3/5: refuse to touch a stand-in someone changed; else remove it and restore the record. */
  const cleanUp = (): boolean => {
    if (standInHash(abs) !== standIn) {
      reporter.err(`❌ stand-in changed concurrently: ${rel}`);
      return false;
    }
    unlinkSync(abs);
    putRecordBack(recordPath, previousRecord);
    return true;
  };

  let failed: number;
  try {
    stageCheckpoint({ projectDir: root, runDir, files: [target], reporter });
    failed = stageVerify({
      projectDir: root,
      runDir,
      files: [target],
      noRestore: true,
      alphabet: options.alphabet,
      reporter,
    }).filesFailed;
  } catch (e) {
    if (!(e instanceof CtxkitError)) throw e;
    if (e.message !== "") reporter.err(e.message);
    const code = cleanUp() ? e.exitCode : 1;
    return { outcome: "aborted", exitCode: code };
  }

  if (failed === 0) {
    if (!cleanUp()) return { outcome: "aborted", exitCode: 1 };
    reporter.out(`MERGED_VERIFIED: ${rel} -> ${survivors.join(" ")}`);
    return { outcome: "merged", exitCode: 0 };
  }

  reporter.err(`MERGE_UNPROVEN: ${rel} - survivors do not carry every critical token`);
  reporter.out(`ROLLBACK: whole run (merge unproven) ${runDir}`);
  let ok: boolean;
  try {
    ok = restoreRunDir(runDir, "ROLLBACK_VERIFIED", [], reporter).ok;
  } catch (e) {
    if (e instanceof CtxkitError) throw new CtxkitError(2, e.message);
    throw e;
  }
  if (ok) {
    reporter.out(`RUN: FAILED - every file of ${runDir} is back at its pre-edit bytes`);
  } else {
    reporter.err(`RUN: FAILED - recovery incomplete; inspect preserved current files in ${runDir}`);
  }
  return { outcome: "unproven", exitCode: 1 };
}

/** Run `context-guard verify-deleted <args>` and return its exit code. */
export function verifyDeletedMain(
  args: readonly string[],
  roots: GuardRoots,
  reporter: Reporter,
): number {
  return verifyDeleted({ ...parseVerifyDeletedArgs(args, roots), roots, reporter }).exitCode;
}
