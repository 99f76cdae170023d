/**
 * The flag's state transitions (spec §5, §6): activation with precedence, level change, and the
 * three enders (`consume`, `block-end`, `session-end`). Compare-first transitions pass the bytes
 * they read as `expect`, so a concurrent change ends in `conflict` instead of a lost update.
 *
 * @module
 */

import { defaultConfig, loadConfig, parseDuration, type ProseConfig } from "./config.ts";
import { clearProseFlag, type FlagRead, readProseFlag, writeProseFlag } from "./flag_io.ts";
import type { ProseOptions } from "./paths.ts";
import {
  MAX_AUTO_CLARITY_MS,
  MAX_AUTO_CLARITY_TURNS,
  MAX_TURNS,
  type ProseFlag,
  ProseFlagZod,
  type ProseLevel,
  type ProseSource,
  sourceRank,
  type TtlUnit,
} from "./schema.ts";

/** What to activate; every field defaults from the config (auto-clarity from `autoClarity`). */
export interface ActivateParams {
  /** `minimal` or `full`. */
  level?: "minimal" | "full";
  /** The TTL; `value` is the number of responses for `turn` (0 or absent otherwise). */
  ttl?: { unit: TtlUnit; value?: number };
  /** A duration cap (`90s`, `15m`, `12h`, `7d`); not allowed for `explicit`. */
  for?: string;
  /** Who activates: `manual` (default), `config` or `auto-clarity`. */
  source?: ProseSource;
}

/** Options of the transitions: root, clock, and an already-loaded config. */
export interface OpOptions extends ProseOptions {
  /** The config to use; default: {@linkcode loadConfig} (activation fails closed when invalid). */
  config?: ProseConfig;
}

/** The result words of the transitions (spec §6). */
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
  | "inactive";

/** Outcome of a transition. `ok: false` for `refused`, `conflict` and `usage`. */
export interface OpResult {
  /** False when nothing could be done (refused, conflict, bad parameters, invalid config). */
  ok: boolean;
  /** The result word printed as `result=`. */
  result: OpResultWord;
  /** A reason code (`existing-override`, `auto-clarity-disabled`, `config`, a §7 code…). */
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
 * Build the flag an activation writes (pure): defaults from `config`, §5 TTL rules, auto-clarity
 * limits. Bad parameters are a `usage` plan, never a throw.
 *
 * @example
 * ```ts
 * import { defaultConfig, planActivation } from "./mod.ts";
 * const plan = planActivation({ ttl: { unit: "session" } }, defaultConfig(), 1000);
 * plan.kind === "flag" && plan.flag.expiresAt; // 43201000 (12h sessionCap)
 * ```
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
  const checked = ProseFlagZod.safeParse(flag);
  if (!checked.success) return usage("(flag)", "the activation does not form a valid flag");
  return { kind: "flag", flag: checked.data };
}

function nowOf(opts: ProseOptions): number {
  return opts.now ?? Date.now();
}

function refused(reason: string, message?: string): OpResult {
  return message === undefined
    ? { ok: false, result: "refused", reason }
    : { ok: false, result: "refused", reason, message };
}

function failed(r: { reason: string; message: string }): OpResult {
  return r.reason === "conflict"
    ? { ok: false, result: "conflict", reason: "conflict", message: r.message }
    : refused(r.reason, r.message);
}

/**
 * Activate the override (`on`). A lower-precedence source leaves an active flag in place (`kept`);
 * an invalid or tampered flag on a safe path is replaced with a warning; an unsafe path is refused.
 * Without `opts.config`, an invalid config fails closed (`result: "refused", reason: "config"`).
 *
 * @example
 * ```ts ignore
 * import { activate } from "./mod.ts";
 * activate({ ttl: { unit: "turn", value: 3 }, level: "minimal" }); // { ok: true, result: "activated" }
 * ```
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
  const now = nowOf(opts);
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
  const read = readProseFlag({ ...opts, now });
  if (read.state === "active" && read.flag !== null) {
    if (sourceRank(plan.flag.source) < sourceRank(read.flag.source)) {
      return { ok: true, result: "kept", reason: "existing-override" };
    }
  }
  const written = writeProseFlag(plan.flag, opts);
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
export function deactivate(opts: ProseOptions = {}): OpResult {
  const read = readProseFlag(opts);
  if (read.state === "absent") return { ok: true, result: "already-inactive" };
  const cleared = clearProseFlag(opts);
  if (!cleared.ok) return failed(cleared);
  return { ok: true, result: cleared.cleared ? "cleared" : "already-inactive" };
}

/** Refusal of a compare-first command on an invalid or unsafe flag. */
function blocking(read: FlagRead): OpResult | null {
  if (read.state !== "invalid" && read.state !== "unsafe") return null;
  return refused(read.reason ?? "io-error");
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
  const now = nowOf(opts);
  const read = readProseFlag({ ...opts, now });
  const block = blocking(read);
  if (block !== null) return block;
  if (read.state !== "active" || read.flag === null) {
    if (level === "off") return { ok: true, result: "unchanged" };
    let config = opts.config;
    if (config === undefined) {
      const loaded = loadConfig(opts);
      config = loaded.ok ? loaded.config : defaultConfig();
    }
    return activate({ level, source: "manual" }, { ...opts, now, config });
  }
  if (read.flag.level === level) return { ok: true, result: "unchanged" };
  const written = writeProseFlag({ ...read.flag, level }, { ...opts, expect: read.raw });
  return written.ok ? { ok: true, result: "changed" } : failed(written);
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
  const now = nowOf(opts);
  const read = readProseFlag({ ...opts, now });
  if (read.state === "invalid" || read.state === "unsafe") {
    const reason = read.reason ?? "io-error";
    return { ok: false, reason, message: `${read.path}: flag is ${read.state} (${reason})` };
  }
  if (read.state === "absent" || read.flag === null) {
    return { ok: true, outcome: "inactive", remaining: null };
  }
  if (read.state === "expired") {
    const cleared = clearProseFlag({ ...opts, expect: read.raw });
    return cleared.ok ? { ok: true, outcome: "expired-cleared", remaining: null } : cleared;
  }
  if (read.flag.ttl.unit !== "turn") {
    return { ok: true, outcome: "not-turn-scoped", remaining: null };
  }
  const remaining = read.flag.ttl.value - 1;
  if (remaining <= 0) {
    const cleared = clearProseFlag({ ...opts, expect: read.raw });
    return cleared.ok ? { ok: true, outcome: "cleared", remaining: 0 } : cleared;
  }
  const written = writeProseFlag(
    { ...read.flag, ttl: { unit: "turn", value: remaining } },
    { ...opts, expect: read.raw },
  );
  return written.ok ? { ok: true, outcome: "decremented", remaining } : written;
}

function endWhen(units: readonly TtlUnit[], opts: ProseOptions): OpResult {
  const now = nowOf(opts);
  const read = readProseFlag({ ...opts, now });
  const block = blocking(read);
  if (block !== null) return block;
  if (read.state === "absent" || read.flag === null) return { ok: true, result: "inactive" };
  const expired = read.state === "expired";
  if (!expired && !units.includes(read.flag.ttl.unit)) return { ok: true, result: "kept" };
  const cleared = clearProseFlag({ ...opts, expect: read.raw });
  if (!cleared.ok) return failed(cleared);
  return { ok: true, result: expired ? "expired-cleared" : "cleared" };
}

/** The work block closed (git post-commit / pre-push): clear a `block` flag, keep the others. */
export function endBlock(opts: ProseOptions = {}): OpResult {
  return endWhen(["block"], opts);
}

/** The session ended: clear `session` and `turn` flags, keep `block` and `explicit`. */
export function endSession(opts: ProseOptions = {}): OpResult {
  return endWhen(["session", "turn"], opts);
}

/**
 * The level skills should render at: the flag's level when it is `active`, otherwise `off`
 * (default quantization).
 *
 * @example
 * ```ts ignore
 * import { readProseFlag, resolveLevel } from "./mod.ts";
 * const level = resolveLevel(readProseFlag()); // "off" | "minimal" | "full"
 * ```
 */
export function resolveLevel(read: Pick<FlagRead, "state" | "flag">): ProseLevel {
  return read.state === "active" && read.flag !== null ? read.flag.level : "off";
}
