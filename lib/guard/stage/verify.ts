/**
 * text-guard `verify` (`references/context-guard.md#the-token-gate`): the critical-token gate per
 * file, restoring failed files with proven ownership unless told not to.
 *
 * @module
 */

import { isFileFollow } from "../../_fs/inspect.ts";
import { ReadRefusedError, readRegular } from "../../_fs/read.ts";
import { type Text, text } from "../../text.ts";
import {
  asFileSystemError,
  PathRefusedError,
  refusalLine,
  SnapshotDamagedError,
} from "../errors.ts";
import { sha256Hex } from "../../_fs/sha256.ts";
import { currentState, judgeRestore, restoreFile } from "../ownership.ts";
import { refusalHint } from "../refusal.ts";
import { restoreDisplacing } from "../displace.ts";
import { restoreOverride } from "../trust.ts";
import type { Reporter } from "../report.ts";
import { manifestLinkLookup } from "../manifest.ts";
import { type PhysicalDirs, type ResolvedPath, textGuardRoot } from "../roots.ts";
import { requireSnapshotDir, snapshotCopyPath } from "../run_dir.ts";
import { missingTokens, type TokenAlphabet, tokenSet } from "../tokens.ts";
import { snapshottedTarget, type StageFilesOptions } from "./common.ts";

/**
 * The largest file the token gate reads (both the snapshot copy and the current file): the gate
 * holds both versions and their decoded text in memory.
 */
export const GATE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Extra miss coverage for `verify` (context-guard's `--ledger`): given a file with misses, the
 * lines to print after its miss lines and whether every miss is covered.
 */
export interface MissCoverage {
  /** Judge the misses of `target` (snapshot copy at `snapshotCopy`). */
  cover(
    target: ResolvedPath,
    snapshotCopy: string,
    misses: readonly string[],
  ): { lines: Text[]; covered: boolean };
}

/** Inputs of {@linkcode stageVerify}. */
export interface StageVerifyOptions extends StageFilesOptions {
  /** Report only, never restore (`--no-restore`). */
  noRestore?: boolean;
  /** Token alphabet (default `base`). */
  alphabet?: TokenAlphabet;
  /** Optional ledger coverage of misses. */
  coverage?: MissCoverage;
  /**
   * The hash each snapshot copy must have (context-guard's manifest): every copy is checked
   * against it before any gate line is printed, and a copy that differs (or has no entry) is a
   * {@linkcode SnapshotDamagedError} — a damaged copy never gates.
   */
  copyHashes?: ReadonlyMap<string, string | undefined>;
}

/** The verdict on one verified file. */
export interface FileVerdict {
  /** The resolved target. */
  target: ResolvedPath;
  /** Sorted misses. */
  misses: string[];
  /** `pass`, `ledgered` (every miss covered) or `fail`. */
  gate: "pass" | "ledgered" | "fail";
  /** What happened to the file. */
  action: "kept" | "restored" | "refused";
}

/** Result of {@linkcode stageVerify}. */
export interface StageVerifyResult {
  /** One verdict per argument, in order. */
  files: FileVerdict[];
  /** Number of `GATE: FAIL` files. */
  filesFailed: number;
}

/** Read a file for the gate: whole, but only up to {@linkcode GATE_MAX_BYTES}. */
export function readForGate(path: string, shown: string): Uint8Array {
  try {
    return readRegular(path, { maxBytes: GATE_MAX_BYTES });
  } catch (e) {
    if (e instanceof ReadRefusedError && e.refusal === "too-large") {
      throw new PathRefusedError(
        shown,
        "too-large",
        text`too large for the token gate: ${shown} (${
          e.size ?? 0
        } bytes; the limit is ${GATE_MAX_BYTES})`,
      );
    }
    throw e instanceof ReadRefusedError ? e : asFileSystemError(e, "read", shown);
  }
}

/** The gate's misses: tokens of the snapshot copy the current bytes lack, sorted. */
export function gateMisses(
  copy: Uint8Array,
  current: Uint8Array,
  alphabet: TokenAlphabet,
): string[] {
  return missingTokens(tokenSet(copy, alphabet), tokenSet(current, alphabet));
}

/** The first lines of a file's verdict: `FILE:`, `MISSING: <n>` and one `  - <token>` per miss. */
export function reportMisses(rel: string, misses: readonly string[], reporter: Reporter): void {
  reporter.out(text`FILE: ${rel}`);
  reporter.out(text`MISSING: ${misses.length}`);
  for (const m of misses) reporter.out(text`  - ${m}`);
}

/** Refuse, before anything is read whole, a file above {@linkcode GATE_MAX_BYTES}. */
export function refuseTooLarge(path: string, shown: string): void {
  if (tooLarge(path)) readForGate(path, shown);
}

function tooLarge(path: string): boolean {
  try {
    return Deno.statSync(path).size > GATE_MAX_BYTES;
  } catch {
    return false;
  }
}

/**
 * The critical-token gate per file, restoring failed files with proven ownership unless
 * `noRestore`; ends with `FILES_FAILED: <n>`. Pre-flight errors are thrown before any report.
 */
export function stageVerify(options: StageVerifyOptions, reporter: Reporter): StageVerifyResult {
  const { runDir, files } = options;
  const alphabet = options.alphabet ?? "base";
  requireSnapshotDir(runDir);
  const root = textGuardRoot(options.projectDir, options.rootName);
  const links = manifestLinkLookup(runDir);
  const targets: ResolvedPath[] = [];
  const physicalDirs: PhysicalDirs = new Map();
  for (const f of files) {
    const t = snapshottedTarget(
      f,
      root,
      runDir,
      (rel) => text`no snapshot for ${rel} in ${runDir} - run 'snapshot' before editing`,
      options.rootName,
      links,
      physicalDirs,
    );
    if (!isFileFollow(t.abs)) {
      throw new PathRefusedError(t.rel, "vanished", text`target vanished: ${t.rel}`);
    }
    for (const path of [snapshotCopyPath(runDir, t.rel), t.abs]) refuseTooLarge(path, t.rel);
    targets.push(t);
  }
  // Every file is gated before any line is printed: a damaged copy found at the last file must
  // not follow a GATE: PASS of the first (references/context-guard.md#verify).
  const damaged: string[] = [];
  const gated = targets.map((t) => {
    const copyBytes = readForGate(snapshotCopyPath(runDir, t.rel), t.rel);
    if (options.copyHashes !== undefined) {
      const want = options.copyHashes.get(t.rel);
      if (want === undefined || sha256Hex(copyBytes) !== want) damaged.push(t.rel);
    }
    return gateMisses(copyBytes, readForGate(t.abs, t.rel), alphabet);
  });
  if (damaged.length > 0) throw new SnapshotDamagedError(runDir, damaged);
  const verdicts: FileVerdict[] = [];
  const override = options.noRestore ? undefined : restoreOverride(runDir);
  let failed = 0;
  for (const [i, t] of targets.entries()) {
    const copy = snapshotCopyPath(runDir, t.rel);
    const misses = gated[i];
    reportMisses(t.rel, misses, reporter);
    if (misses.length === 0) {
      reporter.out(text`GATE: PASS`);
      reporter.out(text`ACTION: kept`);
      verdicts.push({ target: t, misses, gate: "pass", action: "kept" });
      continue;
    }
    const judged = options.coverage?.cover(t, copy, misses);
    if (judged !== undefined) { for (const line of judged.lines) reporter.out(line); }
    if (judged?.covered) {
      reporter.out(text`GATE: PASS (every miss ledgered)`);
      reporter.out(text`ACTION: kept`);
      verdicts.push({ target: t, misses, gate: "ledgered", action: "kept" });
      continue;
    }
    failed++;
    reporter.out(text`GATE: FAIL`);
    let action: FileVerdict["action"] = "kept";
    if (options.noRestore) {
      reporter.out(text`ACTION: kept`);
    } else {
      const judged = judgeRestore(runDir, t.rel, t.abs, currentState(copy), override);
      const restored = !judged.allowed
        ? false
        : judged.displace
        ? restoreDisplacing(runDir, t, judged, override, reporter)
        : (restoreFile(runDir, t.rel, t.abs), true);
      if (restored) {
        reporter.out(text`ACTION: restored`);
        action = "restored";
      } else {
        reporter.err(text`${refusalLine(t.rel)}\n${refusalHint(runDir, t, root)}`);
        reporter.out(text`ACTION: kept (restore refused)`);
        action = "refused";
      }
    }
    verdicts.push({ target: t, misses, gate: "fail", action });
  }
  reporter.out(text`FILES_FAILED: ${failed}`);
  return { files: verdicts, filesFailed: failed };
}
