/**
 * text-guard's operations (spec §5): snapshot, checkpoint, verify, restore and status. context-guard
 * runs the same functions as its "stage" with the layer (or manifest) root as `projectDir`, so its
 * output, order and codes are text-guard's.
 *
 * Every function prints through a {@linkcode Reporter} and throws {@linkcode CtxkitError} to end with a
 * code; lines already printed stay printed.
 *
 * @module
 */

import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fsyncDirectory, writeFileAtomic } from "../atomic.ts";
import { CtxkitError, die } from "../exit.ts";
import { faultPoint } from "../faults.ts";
import { runGit } from "../git.ts";
import { isDirectory } from "../paths.ts";
import {
  existsNoFollow,
  isFileFollow,
  isTrustedCopy,
  listRegularFiles,
  makePrivateDirs,
  writeNewFile,
} from "./fsx.ts";
import {
  currentState,
  mayRestore,
  refusalLine,
  restoreFile,
  snapshotCopyPath,
  writeDraftRecord,
} from "./ownership.ts";
import type { Reporter } from "./report.ts";
import { isSymlink, type ResolvedPath, resolvePhysical, textGuardRoot } from "./roots.ts";
import { missingTokens, type TokenAlphabet, tokenSet } from "./tokens.ts";

/** `YYYYMMDD-HHMMSS` in local time. */
export function localStamp(date: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}-` +
    `${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

/** True when git answers `rev-parse --git-dir` in `dir` (git absent = not a repository, §9 G13). */
export function isGitRepo(dir: string): boolean {
  if (!isDirectory(dir)) return false;
  return runGit(["-C", dir, "rev-parse", "--git-dir"], dir).status === 0;
}

// ---------------------------------------------------------------------------------------------
// snapshot

/** Inputs of {@linkcode stageSnapshot}. */
export interface StageSnapshotOptions {
  /** `CLAUDE_PROJECT_DIR` for root resolution (the layer root when run as context-guard's stage). */
  projectDir?: string;
  /** File arguments, as typed. */
  files: readonly string[];
  /** Skip the clean-tree gate. */
  allowDirty?: boolean;
  /** `--run-dir` as given; otherwise an automatic name. */
  runDir?: string;
  /** Automatic run-dir name for collision index `n` (1 = no suffix); default text-guard's. */
  autoRunDir?: (n: number) => string;
  /** Only this directory and what lies below it are checked for links (context-guard's `B`, G16). */
  linkCheckBase?: string;
  /** Clock (default: now). */
  now?: Date;
  /** Output sink. */
  reporter: Reporter;
}

/** What {@linkcode stageSnapshot} wrote. */
export interface StageSnapshotResult {
  /** Physical root `T`. */
  root: string;
  /** The run dir as given or generated. */
  runDir: string;
  /** Resolved targets, in argument order (repeats kept). */
  targets: ResolvedPath[];
}

/** Refuse a link at `dir` or any lexical ancestor (limited to `base` and below when `dir` is in it). */
function refuseLinkedRunDir(dir: string, base: string | undefined): void {
  const limited = base !== undefined && (dir === base || dir.startsWith(`${base}/`));
  let p = dir;
  while (p !== "/" && p !== "." && p !== "") {
    if (limited && !(p === base || p.startsWith(`${base}/`))) break;
    if (isSymlink(p)) die(`❌ symbolic-link snapshot path: ${p}`);
    const parent = dirname(p);
    if (parent === p) break;
    p = parent;
  }
}

/** Create `dir` exclusively (0700); false when something already exists there. */
function createExclusive(dir: string, base: string | undefined): boolean {
  makePrivateDirs(dirname(dir), base);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (e) {
    if ((e as { code?: string }).code === "EEXIST") return false;
    throw e;
  }
  return true;
}

const IGNORE_LINE = ".claude/reports/";

/** The `.gitignore` of `root` with `.claude/reports/` appended once, newline-safe (§9 G9). */
function gitignoreUpdate(
  root: string,
): { path: string; content: Uint8Array; mode: number } | undefined {
  const path = `${root === "/" ? "" : root}/.gitignore`;
  let bytes = new Uint8Array();
  let mode = 0o666; // created: open() applies the umask, as a shell redirect would
  try {
    bytes = readFileSync(path);
    mode = Deno.statSync(path).mode! & 0o7777;
  } catch { /* absent: created */ }
  const text = new TextDecoder().decode(bytes);
  if (text.split("\n").some((line) => line === IGNORE_LINE)) return undefined;
  const sep = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a ? "\n" : "";
  const add = new TextEncoder().encode(`${sep}${IGNORE_LINE}\n`);
  const next = new Uint8Array(bytes.length + add.length);
  next.set(bytes);
  next.set(add, bytes.length);
  return { path, content: next, mode };
}

/**
 * Append `.claude/reports/` to `root/.gitignore` once. A concurrent snapshot may create the file
 * between our look and our exclusive create: then read it again and update it like any existing one.
 */
function appendIgnoreLine(root: string): void {
  for (let attempt = 0; attempt < 3; attempt++) {
    const update = gitignoreUpdate(root);
    if (update === undefined) return;
    if (existsNoFollow(update.path)) {
      writeFileAtomic(update.path, update.content, { mode: update.mode, exactMode: true });
      return;
    }
    try {
      writeFileSync(update.path, update.content, { mode: update.mode, flag: "wx" });
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw e;
    }
  }
}

/**
 * text-guard `snapshot` (§5.1): copy the targets to `<run dir>/orig/<rel>` and print `ROOT:`,
 * `SNAPSHOT:`, the rel lines and `RUN_DIR:`.
 */
export function stageSnapshot(options: StageSnapshotOptions): StageSnapshotResult {
  const { files, reporter } = options;
  if (files.length === 0) die("❌ snapshot needs at least one file");
  const root = textGuardRoot(options.projectDir);
  const targets: ResolvedPath[] = [];
  for (const f of files) {
    if (!isFileFollow(f)) die(`❌ not a file: ${f}`);
    targets.push(resolvePhysical(f, root));
  }
  const inGit = isGitRepo(root);
  if (!options.allowDirty) cleanTreeGate(root, inGit, targets);

  const base = options.linkCheckBase;
  const stamp = localStamp(options.now ?? new Date());
  const auto = options.autoRunDir ??
    ((n: number) =>
      `${root === "/" ? "" : root}/.claude/reports/${stamp}_text-optimize${
        n === 1 ? "" : `-${n}`
      }`);
  let n = 1;
  let runDir = options.runDir ?? auto(n);
  if (options.runDir === undefined) { while (existsNoFollow(runDir)) runDir = auto(++n); }
  refuseLinkedRunDir(runDir, base);
  // An auto name taken meanwhile is not an error: the exclusive creation below moves on.
  if (options.runDir !== undefined && existsNoFollow(runDir)) {
    die(`❌ snapshot directory already exists: ${runDir}`);
  }
  if (inGit && isSymlink(`${root === "/" ? "" : root}/.gitignore`)) {
    die(`❌ refusing to update symbolic-link ignore file: ${root}/.gitignore`);
  }
  while (!createExclusive(runDir, base)) {
    if (options.runDir !== undefined) die(`❌ snapshot directory already exists: ${runDir}`);
    runDir = auto(++n); // an auto name taken meanwhile by a concurrent run: next suffix
  }
  if (inGit) appendIgnoreLine(root);
  // The run dir is new and ours: copies are created exclusively (a repeated argument replaces its
  // earlier copy atomically), and each directory is synced once.
  const dirs = new Set<string>([dirname(runDir), runDir]);
  for (const t of targets) {
    faultPoint("stage.snapshot.between-copies");
    const copy = snapshotCopyPath(runDir, t.rel);
    const dir = dirname(copy);
    if (!dirs.has(dir)) {
      makePrivateDirs(dir, runDir);
      for (let d = dir; d.length > runDir.length; d = dirname(d)) dirs.add(d);
    }
    const bytes = readFileSync(t.abs);
    if (existsNoFollow(copy)) writeFileAtomic(copy, bytes, { mode: 0o600, exactMode: true });
    else writeNewFile(copy, bytes, 0o600);
  }
  for (const d of dirs) fsyncDirectory(d);
  reporter.out(`ROOT: ${root}`);
  reporter.out(`SNAPSHOT: ${files.length} files`);
  for (const t of targets) reporter.out(`  ${t.rel}`);
  reporter.out(`RUN_DIR: ${runDir}`);
  return { root, runDir, targets };
}

function cleanTreeGate(root: string, inGit: boolean, targets: readonly ResolvedPath[]): void {
  if (!inGit) {
    throw new CtxkitError(
      3,
      `❌ ${root} is not a git repository - no recoverable pre-state.\n` +
        "   Commit the targets under git, or re-run with --allow-dirty to accept the risk.",
    );
  }
  const status = runGit(
    ["-C", root, "status", "--porcelain", "--", ...targets.map((t) => t.rel)],
    root,
  );
  if (status.status !== 0 || status.stdout === "") return;
  throw new CtxkitError(
    3,
    "❌ uncommitted changes in the optimize targets - refusing to rewrite in place:\n" +
      status.stdout.replace(/\n$/, "") + "\n" +
      "   Commit or stash them, or re-run with --allow-dirty.",
  );
}

// ---------------------------------------------------------------------------------------------
// checkpoint

/** Inputs of {@linkcode stageCheckpoint}. */
export interface StageFilesOptions {
  /** `CLAUDE_PROJECT_DIR` for root resolution. */
  projectDir?: string;
  /** The run dir. */
  runDir: string;
  /** File arguments, as typed. */
  files: readonly string[];
  /** Output sink. */
  reporter: Reporter;
}

/**
 * Resolve `f` physically against `root` and require its trusted snapshot copy in `runDir`; dies with
 * `missing(rel)` otherwise. The pre-flight every file operation of a run dir starts with.
 */
function snapshottedTarget(
  f: string,
  root: string,
  runDir: string,
  missing: (rel: string) => string,
): ResolvedPath {
  const t = resolvePhysical(f, root);
  if (!isTrustedCopy(`${runDir}/orig`, t.rel)) die(missing(t.rel));
  return t;
}

/**
 * text-guard `checkpoint` (§5.2): after checking every file, record each one's current hash (or
 * `MISSING`) as the owned draft and print `CHECKPOINT: <rel>`.
 */
export function stageCheckpoint(options: StageFilesOptions): ResolvedPath[] {
  const { runDir, reporter } = options;
  const root = textGuardRoot(options.projectDir);
  const targets: ResolvedPath[] = [];
  for (const f of options.files) {
    const t = snapshottedTarget(f, root, runDir, (rel) => `❌ no snapshot for ${rel}`);
    if (existsNoFollow(t.abs) && !isFileFollow(t.abs)) die(`❌ not a regular draft: ${f}`);
    targets.push(t);
  }
  // Each record is atomic; its directory is synced once for the batch. A record lost to a crash
  // before that sync only makes a later restore refuse (the safe side).
  const dirs = new Set<string>();
  for (const t of targets) {
    dirs.add(writeDraftRecord(runDir, t.rel, currentState(t.abs), false));
    reporter.out(`CHECKPOINT: ${t.rel}`);
  }
  for (const d of dirs) fsyncDirectory(d);
  return targets;
}

// ---------------------------------------------------------------------------------------------
// verify

/**
 * Extra miss coverage for `verify` (context-guard's `--ledger`, §7.5): given a file with misses,
 * return the lines to print after its miss lines and whether every miss is covered.
 */
export interface MissCoverage {
  /** Judge the misses of `target` (snapshot copy at `snapshotCopy`). */
  cover(
    target: ResolvedPath,
    snapshotCopy: string,
    misses: readonly string[],
  ): { lines: string[]; covered: boolean };
}

/** Inputs of {@linkcode stageVerify}. */
export interface StageVerifyOptions extends StageFilesOptions {
  /** Report only, never restore (`--no-restore`). */
  noRestore?: boolean;
  /** Token alphabet (default `base`). */
  alphabet?: TokenAlphabet;
  /** Optional ledger coverage of misses. */
  coverage?: MissCoverage;
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

/**
 * text-guard `verify` (§5.3): the critical-token gate per file, restoring failed files with proven
 * ownership unless `noRestore`; ends with `FILES_FAILED: <n>`. Pre-flight errors die before any report.
 */
export function stageVerify(options: StageVerifyOptions): StageVerifyResult {
  const { runDir, reporter, files } = options;
  const alphabet = options.alphabet ?? "base";
  if (!isDirectory(`${runDir}/orig`)) die(`❌ no snapshot dir: ${runDir}/orig`);
  const root = textGuardRoot(options.projectDir);
  const targets: ResolvedPath[] = [];
  for (const f of files) {
    const t = snapshottedTarget(
      f,
      root,
      runDir,
      (rel) => `❌ no snapshot for ${rel} in ${runDir} - run 'snapshot' before editing`,
    );
    if (!isFileFollow(t.abs)) die(`❌ target vanished: ${t.rel}`);
    targets.push(t);
  }
  const verdicts: FileVerdict[] = [];
  let failed = 0;
  for (const t of targets) {
    const copy = snapshotCopyPath(runDir, t.rel);
    const misses = missingTokens(
      tokenSet(readFileSync(copy), alphabet),
      tokenSet(readFileSync(t.abs), alphabet),
    );
    reporter.out(`FILE: ${t.rel}`);
    reporter.out(`MISSING: ${misses.length}`);
    for (const m of misses) reporter.out(`  - ${m}`);
    if (misses.length === 0) {
      reporter.out("GATE: PASS");
      reporter.out("ACTION: kept");
      verdicts.push({ target: t, misses, gate: "pass", action: "kept" });
      continue;
    }
    const judged = options.coverage?.cover(t, copy, misses);
    if (judged !== undefined) { for (const line of judged.lines) reporter.out(line); }
    if (judged?.covered) {
      reporter.out("GATE: PASS (every miss ledgered)");
      reporter.out("ACTION: kept");
      verdicts.push({ target: t, misses, gate: "ledgered", action: "kept" });
      continue;
    }
    failed++;
    reporter.out("GATE: FAIL");
    let action: FileVerdict["action"] = "kept";
    if (options.noRestore) {
      reporter.out("ACTION: kept");
    } else if (mayRestore(runDir, t.rel, t.abs)) {
      restoreFile(runDir, t.rel, t.abs);
      reporter.out("ACTION: restored");
      action = "restored";
    } else {
      reporter.err(refusalLine(t.rel));
      reporter.out("ACTION: kept (restore refused)");
      action = "refused";
    }
    verdicts.push({ target: t, misses, gate: "fail", action });
  }
  reporter.out(`FILES_FAILED: ${failed}`);
  return { files: verdicts, filesFailed: failed };
}

// ---------------------------------------------------------------------------------------------
// restore

/**
 * text-guard `restore` (§5.4): all or nothing. Every file is checked first; each refusal is named on
 * stderr and ends with exit 1, nothing written. Else each file is restored in order (`RESTORED:`).
 */
export function stageRestore(options: StageFilesOptions): ResolvedPath[] {
  const { runDir, reporter } = options;
  const root = textGuardRoot(options.projectDir);
  const targets = options.files.map((f) =>
    snapshottedTarget(f, root, runDir, (rel) => `❌ no snapshot for ${rel}`)
  );
  const refused = targets.filter((t) => !mayRestore(runDir, t.rel, t.abs));
  if (refused.length > 0) {
    throw new CtxkitError(1, refused.map((t) => refusalLine(t.rel)).join("\n"));
  }
  const dirs = new Set<string>();
  for (const t of targets) {
    faultPoint("stage.restore.between-files");
    restoreFile(runDir, t.rel, t.abs, false);
    dirs.add(dirname(t.abs));
    reporter.out(`RESTORED: ${t.rel}`);
  }
  for (const d of dirs) fsyncDirectory(d);
  return targets;
}

// ---------------------------------------------------------------------------------------------
// status

/** text-guard `status` (§5.5): the regular files under `<run dir>/orig`, sorted. No root resolved. */
export function stageStatus(runDir: string, reporter: Reporter): string[] {
  if (!isDirectory(`${runDir}/orig`)) die(`❌ no snapshot dir: ${runDir}/orig`);
  const rels = listRegularFiles(`${runDir}/orig`);
  reporter.out(`RUN_DIR: ${runDir}`);
  reporter.out(`SNAPSHOT: ${rels.length} files`);
  for (const rel of rels) reporter.out(`  ${rel}`);
  return rels;
}
