/**
 * Every JSON document prose reads or writes, defined once as a zod schema: the flag file, the
 * status document, the backend's request, response and error bodies, the `UserPromptSubmit` hook
 * input and cellm's `worker.json` (the config, with its JSONC loader, is `config.ts`). The JSON
 * Schemas in `references/schemas/prose-*.schema.json` are generated from these.
 *
 * Every flag field is an enum or a number, so text injected into the flag file can only make it
 * invalid; it can never reach a prompt (`references/prose.md#flag`).
 *
 * @module
 */

import * as z from "../_zod.ts";

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
export type ProseLevel = "off" | "minimal" | "full";
/** A TTL unit. */
export type TtlUnit = typeof TTL_UNITS[number];
/** A flag source. */
export type ProseSource = typeof SOURCES[number];

/** The state of a flag read: `absent`, `active`, `expired`, `invalid` or `unsafe`. */
export type FlagState = "absent" | "active" | "expired" | "invalid" | "unsafe";

/** Why a flag is invalid or unsafe, or why a write was refused (`references/prose.md#reasons`). */
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
const MAX_EPOCH_MS = 8.64e15;
/** Most responses a `turn` flag may cover. */
export const MAX_TURNS = 1000;
/** Most responses an auto-clarity activation may cover. */
export const MAX_AUTO_CLARITY_TURNS = 10;
/** Longest auto-clarity cap in milliseconds (1 h). */
export const MAX_AUTO_CLARITY_MS = 3_600_000;

const epochMs = z.deferred(() => z.int().check(z.minimum(1), z.maximum(MAX_EPOCH_MS)));

/** A valid prose flag (keys in file order). */
export interface ProseFlag {
  /** The override level; `off` pauses the override but keeps its TTL. */
  level: ProseLevel;
  /** How the flag ends: the unit and, for `turn`, the responses left (0 for other units). */
  ttl: { unit: "turn" | "block" | "session" | "explicit"; value: number };
  /** Epoch-ms cap, or `null` for no time limit. */
  expiresAt: number | null;
  /** Epoch-ms of activation. */
  activatedAt: number;
  /** Who activated it. */
  source: "manual" | "auto-clarity" | "config";
}

const TtlSchema = z.deferred(() =>
  z.strictObject({
    unit: z.enum(TTL_UNITS),
    value: z.int().check(z.minimum(0), z.maximum(MAX_TURNS)),
  })
);

/**
 * The strict flag document. Cross-field rules: `value` is 1–1000 for `turn` and 0 otherwise;
 * `expiresAt` is null or later than `activatedAt` and null for `explicit`; an auto-clarity flag is
 * a `turn` flag of at most 10 responses capped at most 1 h after activation.
 */
export const ProseFlagSchema = z.deferred(() =>
  z.strictObject({
    level: z.enum(LEVELS),
    ttl: TtlSchema,
    expiresAt: z.nullable(epochMs),
    activatedAt: epochMs,
    source: z.enum(SOURCES),
  }).check(z.superRefine((flag, ctx) => {
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
  }))
);

/** Compile-time proof that the zod schema produces exactly {@linkcode ProseFlag}. */
const _flagShape: z.ZodMiniType<ProseFlag> = ProseFlagSchema;

/**
 * The dotted field path of a zod issue as error lines name it: an unknown key is `(extra-key)`
 * (its name is never echoed), a wrong top-level type `(root)`.
 */
export function issueField(issue: { code: string; path: readonly PropertyKey[] }): string {
  const parts = issue.path.map((p) => String(p));
  if (issue.code === "unrecognized_keys") parts.push("(extra-key)");
  return parts.length === 0 ? "(root)" : parts.join(".");
}

/**
 * The message of a zod issue as a reply may carry it: an unknown key is `unknown key` (zod's own
 * message would echo the client's key name), every other message is the schema's own text.
 */
export function issueMessage(issue: { code: string; message: string }): string {
  return issue.code === "unrecognized_keys" ? "unknown key" : issue.message;
}

/**
 * Serialize a flag the way writers must: compact JSON, keys in schema order, then `\n`.
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

// --- the status document (references/prose.md#status-document) -------------------------------

/** The status document's schema identifier. */
export const STATUS_SCHEMA_ID = "ctxkit.prose.status/1";

/** The mirrored keys, in the order drift reports them. */
export const MIRROR_KEYS = [
  "CELLM_PROSE_ACTIVE",
  "CELLM_PROSE_LEVEL",
  "CELLM_PROSE_EXPIRES_AT",
] as const;

/** One of {@linkcode MIRROR_KEYS}. */
export type MirrorKey = typeof MIRROR_KEYS[number];
/** The three mirror values in their stored text form. */
export type MirrorValues = { [K in MirrorKey]: string };
/** The stored rows: the text value of each key, or `null` when its row is missing. */
export type MirrorRows = { [K in MirrorKey]: string | null };

/**
 * `prose status --json` and `GET /api/prose/status`: one document, keys in this order. `flag` is set
 * only for `active` or `expired`; `mirror`, `drift` and `driftKeys` are `null` unless the backend
 * answered; `expected` is what the mirror should hold.
 */
export const StatusDocumentSchema = z.deferred(() =>
  z.strictObject({
    schema: z.literal(STATUS_SCHEMA_ID),
    via: z.enum(["filesystem", "backend"]),
    now: z.int(),
    flagPath: z.string(),
    state: z.enum(FLAG_STATES),
    reason: z.nullable(z.string()),
    field: z.nullable(z.string()),
    effectiveLevel: z.enum(LEVELS),
    flag: z.nullable(ProseFlagSchema),
    mirror: z.nullable(z.strictObject({
      CELLM_PROSE_ACTIVE: z.nullable(z.string()),
      CELLM_PROSE_LEVEL: z.nullable(z.string()),
      CELLM_PROSE_EXPIRES_AT: z.nullable(z.string()),
    })),
    expected: z.nullable(z.strictObject({
      CELLM_PROSE_ACTIVE: z.string(),
      CELLM_PROSE_LEVEL: z.string(),
      CELLM_PROSE_EXPIRES_AT: z.string(),
    })),
    drift: z.nullable(z.boolean()),
    driftKeys: z.nullable(z.array(z.enum(MIRROR_KEYS))),
  })
);

/** A status document (`ctxkit.prose.status/1`), keys in output order. */
export type StatusDocument = z.infer<typeof StatusDocumentSchema>;

// --- the backend's wire documents (references/prose.md#backend-api) ----------------------------

/**
 * The strict body of `POST /api/prose/toggle`: `on` (with optional level, ttl, `for` and source),
 * `off`, `level`, or `sync` (re-mirror only). Unknown keys are rejected at every level.
 */
export const ToggleRequestSchema = z.deferred(() =>
  z.discriminatedUnion("action", [
    z.strictObject({
      action: z.literal("on"),
      level: z.optional(z.enum(["minimal", "full"])),
      ttl: z.optional(z.strictObject({
        unit: z.enum(TTL_UNITS),
        value: z.optional(z.int().check(z.minimum(0), z.maximum(MAX_TURNS))),
      })),
      for: z.optional(z.string().check(z.maxLength(16))),
      source: z.optional(z.enum(SOURCES)),
    }),
    z.strictObject({ action: z.literal("off") }),
    z.strictObject({ action: z.literal("level"), level: z.enum(LEVELS) }),
    z.strictObject({ action: z.literal("sync") }),
  ])
);

/** A parsed toggle request (the body of `POST /api/prose/toggle`). */
export type ToggleRequest = z.infer<typeof ToggleRequestSchema>;

/**
 * Every non-2xx body: `{ok: false, error, reason?, field?, message}`; `error` is `not_found`,
 * `invalid_request`, `refused`, `conflict`… (a newer server may send others), `reason` the code of
 * a 409, `message` one line, never a stack trace.
 */
export const ErrorBodySchema = z.deferred(() =>
  z.strictObject({
    ok: z.literal(false),
    error: z.string().check(z.maxLength(64)),
    reason: z.optional(z.string().check(z.maxLength(64))),
    field: z.optional(z.string().check(z.maxLength(256))),
    message: z.string().check(z.maxLength(1024)),
  })
);

/**
 * The success body of a toggle: `{ok: true, action, result, reason?, status, mirror: {ok}}`; the
 * `status` is the document after the toggle, `mirror.ok` false when the mirror write failed.
 */
export const ToggleResponseSchema = z.deferred(() =>
  z.strictObject({
    ok: z.literal(true),
    action: z.enum(["on", "off", "level", "sync"]),
    result: z.string().check(z.minLength(1), z.maxLength(64)),
    reason: z.optional(z.string().check(z.maxLength(64))),
    status: StatusDocumentSchema,
    mirror: z.strictObject({ ok: z.boolean() }),
  })
);

/** A parsed toggle success body. */
export type ToggleResponse = z.infer<typeof ToggleResponseSchema>;

/**
 * `D/serve.json`, written by `prose serve` (0600, atomically) and removed when it stops: the
 * port it bound on 127.0.0.1, its pid, and the per-server secret every request but `/health`
 * must carry as `Authorization: Bearer <token>` (`references/prose.md#authentication`).
 */
export const ServeRecordSchema = z.deferred(() =>
  z.strictObject({
    port: z.int().check(z.minimum(1), z.maximum(65535)),
    pid: z.int().check(z.minimum(1)),
    token: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  })
);

/** A parsed `serve.json`. */
export type ServeRecord = z.infer<typeof ServeRecordSchema>;

// --- documents of other programs --------------------------------------------------------------

/** The `UserPromptSubmit` hook input of `match --hook-input`: only a string `prompt` is needed. */
export const HookInputSchema = z.deferred(() => z.looseObject({ prompt: z.string() }));

/** `R/worker.json` belongs to cellm: only its `port` is read, every other key is ignored. */
export const WorkerJsonSchema = z.deferred(() =>
  z.looseObject({
    port: z.int().check(z.minimum(1), z.maximum(65535)),
  })
);
