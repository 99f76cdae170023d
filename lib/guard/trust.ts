/**
 * Snapshot-trust runs and forced restores (`references/context-guard.md#snapshot-trust`).
 *
 * The released context-slim and text-optimize skills (brewtools 6.1.x) never run `checkpoint`, so
 * no restore of theirs could prove the optimizer owns the bytes it is about to replace: the undo
 * was silently off. A run taken in **snapshot-trust** mode (the installer's wrappers for such
 * skills set {@linkcode TRUST_ENV}) records it in the run dir; recovering a file the run holds no
 * checkpoint for then restores the snapshot as the released scripts did — after keeping the
 * current bytes in `displaced/` (`displace.ts`), so unlike them nothing is lost. `--force` does the
 * same for named files of any run.
 *
 * @module
 */

import { ownPrivate } from "../_fs/owner.ts";
import { readRegular } from "../_fs/read.ts";
import { createFileExclusive } from "../_fs/write.ts";
import { UsageError } from "../errors.ts";
import { envValue } from "../paths.ts";
import { text } from "../text.ts";
import { asFileSystemError } from "./errors.ts";
import { runOwner } from "./run_owner.ts";

/** The environment variable that makes `snapshot` take a snapshot-trust run: `snapshot`. */
export const TRUST_ENV = "CTXKIT_GUARD_TRUST";

/** The only value of {@linkcode TRUST_ENV} (and of the marker file). */
export const SNAPSHOT_TRUST = "snapshot";

/** The marker of a snapshot-trust run: `<run dir>/trust`, holding `snapshot\n`. */
export function trustMarkerPath(runDir: string): string {
  return `${runDir}/trust`;
}

/**
 * The trust mode the environment asks new runs for: `true` for `CTXKIT_GUARD_TRUST=snapshot`,
 * `false` when unset or empty; any other value is a usage error (a typo must not silently take
 * runs whose undo is off).
 */
export function trustFromEnv(): boolean {
  const value = envValue(TRUST_ENV);
  if (value === undefined) return false;
  if (value === SNAPSHOT_TRUST) return true;
  throw new UsageError(text`invalid ${TRUST_ENV}: ${value} (want ${SNAPSHOT_TRUST}, or unset)`);
}

/** Record a new run dir as snapshot-trust: the marker, created exclusively, `0600`. */
export function writeTrustMarker(runDir: string): void {
  const path = trustMarkerPath(runDir);
  try {
    createFileExclusive(path, `${SNAPSHOT_TRUST}\n`, 0o600, true, false);
  } catch (e) {
    throw asFileSystemError(e, "write", path);
  }
}

/** True when `runDir` was taken in snapshot-trust mode (its marker is a regular file, no link). */
export function isTrustRun(runDir: string): boolean {
  const owner = runOwner();
  if (owner === undefined) return false;
  try {
    // Like every file read from a run, the invoking user's own or nothing
    // (references/context-guard.md#whose-runs-are-trusted).
    const bytes = readRegular(trustMarkerPath(runDir), {
      follow: false,
      maxBytes: 64,
      ownedBy: (info) => ownPrivate(info, owner),
    });
    return new TextDecoder().decode(bytes).replace(/\n+$/, "") === SNAPSHOT_TRUST;
  } catch {
    return false; // absent, a link, unreadable: not a trust run (the safe side)
  }
}

/**
 * What may replace a file whose current bytes are not provably the optimizer's:
 * - `trust`: a snapshot-trust run — allowed when the run holds no checkpoint for the file;
 * - `force`: `restore --force`, named files only — allowed whatever the records say.
 *
 * Either way the current bytes are kept in `displaced/` first; a link, a non-regular file or a file
 * that cannot be read is still refused (`references/context-guard.md#may-restore`).
 */
export type RestoreOverride = "trust" | "force";

/** The override a restore of `runDir` runs under: `force` when asked, `trust` for a trust run. */
export function restoreOverride(runDir: string, force = false): RestoreOverride | undefined {
  if (force) return "force";
  return isTrustRun(runDir) ? "trust" : undefined;
}
