/**
 * `displaced/`: where a restore that overrides the ownership proof (a snapshot-trust run, or
 * `restore --force`) keeps the bytes it replaces (`references/context-guard.md#displaced`).
 *
 * Each command that displaces anything takes the next free numbered directory
 * `<run dir>/displaced/<n>/` (created exclusively, so two restores never share one) and copies each
 * file there at its root-relative path, `0600`, from one descriptor checked to be the very file
 * judged and hashed to the bytes judged. The copies are synced before any file is replaced.
 *
 * @module
 */

import { errorCode } from "../_fs/errors.ts";
import { ReadRefusedError } from "../_fs/read.ts";
import { createFileExclusive, fsyncDirectory } from "../_fs/write.ts";
import { dirname } from "../paths.ts";
import { text } from "../text.ts";
import { asFileSystemError, RestoreRefusedError } from "./errors.ts";
import {
  type CurrentFile,
  currentState,
  type JudgedRestore,
  recheckRestore,
  restoreFile,
} from "./ownership.ts";
import type { Reporter } from "./report.ts";
import type { ResolvedPath } from "./roots.ts";
import { makeRunDirs, snapshotCopyPath } from "./run_dir.ts";
import type { RestoreOverride } from "./trust.ts";

/** `<run dir>/displaced`: every displacement of the run lies below it. */
export function displacedRoot(runDir: string): string {
  return `${runDir}/displaced`;
}

/** The displaced copies one command makes in one run dir. */
export class Displacement {
  readonly #runDir: string;
  #dir: string | undefined;
  /** Every copy made, by rel. */
  readonly copies: Map<string, string> = new Map();
  /** The directories the copies were made in (to sync once per batch). */
  readonly dirs: Set<string> = new Set();

  readonly #syncNow: boolean;

  /**
   * A displacement into `runDir`; nothing is created until the first copy. With `syncNow` each
   * copy (and its directories) is synced as it is made; else the caller syncs {@linkcode copies}
   * and {@linkcode dirs} with its batch, before anything is replaced.
   */
  constructor(runDir: string, syncNow = false) {
    this.#runDir = runDir;
    this.#syncNow = syncNow;
  }

  /** `<run dir>/displaced/<n>`, the first `n` free, created on first use. */
  #numbered(): string {
    if (this.#dir !== undefined) return this.#dir;
    const root = displacedRoot(this.#runDir);
    try {
      makeRunDirs(root, this.#runDir);
    } catch (e) {
      throw asFileSystemError(e, "create directory", root);
    }
    for (let n = 1;; n++) {
      const dir = `${root}/${n}`;
      try {
        Deno.mkdirSync(dir, { mode: 0o700 });
      } catch (e) {
        if (errorCode(e) === "EEXIST") continue;
        throw asFileSystemError(e, "create directory", dir);
      }
      this.#dir = dir;
      this.dirs.add(root);
      this.dirs.add(dir);
      return dir;
    }
  }

  /**
   * Copy the file at `abs` — judged as `current`, a regular file — to `displaced/<n>/<rel>`
   * (not yet synced). A file that is no longer the one judged, or no longer holds the bytes judged,
   * is a {@linkcode RestoreRefusedError}: someone wrote it meanwhile, and it is theirs.
   */
  keep(rel: string, abs: string, current: CurrentFile): string {
    if (!("info" in current) || current.state === undefined) throw new RestoreRefusedError([rel]);
    const copy = `${this.#numbered()}/${rel}`;
    const dir = dirname(copy);
    try {
      if (!this.dirs.has(dir)) makeRunDirs(dir, this.#runDir);
      for (let d = dir; d.length > this.#runDir.length; d = dirname(d)) this.dirs.add(d);
      const written = createFileExclusive(
        copy,
        { copyFrom: abs, sameAs: current.info },
        0o600,
        true,
        this.#syncNow,
      );
      if (written.sha256 !== current.state) {
        Deno.removeSync(copy);
        throw new RestoreRefusedError([rel]);
      }
    } catch (e) {
      if (e instanceof ReadRefusedError) throw new RestoreRefusedError([rel]);
      throw asFileSystemError(e, "keep the current bytes of", abs);
    }
    this.copies.set(rel, copy);
    if (this.#syncNow) { for (const d of this.dirs) fsyncDirectory(d); }
    return copy;
  }

  /** Remove this command's numbered directory (nothing was replaced: nothing needs keeping). */
  discard(): void {
    if (this.#dir === undefined) return;
    try {
      Deno.removeSync(this.#dir, { recursive: true });
    } catch { /* left for the user to see; it only holds copies */ }
    this.#dir = undefined;
    this.copies.clear();
  }
}

/** Print `DISPLACED: <rel> -> <copy>` when `rel` was displaced. */
export function reportDisplaced(
  displacement: Displacement | undefined,
  rel: string,
  reporter: Reporter,
): void {
  const copy = displacement?.copies.get(rel);
  if (copy !== undefined) reporter.out(text`DISPLACED: ${rel} -> ${copy}`);
}

/**
 * Restore one file judged {@linkcode JudgedRestore.displace} (text-guard `verify`'s per-file
 * restore): keep its current bytes (synced), then replace it, judged again right before the
 * rename. False — nothing replaced, nothing kept — when the file changed meanwhile.
 */
export function restoreDisplacing(
  runDir: string,
  target: ResolvedPath,
  judged: JudgedRestore,
  override: RestoreOverride | undefined,
  reporter: Reporter,
): boolean {
  const { rel, abs } = target;
  const displacement = new Displacement(runDir, true);
  try {
    displacement.keep(rel, abs, judged.current);
    restoreFile(runDir, rel, abs, true, undefined, () => {
      const copyHash = currentState(snapshotCopyPath(runDir, rel));
      if (!recheckRestore(runDir, rel, abs, judged, copyHash, override).allowed) {
        throw new RestoreRefusedError([rel]);
      }
    });
  } catch (e) {
    displacement.discard();
    if (e instanceof RestoreRefusedError) return false;
    throw e;
  }
  reportDisplaced(displacement, rel, reporter);
  return true;
}
