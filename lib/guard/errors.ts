/**
 * The guard's failure kinds: one class per kind a caller may handle, each carrying its data and
 * the exit code of the command line (`references/context-guard.md#exit-codes-and-streams`). Both
 * guard CLIs format them in one place (`cli_format.ts`).
 *
 * @example
 * ```ts ignore
 * import { PathRefusedError } from "./errors.ts";
 * try {
 *   await snapshot({ roots, files: ["notes/"] });
 * } catch (e) {
 *   if (e instanceof PathRefusedError && e.reason === "not-a-file") console.log(`skip ${e.path}`);
 * }
 * ```
 *
 * @module
 */

import { CtxkitError } from "../errors.ts";
import { errorCode, isPermissionError, isSandboxRefusal, osReason } from "../_fs/errors.ts";
import { ReadRefusedError, refusalReason } from "../_fs/read.ts";
import { joinText, type Text, text, verbatim } from "../text.ts";

/** Why a path was refused. */
export type PathRefusal = PathRefusedError["reason"];

/**
 * A path Deno refuses under any grant (`/proc/self/environ` and friends): named as a property of
 * the path, never as advice to run with more permissions (`references/output.md#least-privilege`).
 */
export function sandboxRefused(path: string, action: string): PathRefusedError {
  return new PathRefusedError(
    path,
    "sandbox",
    text`cannot ${action} ${path}: Operation not permitted (refused by the Deno sandbox)`,
  );
}

/** A path the guard will not read or write (exit 2), refused before anything is written. */
export class PathRefusedError extends CtxkitError {
  /** The refused path, as given or as resolved. */
  readonly path: string;
  /** Why. */
  readonly reason:
    | "not-a-file"
    | "unresolvable"
    | "outside-root"
    | "symlink"
    | "linked-component"
    | "special-file"
    | "non-utf8"
    | "exists"
    | "not-empty"
    | "still-present"
    | "not-regular-draft"
    | "vanished"
    | "too-large"
    | "unwritable"
    | "replaced"
    | "kept-changing"
    | "untrusted"
    | "sandbox";
  /** Create the error. */
  constructor(path: string, reason: PathRefusedError["reason"], message: Text) {
    super(2, message);
    this.path = path;
    this.reason = reason;
  }
}

/** What a run dir lacks. */
export type SnapshotProblem = SnapshotMissingError["problem"];

/** The run dir has no snapshot of what was asked for (exit 2). */
export class SnapshotMissingError extends CtxkitError {
  /** The run dir (or the backup root, for `no-backups` and `no-match`). */
  readonly runDir: string;
  /** The root-relative file concerned, when there is one. */
  readonly rel?: string;
  /** What is missing. */
  readonly problem:
    | "no-snapshot-dir"
    | "no-snapshot"
    | "no-backups"
    | "no-match"
    | "not-in-manifest";
  /** Create the error. */
  constructor(
    problem: SnapshotMissingError["problem"],
    runDir: string,
    message: Text,
    rel?: string,
  ) {
    super(2, message);
    this.problem = problem;
    this.runDir = runDir;
    if (rel !== undefined) this.rel = rel;
  }
}

/** What is wrong with a manifest. */
export type ManifestProblem = ManifestError["problem"];

/** A run dir's `manifest.json` cannot be trusted (exit 2); nothing was written. */
export class ManifestError extends CtxkitError {
  /** The manifest path. */
  readonly path: string;
  /** What is wrong. */
  readonly problem:
    | "missing"
    | "unreadable"
    | "no-root"
    | "relative-root"
    | "moved-root"
    | "empty"
    | "unsafe-path"
    | "duplicate-path"
    | "not-written";
  /** The entry concerned, for path problems. */
  readonly entry?: string;
  /** Create the error. */
  constructor(path: string, problem: ManifestError["problem"], message: Text, entry?: string) {
    super(2, message);
    this.path = path;
    this.problem = problem;
    if (entry !== undefined) this.entry = entry;
  }
}

/** The `--ledger` file is missing or malformed (exit 2); reported before any gate output. */
export class LedgerError extends CtxkitError {
  /** The `--ledger` value as typed. */
  readonly ledger: string;
  /** The malformed row's physical line, when the file was read. */
  readonly line?: number;
  /** Create the error. */
  constructor(ledger: string, message: Text, line?: number) {
    super(2, message);
    this.ledger = ledger;
    if (line !== undefined) this.line = line;
  }
}

/**
 * A context-scan document given to `state` was rejected (exit 2), printed as
 * `State rejected: <path>: <reason>`.
 */
export class ScanRejectedError extends CtxkitError {
  /** The scan document's path as given. */
  readonly path: string;
  /** The rejection reason (one of the documented reasons). */
  readonly reason: string;
  /** Create the error. */
  constructor(path: string, reason: string) {
    super(2, text`State rejected: ${path}: ${reason}`);
    this.path = path;
    this.reason = reason;
  }
}

/** The state file could not be written or did not read back valid (exit 2). */
export class StateWriteError extends CtxkitError {
  /** The state file path. */
  readonly path: string;
  /** Create the error. */
  constructor(path: string, reason: string) {
    super(2, text`cannot write state file: ${path} (${reason})`);
    this.path = path;
  }
}

/**
 * The tree is not safe to rewrite in place (exit 3, nothing written): tracked targets with
 * uncommitted changes, or (text-guard) no git repository at all.
 */
export class DirtyTreeError extends CtxkitError {
  /** The root checked. */
  readonly root: string;
  /** git's porcelain lines for the dirty targets (empty when the root is not a repository). */
  readonly porcelain: readonly string[];
  /** Create the error. */
  constructor(root: string, porcelain: readonly string[], message: Text) {
    super(3, message);
    this.root = root;
    this.porcelain = porcelain;
  }
}

/**
 * Restoring was refused (exit 1): the current bytes of these files are not provably the
 * optimizer's, so they were kept; nothing was written. Printed as one `RESTORE_REFUSED:` line each.
 */
export class RestoreRefusedError extends CtxkitError {
  /** The refused root-relative paths, in order. */
  readonly rels: readonly string[];
  /** Create the error; `hints[i]`, when given, is printed under the line of `rels[i]`. */
  constructor(rels: readonly string[], hints: readonly Text[] = []) {
    super(1, refusalLines(rels, hints));
    this.rels = rels;
  }
}

/** The `RESTORE_REFUSED:` line of one file. */
export function refusalLine(rel: string): Text {
  return text`RESTORE_REFUSED: ${rel} (current bytes lack matching draft ownership)`;
}

function refusalLines(rels: readonly string[], hints: readonly Text[]): Text {
  return joinText(
    rels.map((rel, i) =>
      hints[i] === undefined ? refusalLine(rel) : text`${refusalLine(rel)}\n${hints[i]}`
    ),
    "\n",
  );
}

/**
 * How a guard failure reads on stderr: `❌ <message>`, except the refusal and rejection lines,
 * which are contract lines of their own (`RESTORE_REFUSED: …`, `State rejected: …`). The one
 * formatting rule both guard CLIs and the commands that relay a stage's failure use.
 */
export function errorText(e: CtxkitError): Text {
  if (e instanceof RestoreStoppedError) return errorText(e.reason);
  if (
    e instanceof RestoreRefusedError || e instanceof ScanRejectedError ||
    e instanceof SnapshotDamagedError
  ) {
    return e.text;
  }
  return text`❌ ${e.text}`;
}

/**
 * context-guard's stage (text-guard's code) failed inside `snapshot`: `cause` is the stage's own
 * error (printed first); this one adds `snapshot failed (text-guard exit <n>)`.
 */
export class StageFailedError extends CtxkitError {
  /** Create the error for the stage failure `cause`. */
  constructor(cause: CtxkitError) {
    super(cause.exitCode, text`snapshot failed (text-guard exit ${cause.exitCode})`, { cause });
  }
}

/**
 * An operation on a path failed in the OS (ENOSPC, EACCES, ENOTDIR, ENAMETOOLONG, EPERM…): one
 * line naming the operation and the path, exit 2 — never an internal error
 * (`references/context-guard.md#exit-codes-and-streams`).
 */
export class FileSystemError extends CtxkitError {
  /** The path concerned. */
  readonly path: string;
  /** What was being done: `read`, `write`, `replace`, `create directory`… */
  readonly operation: string;
  /** The OS error code (`ENOSPC`…), when there is one. */
  readonly code?: string;
  /** Create the error for the OS error `cause`. */
  constructor(operation: string, path: string, cause: unknown) {
    super(2, text`cannot ${verbatim(operation)} ${path}: ${osReason(cause)}`, { cause });
    this.path = path;
    this.operation = operation;
    const code = errorCode(cause);
    if (code !== undefined) this.code = code;
  }
}

/**
 * `e` as the guard reports it: a ctxkit failure or a missing Deno grant as it is, a path the
 * sandbox refuses as such, any other error as a {@linkcode FileSystemError} of `operation` on
 * `path`.
 */
export function asFileSystemError(e: unknown, operation: string, path: string): unknown {
  if (e instanceof CtxkitError || isPermissionError(e)) return e;
  if (isSandboxRefusal(e)) return sandboxRefused(path, operation);
  if (e instanceof ReadRefusedError) return readRefused(e, operation, path);
  return new FileSystemError(operation, path, e);
}

/** A read refusal as one line: `cannot <operation> <path>: <refusal in words>` (exit 2). */
function readRefused(e: ReadRefusedError, operation: string, path: string): PathRefusedError {
  return new PathRefusedError(
    path,
    e.refusal === "symlink" ? "symlink" : e.refusal === "too-large" ? "too-large" : "special-file",
    text`cannot ${verbatim(operation)} ${path}: ${refusalReason(e.refusal)}`,
  );
}

/**
 * Snapshot copies that do not match the hashes their manifest recorded (exit 1): nothing may be
 * gated against them, nor restored from them. Printed as one `❌ SNAPSHOT CHECKSUM MISMATCH:`
 * line each.
 */
export class SnapshotDamagedError extends CtxkitError {
  /** The run dir. */
  readonly runDir: string;
  /** The root-relative paths of the damaged copies, in order. */
  readonly rels: readonly string[];
  /** Create the error. */
  constructor(runDir: string, rels: readonly string[]) {
    super(1, joinText(rels.map(checksumMismatchLine), "\n"));
    this.runDir = runDir;
    this.rels = rels;
  }
}

/** The `❌ SNAPSHOT CHECKSUM MISMATCH: <rel>` line of one damaged copy. */
export function checksumMismatchLine(rel: string): Text {
  return text`❌ SNAPSHOT CHECKSUM MISMATCH: ${rel}`;
}

/**
 * A restore stopped part way (exit: its cause's): a fresh ownership check or a rename failed after
 * `restored` had been put in place. Nothing after `rel` was touched; the caller's summary names
 * what changed (`references/context-guard.md#restoring-a-run-dir`).
 */
export class RestoreStoppedError extends CtxkitError {
  /** What stopped it: a refusal, a refused destination or an OS error. */
  readonly reason: CtxkitError;
  /** The file it stopped at. */
  readonly rel: string;
  /** The files restored before it, in order (each printed `RESTORED:`). */
  readonly restored: readonly string[];
  /** How many files the restore had to put back. */
  readonly total: number;
  /** Create the error. */
  constructor(reason: CtxkitError, rel: string, restored: readonly string[], total: number) {
    super(reason.exitCode, reason.text, { cause: reason });
    this.reason = reason;
    this.rel = rel;
    this.restored = [...restored];
    this.total = total;
  }
}

/**
 * The last net under the guard's commands: an OS error that reached the command line unnamed
 * (Deno's `… (os error N): <op> '<path>'`) becomes a {@linkcode FileSystemError} naming that
 * operation and path (exit 2), and a read refusal (a file that changed while it was read, one that
 * is not a regular file once open) one line naming its path, instead of an internal error; anything
 * else is returned as it is.
 */
export function osErrorAsFailure(e: unknown): unknown {
  if (e instanceof ReadRefusedError) return readRefused(e, "read", e.path);
  if (e instanceof CtxkitError || errorCode(e) === undefined || isPermissionError(e)) return e;
  if (isSandboxRefusal(e)) return e;
  const m = /\(os error \d+\): ([a-z_]+) '([^']*)'/.exec(e instanceof Error ? e.message : "");
  return m === null ? e : new FileSystemError(m[1], m[2], e);
}
