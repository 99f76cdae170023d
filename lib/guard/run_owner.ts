/**
 * Whose runs are trusted (`references/context-guard.md#whose-runs-are-trusted`): a run dir, and
 * every file the guard reads from it, must be the invoking user's own, never reachable through a
 * folder another user can write. A run another user planted in a shared backup root is never
 * selected, restored, trusted or counted for retention; each is named in one line.
 *
 * @module
 */

import { ancestryProblem, type Invoker, invokingUser, ownPrivate } from "../_fs/owner.ts";
import type { OwnershipProblem } from "../_fs/owner.ts";
import { dirname, processCwd } from "../paths.ts";
import { type Text, text } from "../text.ts";
import { PathRefusedError } from "./errors.ts";

/** Why nothing can be trusted: the user this process runs as cannot be told. */
const UNKNOWN_USER = "cannot tell which user runs this (grant --allow-sys=uid)";

/** The user whose runs are trusted, or `undefined` when it cannot be told. */
export function runOwner(): Invoker | undefined {
  return invokingUser();
}

/** `<at> is not yours (owner uid N)` or `<at> is writable by others`. */
function problemText(p: OwnershipProblem): Text {
  return p.why === "not-owned"
    ? text`${p.at} is not yours (owner uid ${p.uid ?? "?"})`
    : text`${p.at} is writable by others`;
}

/** Why a run dir's own entry (its `lstat`) is not `who`'s: `not yours (owner uid N)`, or `writable by others`. */
export function runEntryProblem(info: Deno.FileInfo, who: Invoker): Text | undefined {
  if (ownPrivate(info, who)) return undefined;
  return info.uid !== who.uid
    ? text`not yours (owner uid ${info.uid ?? "?"})`
    : text`writable by others`;
}

/**
 * Why the backup root `B` (absolute) cannot be trusted — reachable through a folder another user
 * owns or can write ({@linkcode ancestryProblem}), or owned by another user itself — or
 * `undefined`. Every run in such a root is ignored, and no snapshot is written there.
 */
export function backupRootProblem(backups: string): Text | undefined {
  const who = runOwner();
  if (who === undefined) return text`${UNKNOWN_USER}`;
  const p = ancestryProblem(backups, who);
  return p === undefined ? undefined : problemText(p);
}

/**
 * Why the run dir `runDir` cannot be trusted — not the invoking user's own, writable by others,
 * reached through a folder another user owns or can write, or its manifest another user's — or
 * `undefined`. A missing run dir is not judged here (its commands say what it lacks).
 */
export function runDirProblem(runDir: string): Text | undefined {
  const who = runOwner();
  if (who === undefined) return text`${UNKNOWN_USER}`;
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(runDir);
  } catch {
    return undefined;
  }
  if (!info.isDirectory) return undefined;
  const own = runEntryProblem(info, who);
  if (own !== undefined) return own;
  const abs = runDir.startsWith("/") ? runDir : `${processCwd()}/${runDir}`;
  const above = ancestryProblem(dirname(abs.replace(/\/+$/, "") || "/"), who);
  if (above !== undefined) return problemText(above);
  return manifestProblem(runDir, who);
}

/**
 * Why the run dir's manifest (a regular file; a link or anything else counts as no manifest) is
 * not `who`'s own: `its manifest is not yours (owner uid N)` or `… writable by others`.
 */
export function manifestProblem(runDir: string, who: Invoker): Text | undefined {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(`${runDir}/manifest.json`);
  } catch {
    return undefined; // no manifest: its commands say so
  }
  if (!info.isFile) return undefined;
  const bad = runEntryProblem(info, who);
  return bad === undefined ? undefined : text`its manifest is ${bad}`;
}

/**
 * Refuse, before a snapshot makes its run dir, a place its runs could not be trusted in: a run dir
 * in the backup root `B` (`base`) when `B` is not trusted
 * (`❌ unsafe backup root <B>: <reason> - keep backups where only you can write`), any other one
 * whose parent is reached through a folder another user owns or can write
 * (`❌ untrusted run dir <D>: <reason>`). Exit 2, nothing written.
 */
export function requireTrustedRunPlace(runDir: string, base: string | undefined): void {
  const inBase = base !== undefined && (runDir === base || runDir.startsWith(`${base}/`));
  if (inBase) {
    const problem = backupRootProblem(base);
    if (problem === undefined) return;
    throw new PathRefusedError(
      base,
      "untrusted",
      text`unsafe backup root ${base}: ${problem} - keep backups where only you can write`,
    );
  }
  const who = runOwner();
  const abs = runDir.startsWith("/") ? runDir : `${processCwd()}/${runDir}`;
  const problem = who === undefined
    ? text`${UNKNOWN_USER}`
    : mapProblem(ancestryProblem(dirname(abs.replace(/\/+$/, "") || "/"), who));
  if (problem !== undefined) {
    throw new PathRefusedError(runDir, "untrusted", text`untrusted run dir ${runDir}: ${problem}`);
  }
}

function mapProblem(p: OwnershipProblem | undefined): Text | undefined {
  return p === undefined ? undefined : problemText(p);
}

/**
 * Refuse a run dir named on the command line that is not the invoking user's own
 * (`❌ untrusted run dir <D>: <reason>`, exit 2), before anything is read from it or written.
 */
export function requireTrustedRunDir(runDir: string): void {
  const problem = runDirProblem(runDir);
  if (problem !== undefined) {
    throw new PathRefusedError(
      runDir,
      "untrusted",
      text`untrusted run dir ${runDir}: ${problem}`,
    );
  }
}
