/**
 * The prose flag document (spec §3) and its constants, defined once.
 *
 * Every field is an enum or a number, so text injected into the flag file can only make it invalid;
 * it can never reach a prompt.
 *
 * @module
 */

import { z } from "zod";

/** Largest flag file in bytes: a guard against prompt injection through the flag surface. */
export const MAX_FLAG_BYTES = 1024;

/** The level whitelist. Widening it needs an ADR amendment. */
export const LEVELS = ["off", "minimal", "full"] as const;
/** How a flag ends. */
export const TTL_UNITS = ["turn", "block", "session", "explicit"] as const;
/** Who activated the flag: a closed enum, never free text (no credential can leak through it). */
export const SOURCES = ["manual", "auto-clarity", "config"] as const;
/** The five states a flag read resolves to. */
export const FLAG_STATES = ["absent", "active", "expired", "invalid", "unsafe"] as const;

/** A prose level; `off` means default quantization. */
export type ProseLevel = typeof LEVELS[number];
/** A TTL unit. */
export type TtlUnit = typeof TTL_UNITS[number];
/** A flag source. */
export type ProseSource = typeof SOURCES[number];
/** The state of a flag read. */
export type FlagState = typeof FLAG_STATES[number];

/** Why a flag is invalid or unsafe, or why a write was refused. */
export type ReasonCode =
  | "symlink-dir"
  | "not-directory"
  | "insecure-dir"
  | "foreign-owner"
  | "symlink-file"
  | "not-regular-file"
  | "insecure-mode"
  | "too-large"
  | "bad-utf8"
  | "bad-json"
  | "schema"
  | "io-error"
  | "no-root";

/** Largest epoch-ms a flag may carry (the end of the ECMAScript date range). */
export const MAX_EPOCH_MS = 8.64e15;
/** Most responses a `turn` flag may cover. */
export const MAX_TURNS = 1000;
/** Most responses an auto-clarity activation may cover. */
export const MAX_AUTO_CLARITY_TURNS = 10;
/** Longest auto-clarity cap in milliseconds (1 h). */
export const MAX_AUTO_CLARITY_MS = 3_600_000;

const epochMs = z.int().min(1).max(MAX_EPOCH_MS);

/** The flag's TTL: the unit and, for `turn`, the responses left (0 for other units). */
export interface ProseTtl {
  /** How the flag ends. */
  unit: TtlUnit;
  /** Responses left for `turn` (1–1000); 0 otherwise. */
  value: number;
}

/** A valid prose flag (keys in file order). */
export interface ProseFlag {
  /** The override level; `off` pauses the override but keeps its TTL. */
  level: ProseLevel;
  /** How the flag ends. */
  ttl: ProseTtl;
  /** Epoch-ms cap, or `null` for no time limit. */
  expiresAt: number | null;
  /** Epoch-ms of activation. */
  activatedAt: number;
  /** Who activated it. */
  source: ProseSource;
}

/** The flag's strict `{unit, value}`. */
export const TtlSchema = z.strictObject({
  unit: z.enum(TTL_UNITS),
  value: z.int().min(0).max(MAX_TURNS),
});

/**
 * The strict flag document. Cross-field rules: `value` is 1–1000 for `turn` and 0 otherwise;
 * `expiresAt` is null or later than `activatedAt` and null for `explicit`; an auto-clarity flag is
 * a `turn` flag of at most 10 responses capped at most 1 h after activation.
 *
 * @example
 * ```ts
 * import { ProseFlagSchema } from "./schema.ts";
 * ProseFlagSchema.safeParse({
 *   level: "full",
 *   ttl: { unit: "block", value: 0 },
 *   expiresAt: null,
 *   activatedAt: 1_700_000_000_000,
 *   source: "manual",
 * }).success; // true
 * ```
 */
export const ProseFlagZod = z.strictObject({
  level: z.enum(LEVELS),
  ttl: TtlSchema,
  expiresAt: epochMs.nullable(),
  activatedAt: epochMs,
  source: z.enum(SOURCES),
}).superRefine((flag, ctx) => {
  const { unit, value } = flag.ttl;
  if (unit === "turn" ? value < 1 : value !== 0) {
    ctx.addIssue({
      code: "custom",
      path: ["ttl", "value"],
      message: unit === "turn" ? "turn value must be 1-1000" : `${unit} value must be 0`,
    });
  }
  if (flag.expiresAt !== null && flag.expiresAt <= flag.activatedAt) {
    ctx.addIssue({ code: "custom", path: ["expiresAt"], message: "must be after activatedAt" });
  }
  if (unit === "explicit" && flag.expiresAt !== null) {
    ctx.addIssue({ code: "custom", path: ["expiresAt"], message: "must be null for explicit" });
  }
  if (flag.source === "auto-clarity") {
    if (unit !== "turn") {
      ctx.addIssue({ code: "custom", path: ["ttl", "unit"], message: "auto-clarity needs turn" });
    } else if (value > MAX_AUTO_CLARITY_TURNS) {
      ctx.addIssue({ code: "custom", path: ["ttl", "value"], message: "auto-clarity max 10" });
    }
    if (flag.expiresAt === null || flag.expiresAt - flag.activatedAt > MAX_AUTO_CLARITY_MS) {
      ctx.addIssue({ code: "custom", path: ["expiresAt"], message: "auto-clarity cap max 1h" });
    }
  }
});

/** Compile-time proof that the zod schema produces exactly {@linkcode ProseFlag}. */
const _flagShape: z.ZodType<ProseFlag> = ProseFlagZod;

/** One validation issue: its code, the path to the field and a message. */
export interface SchemaIssue {
  /** The zod issue code (`invalid_value`, `unrecognized_keys`, `custom`…). */
  code: string;
  /** Keys from the document root to the faulty value. */
  path: PropertyKey[];
  /** A short explanation. */
  message: string;
}

/** The outcome of {@linkcode ParseSchema.safeParse}. */
export type ParseOutcome<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: SchemaIssue[] } };

/** A zod schema seen through the two calls consumers need (the zod object itself at runtime). */
export interface ParseSchema<T> {
  /** Parse `input` or throw a zod error. */
  parse(input: unknown): T;
  /** Parse `input` without throwing. */
  safeParse(input: unknown): ParseOutcome<T>;
}

/**
 * The strict flag schema (the zod schema {@linkcode ProseFlagZod}, typed for the public API).
 *
 * @example
 * ```ts
 * import { ProseFlagSchema } from "./schema.ts";
 * ProseFlagSchema.safeParse({
 *   level: "max",
 *   ttl: { unit: "block", value: 0 },
 *   expiresAt: null,
 *   activatedAt: 1,
 *   source: "manual",
 * }).success; // false
 * ```
 */
export const ProseFlagSchema: ParseSchema<ProseFlag> = ProseFlagZod;

/**
 * The dotted field path of a zod issue as error lines name it: an unknown key is `(extra-key)`
 * (its name is never echoed), a wrong top-level type `(root)`.
 *
 * @example
 * ```ts
 * import { issueField } from "./schema.ts";
 * issueField({ code: "unrecognized_keys", path: [] }); // "(extra-key)"
 * issueField({ code: "invalid_value", path: ["ttl", "unit"] }); // "ttl.unit"
 * ```
 */
export function issueField(issue: { code: string; path: readonly PropertyKey[] }): string {
  const parts = issue.path.map((p) => String(p));
  if (issue.code === "unrecognized_keys") parts.push("(extra-key)");
  return parts.length === 0 ? "(root)" : parts.join(".");
}

/**
 * Serialize a flag the way writers must: compact JSON, keys in schema order, then `\n`.
 *
 * @example
 * ```ts
 * import { serializeFlag } from "./schema.ts";
 * serializeFlag({
 *   level: "full",
 *   ttl: { unit: "turn", value: 2 },
 *   expiresAt: null,
 *   activatedAt: 5,
 *   source: "manual",
 * }); // '{"level":"full","ttl":{"unit":"turn","value":2},"expiresAt":null,"activatedAt":5,"source":"manual"}\n'
 * ```
 */
export function serializeFlag(flag: ProseFlag): string {
  return JSON.stringify({
    level: flag.level,
    ttl: { unit: flag.ttl.unit, value: flag.ttl.value },
    expiresAt: flag.expiresAt,
    activatedAt: flag.activatedAt,
    source: flag.source,
  }) + "\n";
}

/** Precedence of a source: manual > config > auto-clarity. */
export function sourceRank(source: ProseSource): number {
  return source === "manual" ? 3 : source === "config" ? 2 : 1;
}

/** True when `flag` has expired at `now` (the reader's clock). */
export function isExpired(flag: ProseFlag, now: number): boolean {
  return flag.expiresAt !== null && now >= flag.expiresAt;
}
