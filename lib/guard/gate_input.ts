/**
 * How the token gate reads its inputs (`references/context-guard.md#the-token-gate`): the snapshot
 * copy, the current file, verify-deleted's survivors and a ledger's survivors are all read whole,
 * within one size limit, as the file they were while they were read, and every failure is one line
 * naming the file (exit 2), never a silent "not there".
 *
 * @module
 */

import { ReadRefusedError, readRegular, refusalReason } from "../_fs/read.ts";
import { text } from "../text.ts";
import { asFileSystemError, PathRefusedError } from "./errors.ts";

/**
 * The largest file the token gate reads (both the snapshot copy and the current file): the gate
 * holds both versions and their decoded text in memory.
 */
export const GATE_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Read a file for the gate: whole, but only up to {@linkcode GATE_MAX_BYTES}, and only as the
 * file it was while it was read (its size and change times the same after the read). A refusal or
 * an OS error is a one-line failure naming `shown`: `too large for the token gate: …`,
 * `cannot read <shown>: changed while reading`, `… not a regular file`, `… <OS reason>`.
 */
export function readForGate(path: string, shown: string): Uint8Array {
  try {
    return readRegular(path, { maxBytes: GATE_MAX_BYTES, stable: true });
  } catch (e) {
    if (e instanceof ReadRefusedError) throw gateReadRefused(e, shown);
    throw asFileSystemError(e, "read", shown);
  }
}

/** The one-line failure of a refused gate read. */
function gateReadRefused(e: ReadRefusedError, shown: string): PathRefusedError {
  if (e.refusal === "too-large") return tooLargeForGate(shown, e.size ?? 0);
  const reason = e.refusal === "changed" || e.refusal === "modified"
    ? "replaced"
    : e.refusal === "symlink"
    ? "symlink"
    : "special-file";
  return new PathRefusedError(
    shown,
    reason,
    text`cannot read ${shown}: ${refusalReason(e.refusal)}`,
  );
}

/** `too large for the token gate: <shown> (<size> bytes; the limit is 67108864)`. */
export function tooLargeForGate(shown: string, size: number): PathRefusedError {
  return new PathRefusedError(
    shown,
    "too-large",
    text`too large for the token gate: ${shown} (${size} bytes; the limit is ${GATE_MAX_BYTES})`,
  );
}

/** Refuse, before anything is read whole, a file above {@linkcode GATE_MAX_BYTES}. */
export function refuseTooLarge(path: string, shown: string): void {
  let size: number;
  try {
    size = Deno.statSync(path).size;
  } catch {
    return; // not the gate's business: the read names it
  }
  if (size > GATE_MAX_BYTES) throw tooLargeForGate(shown, size);
}
