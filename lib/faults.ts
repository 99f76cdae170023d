/**
 * Fault injection for the reliability suite: named checkpoints on the write paths where a test can
 * make the process die with SIGKILL, as a crash or an impatient user would — or stop there with
 * SIGSTOP, as a process stalled by swap, a slow NFS server or a debugger would.
 *
 * A test sets `CTXKIT_FAULT_POINT=<name>` (die at the first hit) or `<name>:<N>` (die at the N-th
 * hit, 1-based) in the child's environment, and `CTXKIT_FAULT_SIGNAL=SIGSTOP` to stop there
 * instead (the test resumes it with SIGCONT). Without it every {@linkcode faultPoint} is a cheap
 * no-op: the variables are read once per process, and a missing env permission means "no faults".
 *
 * @module
 */

/** A parsed `CTXKIT_FAULT_POINT` value: which point, and at which hit the process dies. */
export interface FaultSpec {
  /** The checkpoint name. */
  name: string;
  /** The 1-based hit that kills. */
  hit: number;
}

/** Parse a `CTXKIT_FAULT_POINT` value; `undefined` when empty or malformed (faults stay off). */
export function parseFaultSpec(value: string | undefined): FaultSpec | undefined {
  if (value === undefined || value === "") return undefined;
  const m = /^([A-Za-z0-9_.-]+)(?::([1-9][0-9]{0,8}))?$/.exec(value);
  if (m === null) return undefined;
  return { name: m[1], hit: m[2] === undefined ? 1 : Number(m[2]) };
}

function readSpec(): FaultSpec | undefined {
  try {
    return parseFaultSpec(Deno.env.get("CTXKIT_FAULT_POINT"));
  } catch {
    return undefined; // no env permission: faults are off
  }
}

/** The signal a fault point sends: `SIGSTOP` when `CTXKIT_FAULT_SIGNAL` says so, else `SIGKILL`. */
export function parseFaultSignal(value: string | undefined): "SIGKILL" | "SIGSTOP" {
  return value === "SIGSTOP" ? "SIGSTOP" : "SIGKILL";
}

let spec: FaultSpec | undefined | null = null;
let hits = 0;

/**
 * A named checkpoint on a write path. When `CTXKIT_FAULT_POINT` selects this name (and hit count),
 * the process is killed on the spot with SIGKILL: no `finally`, no cleanup, no exit line (or, with
 * `CTXKIT_FAULT_SIGNAL=SIGSTOP`, stopped there until a SIGCONT).
 *
 * @example
 * ```ts ignore
 * import { faultPoint } from "./faults.ts";
 * faultPoint("atomic.before-rename");
 * ```
 */
export function faultPoint(name: string): void {
  if (spec === null) spec = readSpec();
  if (spec === undefined || spec.name !== name) return;
  if (++hits !== spec.hit) return; // SIGSTOP resumes: only the selected hit stops
  Deno.kill(Deno.pid, parseFaultSignal(Deno.env.get("CTXKIT_FAULT_SIGNAL")));
}

/** The names of every checkpoint placed in the sources (documentation and tests iterate these). */
export const FAULT_POINTS = [
  "atomic.before-rename",
  "atomic.after-rename",
  "stage.snapshot.between-copies",
  "snapshot.before-manifest",
  "stage.restore.between-files",
  "prose.flag.before-rename",
] as const;
