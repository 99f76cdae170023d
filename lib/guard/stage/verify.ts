/**
 * text-guard `verify` (`references/context-guard.md#the-token-gate`): the critical-token gate per
 * file, restoring failed files with proven ownership unless told not to.
 *
 * @module
 */

import { isFileFollow } from "../../_fs/inspect.ts";
import { type Text, text } from "../../text.ts";
import {
  PathRefusedError,
  refusalLine,
  RestoreRefusedError,
  SnapshotDamagedError,
} from "../errors.ts";
import { readForGate, refuseTooLarge } from "../gate_input.ts";
import { sha256Hex } from "../../_fs/sha256.ts";
import {
  currentState,
  type JudgedRestore,
  judgeRestore,
  recheckRestore,
  restoreFile,
} from "../ownership.ts";
import { refusalHint } from "../refusal.ts";
import { restoreDisplacing } from "../displace.ts";
import { type RestoreOverride, restoreOverride } from "../trust.ts";
import type { Reporter } from "../report.ts";
import { manifestLinkLookup } from "../manifest.ts";
import { type PhysicalDirs, type ResolvedPath, textGuardRoot } from "../roots.ts";
import { requireSnapshotDir, snapshotCopyPath } from "../run_dir.ts";
import { missingTokens, type TokenAlphabet, tokenSet } from "../tokens.ts";
import { snapshottedTarget, type StageFilesOptions } from "./common.ts";

/**
 * Extra miss coverage for `verify` (context-guard's `--ledger`): given a file with misses, the
 * lines to print after its miss lines and whether every miss is covered.
 */
export interface MissCoverage {
  /** Judge the misses of `target` (its snapshot copy's bytes: `copy`). */
  cover(
    target: ResolvedPath,
    copy: Uint8Array,
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

/**
 * text-guard verify's own restore of a failed file whose ownership was proven (`judged`): the
 * replacement written and synced beside it, then the file judged again right before the rename,
 * as every restore does (`references/context-guard.md#concurrency`) — a save that landed meanwhile
 * is kept. False when refused there.
 */
function restoreChecked(
  runDir: string,
  t: ResolvedPath,
  judged: JudgedRestore,
  copyHash: string | undefined,
  override: RestoreOverride | undefined,
): boolean {
  const recheck = () => {
    if (!recheckRestore(runDir, t.rel, t.abs, judged, copyHash, override).allowed) {
      throw new RestoreRefusedError([t.rel]);
    }
  };
  try {
    restoreFile(runDir, t.rel, t.abs, true, undefined, recheck);
  } catch (e) {
    if (e instanceof RestoreRefusedError) return false;
    throw e;
  }
  return true;
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
  // Every file is gated, and its misses judged against the ledger, before any line is printed: a
  // damaged copy found at the last file must not follow a GATE: PASS of the first, nor a survivor
  // that cannot be read a report (references/context-guard.md#verify).
  const damaged: string[] = [];
  const gated = targets.map((t) => {
    const copyBytes = readForGate(snapshotCopyPath(runDir, t.rel), t.rel);
    if (options.copyHashes !== undefined) {
      const want = options.copyHashes.get(t.rel);
      if (want === undefined || sha256Hex(copyBytes) !== want) damaged.push(t.rel);
    }
    return { copyBytes, misses: gateMisses(copyBytes, readForGate(t.abs, t.rel), alphabet) };
  });
  if (damaged.length > 0) throw new SnapshotDamagedError(runDir, damaged);
  const judged = targets.map((t, i) => {
    const { copyBytes, misses } = gated[i];
    return misses.length === 0 ? undefined : options.coverage?.cover(t, copyBytes, misses);
  });
  const verdicts: FileVerdict[] = [];
  const override = options.noRestore ? undefined : restoreOverride(runDir);
  let failed = 0;
  for (const [i, t] of targets.entries()) {
    const misses = gated[i].misses;
    reportMisses(t.rel, misses, reporter);
    if (misses.length === 0) {
      reporter.out(text`GATE: PASS`);
      reporter.out(text`ACTION: kept`);
      verdicts.push({ target: t, misses, gate: "pass", action: "kept" });
      continue;
    }
    const coverage = judged[i];
    if (coverage !== undefined) { for (const line of coverage.lines) reporter.out(line); }
    if (coverage?.covered) {
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
      const copyHash = currentState(snapshotCopyPath(runDir, t.rel));
      const judged = judgeRestore(runDir, t.rel, t.abs, copyHash, override);
      const restored = !judged.allowed
        ? false
        : judged.displace
        ? restoreDisplacing(runDir, t, judged, override, reporter)
        : restoreChecked(runDir, t, judged, copyHash, override);
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
