/**
 * The flag's state transitions (`references/prose.md#transitions`): activation with precedence,
 * clearing, and the compare-first updates (`level`, `consume`, `block-end`, `session-end`), which
 * all go through {@linkcode update}, the one read-modify-write path. Every transition runs under
 * the flag's lock (`lock.ts`), so concurrent ones take turns instead of racing; readers never
 * wait for it.
 *
 * @module
 */

import { defaultConfig, loadConfig, parseDuration, type ProseConfig } from "./config.ts";
import {
  clearProseFlag,
  flagPath,
  type FlagRead,
  type IoFailure,
  type ProseOptions,
  readProseFlag,
  reasonMessage,
  safeStateDir,
  writeProseFlag,
} from "./flag.ts";
import { LockBusy, SESSION_END_LOCK_WAIT_MS, withFlagLock, withFlagLockAsync } from "./lock.ts";
import {
  MAX_AUTO_CLARITY_MS,
  MAX_AUTO_CLARITY_TURNS,
  MAX_TURNS,
  type ProseFlag,
  ProseFlagSchema,
  type ProseLevel,
  type ReasonCode,
  sourceRank,
  type ToggleRequest,
  type TtlUnit,
} from "./schema.ts";

/** What to activate (a toggle `on` without its action); unset fields default from the config. */
export type ActivateParams = Omit<Extract<ToggleRequest, { action: "on" }>, "action">;

/** Options of every transition: root, clock, and how long to wait for the flag's lock. */
export interface TransitionOptions extends ProseOptions {
  /**
   * Give up waiting for the flag's lock after this many ms (default `LOCK_WAIT_MS`, 5 s) with
   * `refused reason=busy`: `session-end` waits less, to end inside Claude Code's `SessionEnd`
   * budget (`references/prose.md#concurrency`).
   */
  lockWaitMs?: number;
}

/** Options of the transitions: root, clock, lock wait, and an already-loaded config. */
export interface OpOptions extends TransitionOptions {
  /** The config to use; default: {@linkcode loadConfig} (activation fails closed when invalid). */
  config?: ProseConfig;
}

/** The result words of the transitions (`references/prose.md#cli`). */
export type OpResultWord =
  | "activated"
  | "replaced"
  | "kept"
  | "refused"
  | "usage"
  | "cleared"
  | "already-inactive"
  | "changed"
  | "unchanged"
  | "conflict"
  | "decremented"
  | "expired-cleared"
  | "not-turn-scoped"
  | "inactive"
  | "synced";

/** Outcome of a transition. `ok: false` for `refused`, `conflict` and `usage`. */
export interface OpResult {
  /** False when nothing could be done (refused, conflict, bad parameters, invalid config). */
  ok: boolean;
  /** The result word printed as `result=`. */
  result: OpResultWord;
  /** A reason code (`existing-override`, `auto-clarity-disabled`, `config`, a flag reason…). */
  reason?: string;
  /** The field at fault, for `usage` and `config`. */
  field?: string;
  /** One sanitized line explaining a failure. */
  message?: string;
  /** A warning to print (e.g. an invalid flag was replaced). */
  warning?: string;
  /** Responses left after `consume` (`decremented`, `cleared`). */
  remaining?: number;
}

/** The planned flag, a usage error (field + message), or an auto-clarity refusal. */
export type ActivationPlan =
  | { kind: "flag"; flag: ProseFlag }
  | { kind: "usage"; field: string; message: string }
  | { kind: "refused"; reason: "auto-clarity-disabled" };

function usage(field: string, message: string): ActivationPlan {
  return { kind: "usage", field, message };
}

/**
 * Build the flag an activation writes (pure): defaults from `config`, the TTL rules and the
 * auto-clarity limits (`references/prose.md#activation`). Bad parameters are a `usage` plan, never
 * a throw.
 */
export function planActivation(
  params: ActivateParams,
  config: ProseConfig,
  now: number,
): ActivationPlan {
  const source = params.source ?? "manual";
  let forMs: number | null = null;
  if (params.for !== undefined) {
    forMs = parseDuration(params.for);
    if (forMs === null) return usage("for", "must be a duration like 90s, 15m, 12h or 7d (1s-30d)");
  }
  let flag: ProseFlag;
  if (source === "auto-clarity") {
    const auto = config.autoClarity;
    if (!auto.enabled) return { kind: "refused", reason: "auto-clarity-disabled" };
    if (params.ttl !== undefined && params.ttl.unit !== "turn") {
      return usage("ttl.unit", "auto-clarity activations are turn-scoped");
    }
    const value = params.ttl?.value ?? auto.turns;
    if (!Number.isInteger(value) || value < 1 || value > MAX_AUTO_CLARITY_TURNS) {
      return usage("ttl.value", "auto-clarity covers 1 to 10 responses");
    }
    const cap = forMs ?? parseDuration(auto.for) ?? MAX_AUTO_CLARITY_MS;
    if (cap > MAX_AUTO_CLARITY_MS) return usage("for", "auto-clarity caps are at most 1h");
    flag = {
      level: params.level ?? auto.level,
      ttl: { unit: "turn", value },
      expiresAt: now + cap,
      activatedAt: now,
      source,
    };
  } else {
    const unit = params.ttl?.unit ?? config.ttl;
    let value = 0;
    if (unit === "turn") {
      value = params.ttl?.value ?? config.turns;
      if (!Number.isInteger(value) || value < 1 || value > MAX_TURNS) {
        return usage("ttl.value", "turns must be 1 to 1000");
      }
    } else if (params.ttl?.value !== undefined && params.ttl.value !== 0) {
      return usage("ttl.value", `${unit} takes no count`);
    }
    if (unit === "explicit" && forMs !== null) {
      return usage("for", "explicit never expires; drop --for");
    }
    let expiresAt: number | null = forMs === null ? null : now + forMs;
    if (unit === "session" && forMs === null && config.sessionCap !== null) {
      expiresAt = now + (parseDuration(config.sessionCap) ?? 0);
    }
    flag = {
      level: params.level ?? config.level,
      ttl: { unit, value },
      expiresAt,
      activatedAt: now,
      source,
    };
  }
  if (!Number.isInteger(now) || now < 1) throw new TypeError("now must be a positive integer");
  const checked = ProseFlagSchema.safeParse(flag);
  if (!checked.success) return usage("(flag)", "the activation does not form a valid flag");
  return { kind: "flag", flag: checked.data };
}

function refused(reason: string, message?: string): OpResult {
  return message === undefined
    ? { ok: false, result: "refused", reason }
    : { ok: false, result: "refused", reason, message };
}

/**
 * Run a transition under the flag's lock when `D` exists and is safe (otherwise there is nothing
 * to race on, and the transition reports the path itself); a lock held for the whole wait is
 * `refused reason=busy`.
 */
function locked(opts: TransitionOptions, transition: () => OpResult): OpResult {
  const dir = safeStateDir(opts);
  if (dir === null) return transition();
  const r = withFlagLock(dir, transition, { waitMs: opts.lockWaitMs });
  return r instanceof LockBusy ? busy(r) : r;
}

/** `refused reason=busy` for a lock held for the whole wait, naming its holder when known. */
function busy(r: LockBusy): OpResult {
  const holder = r.pid === null ? "" : ` (held by pid ${r.pid})`;
  return refused("busy", reasonMessage("busy", r.path) + holder);
}

function failed(r: IoFailure): OpResult {
  return r.reason === "conflict"
    ? { ok: false, result: "conflict", reason: "conflict", message: r.message }
    : refused(r.reason, r.message);
}

/**
 * Activate the override (`on`). A lower-precedence source leaves an active flag in place (`kept`);
 * an invalid or tampered flag on a safe path is replaced with a warning; an unsafe path is refused.
 * Without `opts.config`, an invalid config fails closed (`result: "refused", reason: "config"`).
 */
export function activate(params: ActivateParams, opts: OpOptions = {}): OpResult {
  let config = opts.config;
  if (config === undefined) {
    const loaded = loadConfig(opts);
    if (!loaded.ok) {
      return {
        ok: false,
        result: "refused",
        reason: "config",
        field: loaded.field,
        message: loaded.message,
      };
    }
    config = loaded.config;
  }
  const now = opts.now ?? Date.now();
  const plan = planActivation(params, config, now);
  if (plan.kind === "usage") {
    return {
      ok: false,
      result: "usage",
      reason: "usage",
      field: plan.field,
      message: plan.message,
    };
  }
  if (plan.kind === "refused") return refused(plan.reason);
  return locked(opts, () => replaceFlag(plan.flag, { ...opts, now }));
}

/** Write an activation's flag unless a higher-precedence one is active (under the lock). */
function replaceFlag(flag: ProseFlag, opts: ProseOptions & { now: number }): OpResult {
  const read = readProseFlag(opts);
  if (read.state === "active" && read.flag !== null) {
    if (sourceRank(flag.source) < sourceRank(read.flag.source)) {
      return { ok: true, result: "kept", reason: "existing-override" };
    }
  }
  const written = writeProseFlag(flag, opts);
  if (!written.ok) return failed(written);
  if (read.state === "active") return { ok: true, result: "replaced" };
  if (read.state === "invalid" || read.state === "unsafe") {
    return {
      ok: true,
      result: "replaced",
      warning: `replaced ${read.state} flag (reason=${read.reason})`,
    };
  }
  return { ok: true, result: "activated" };
}

/**
 * Clear the flag (`off`): an active, expired, invalid or tampered flag is removed (blind); an unsafe
 * path is refused.
 */
export function deactivate(opts: TransitionOptions = {}): OpResult {
  return locked(opts, () => {
    const read = readProseFlag(opts);
    if (read.state === "absent") return { ok: true, result: "already-inactive" };
    const cleared = clearProseFlag(opts);
    if (!cleared.ok) return failed(cleared);
    return { ok: true, result: cleared.cleared ? "cleared" : "already-inactive" };
  });
}

/**
 * What a compare-first update does to the flag it read: keep it, clear it, write a new one, or
 * hand over to another operation (`then`, run only under the lock). Deciding has no side effects,
 * so a decision can be taken on a read without the lock and dropped.
 */
type Change =
  | (
    & { result: OpResultWord; remaining?: number }
    & ({ apply: "keep" } | { apply: "clear" } | { apply: "write"; flag: ProseFlag })
  )
  | { apply: "then"; then: () => OpResult };

/**
 * The one read-modify-write path. First one read without the lock: when `decide` keeps the flag
 * as it is, that is the answer, as it is for any reader (a flag is only ever replaced whole by a
 * rename, so one read sees one version), and nothing waits for or writes a lock — the `Stop` hook's
 * `consume` and most `block-end`s. Any change runs under the flag's lock: read again, refuse an
 * invalid or unsafe flag, decide again and apply the change compare-first, so a change by a writer
 * that does not take the lock still ends in `conflict`, never in a lost update.
 */
function update(opts: TransitionOptions, decide: (read: FlagRead) => Change): OpResult {
  const first = readProseFlag(opts);
  if (first.state !== "invalid" && first.state !== "unsafe") {
    const change = decide(first);
    if (change.apply === "keep") return outcome(change);
  }
  return locked(opts, () => readModifyWrite(opts, decide));
}

/** The result of a change that was applied (or needed nothing). */
function outcome(change: { result: OpResultWord; remaining?: number }): OpResult {
  const done: OpResult = { ok: true, result: change.result };
  if (change.remaining !== undefined) done.remaining = change.remaining;
  return done;
}

function readModifyWrite(opts: ProseOptions, decide: (read: FlagRead) => Change): OpResult {
  const read = readProseFlag(opts);
  if (read.state === "invalid" || read.state === "unsafe") {
    return refused(read.reason ?? "io-error");
  }
  const change = decide(read);
  if (change.apply === "then") return change.then();
  if (change.apply === "keep") return outcome(change);
  const written = change.apply === "clear"
    ? clearProseFlag({ ...opts, expect: read.raw })
    : writeProseFlag(change.flag, { ...opts, expect: read.raw });
  return written.ok ? outcome(change) : failed(written);
}

/**
 * Change only the level of an active flag (compare-first). With no active flag, `minimal`/`full`
 * activates like `on --level X` (built-in defaults when the config is invalid) and `off` is
 * `unchanged` without writing.
 */
export function setLevel(level: ProseLevel, opts: OpOptions = {}): OpResult {
  if (!["off", "minimal", "full"].includes(level)) {
    throw new TypeError("level must be off|minimal|full");
  }
  const now = opts.now ?? Date.now();
  return update({ ...opts, now }, (read) => {
    if (read.state !== "active" || read.flag === null) {
      if (level === "off") return { result: "unchanged", apply: "keep" };
      return {
        apply: "then",
        then: () => {
          let config = opts.config;
          if (config === undefined) {
            const loaded = loadConfig(opts);
            config = loaded.ok ? loaded.config : defaultConfig();
          }
          return activate({ level, source: "manual" }, { ...opts, now, config });
        },
      };
    }
    if (read.flag.level === level) return { result: "unchanged", apply: "keep" };
    return { result: "changed", apply: "write", flag: { ...read.flag, level } };
  });
}

/**
 * `consume`: count one response against a `turn` flag; clear it when it reaches 0 or has expired.
 */
export function consume(opts: TransitionOptions = {}): OpResult {
  return update(opts, (read) => {
    if (read.state === "absent" || read.flag === null) return { result: "inactive", apply: "keep" };
    if (read.state === "expired") return { result: "expired-cleared", apply: "clear" };
    if (read.flag.ttl.unit !== "turn") return { result: "not-turn-scoped", apply: "keep" };
    const remaining = read.flag.ttl.value - 1;
    if (remaining <= 0) return { result: "cleared", remaining: 0, apply: "clear" };
    const flag: ProseFlag = { ...read.flag, ttl: { unit: "turn", value: remaining } };
    return { result: "decremented", remaining, apply: "write", flag };
  });
}

/** Outcome of {@linkcode consumeTurn}. */
export type ConsumeResult =
  | {
    ok: true;
    outcome: "decremented" | "cleared" | "expired-cleared" | "not-turn-scoped" | "inactive";
    remaining: number | null;
  }
  | { ok: false; reason: string; message: string };

/**
 * Count one response against a `turn` flag (call after emitting a response): decrement it, or clear
 * it when it reaches 0. An expired flag is cleared. Compare-first: `conflict` when it changed.
 *
 * @example
 * ```ts ignore
 * import { consumeTurn } from "./mod.ts";
 * const r = consumeTurn();
 * if (r.ok && r.outcome === "decremented") console.log(`${r.remaining} left`);
 * ```
 */
export function consumeTurn(opts: ProseOptions = {}): ConsumeResult {
  const r = consume(opts);
  if (r.ok) {
    const outcome = r.result as Extract<ConsumeResult, { ok: true }>["outcome"];
    return { ok: true, outcome, remaining: r.remaining ?? null };
  }
  // A refused flag carries no message of its own: name the flag and what to check.
  const reason = (r.reason ?? "io-error") as ReasonCode;
  return { ok: false, reason, message: r.message ?? reasonMessage(reason, flagPath(opts)) };
}

function endWhen(units: readonly TtlUnit[], opts: TransitionOptions): OpResult {
  return update(opts, (read) => {
    if (read.state === "absent" || read.flag === null) return { result: "inactive", apply: "keep" };
    if (read.state === "expired") return { result: "expired-cleared", apply: "clear" };
    if (!units.includes(read.flag.ttl.unit)) return { result: "kept", apply: "keep" };
    return { result: "cleared", apply: "clear" };
  });
}

/** The work block closed (git post-commit / pre-push): clear a `block` flag, keep the others. */
export function endBlock(opts: TransitionOptions = {}): OpResult {
  return endWhen(["block"], opts);
}

/**
 * The session ended: clear `session` and `turn` flags, keep `block` and `explicit`. It waits for
 * the lock at most `SESSION_END_LOCK_WAIT_MS` unless told otherwise: it runs as Claude Code's
 * `SessionEnd` hook, which is cancelled after 1.5 s when it names no timeout.
 */
export function endSession(opts: TransitionOptions = {}): OpResult {
  return endWhen(["session", "turn"], {
    ...opts,
    lockWaitMs: opts.lockWaitMs ?? SESSION_END_LOCK_WAIT_MS,
  });
}

/**
 * Apply a toggle request, the shape the CLI's `on`, `off` and `level` and the backend's
 * `POST /api/prose/toggle` share: one set of transitions behind both front ends. `sync` changes
 * no flag (`synced`): mirroring is the backend's part.
 */
export function applyToggle(request: ToggleRequest, opts: OpOptions = {}): OpResult {
  switch (request.action) {
    case "on": {
      const { action: _action, ...params } = request;
      return activate(params, opts);
    }
    case "off":
      return deactivate(opts);
    case "level":
      return setLevel(request.level, opts);
    case "sync":
      return { ok: true, result: "synced" };
  }
}

/**
 * {@linkcode applyToggle} for the server: the flag's lock is waited for on timers
 * (`withFlagLockAsync`), so the event loop answers other requests meanwhile; once it is taken the
 * toggle runs synchronously inside it (its transitions re-enter the lock). `sync` and a toggle
 * with no safe `D` need no lock (`references/prose.md#concurrency`).
 */
export async function applyToggleAsync(
  request: ToggleRequest,
  opts: OpOptions = {},
): Promise<OpResult> {
  const dir = request.action === "sync" ? null : safeStateDir(opts);
  if (dir === null) return applyToggle(request, opts);
  const r = await withFlagLockAsync(dir, () => applyToggle(request, opts));
  return r instanceof LockBusy ? busy(r) : r;
}
