/**
 * How a flag read is reported (spec §6): the status line, the human sentence and the
 * `ctxkit.prose.status/1` JSON document. Nothing read from disk reaches the output unsanitized, and
 * invalid content is never echoed (only enum and number fields of a valid flag are shown).
 *
 * @module
 */

import { z } from "zod";
import type { FlagRead } from "./flag_io.ts";
import { expectedMirror } from "./mirror.ts";
import { resolveLevel } from "./ops.ts";
import { renderValue, sanitize } from "./sanitize.ts";
import {
  FLAG_STATES,
  type FlagState,
  LEVELS,
  type ParseSchema,
  type ProseFlag,
  ProseFlagZod,
  type ProseLevel,
} from "./schema.ts";

/** The status document's schema identifier. */
export const STATUS_SCHEMA_ID = "ctxkit.prose.status/1";

/** The mirrored keys, in drift order. */
const MIRROR_KEY = z.enum(["CELLM_PROSE_ACTIVE", "CELLM_PROSE_LEVEL", "CELLM_PROSE_EXPIRES_AT"]);

/** The three mirror values as stored (a missing row is `null`). */
const MirrorRowsSchema = z.strictObject({
  CELLM_PROSE_ACTIVE: z.string().nullable(),
  CELLM_PROSE_LEVEL: z.string().nullable(),
  CELLM_PROSE_EXPIRES_AT: z.string().nullable(),
});

/** The three values the mirror should hold for the flag's state. */
const MirrorValuesSchema = z.strictObject({
  CELLM_PROSE_ACTIVE: z.string(),
  CELLM_PROSE_LEVEL: z.string(),
  CELLM_PROSE_EXPIRES_AT: z.string(),
});

/** The mirror keys in drift order. */
export type MirrorKeyName = "CELLM_PROSE_ACTIVE" | "CELLM_PROSE_LEVEL" | "CELLM_PROSE_EXPIRES_AT";

/** A status document (`ctxkit.prose.status/1`), keys in output order. */
export interface StatusDocument {
  /** Always `ctxkit.prose.status/1`. */
  schema: typeof STATUS_SCHEMA_ID;
  /** `filesystem` (local read) or `backend`. */
  via: "filesystem" | "backend";
  /** The reader's clock, epoch-ms. */
  now: number;
  /** The flag path (sanitized). */
  flagPath: string;
  /** The flag state. */
  state: FlagState;
  /** Why it is invalid or unsafe. */
  reason: string | null;
  /** The schema field at fault. */
  field: string | null;
  /** What skills render at (`off` = default quantization). */
  effectiveLevel: ProseLevel;
  /** The flag, for `active` and `expired` only. */
  flag: ProseFlag | null;
  /** Stored mirror rows (`null` unless the backend answered). */
  mirror: { [K in MirrorKeyName]: string | null } | null;
  /** What the mirror should hold for this state. */
  expected: { [K in MirrorKeyName]: string } | null;
  /** Whether the mirror differs (`null` unless the backend answered). */
  drift: boolean | null;
  /** The differing keys in drift order. */
  driftKeys: MirrorKeyName[] | null;
}

/**
 * `prose status --json` and `GET /api/prose/status`: one document, keys in this order. `flag` is set
 * only for `active` or `expired`; `mirror`, `drift` and `driftKeys` are `null` unless the backend
 * answered; `expected` is what the mirror should hold.
 */
export const StatusDocumentZod = z.strictObject({
  schema: z.literal(STATUS_SCHEMA_ID),
  via: z.enum(["filesystem", "backend"]),
  now: z.int(),
  flagPath: z.string(),
  state: z.enum(FLAG_STATES),
  reason: z.string().nullable(),
  field: z.string().nullable(),
  effectiveLevel: z.enum(LEVELS),
  flag: ProseFlagZod.nullable(),
  mirror: MirrorRowsSchema.nullable(),
  expected: MirrorValuesSchema.nullable(),
  drift: z.boolean().nullable(),
  driftKeys: z.array(MIRROR_KEY).nullable(),
});

const _statusShape: z.ZodType<StatusDocument> = StatusDocumentZod;

/** The status document schema (the zod schema {@linkcode StatusDocumentZod}, typed for the public API). */
export const StatusDocumentSchema: ParseSchema<StatusDocument> = StatusDocumentZod;

/** The mirror part of a status document (all `null` without a backend). */
export interface MirrorReport {
  /** Stored rows (`null` values for missing rows). */
  mirror: StatusDocument["mirror"];
  /** Whether any stored value differs from `expected`. */
  drift: boolean | null;
  /** The differing keys in drift order. */
  driftKeys: StatusDocument["driftKeys"];
}

/** UTC ISO-8601 with milliseconds. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

function ttlWord(flag: ProseFlag): string {
  return flag.ttl.unit === "turn" ? `turn:${flag.ttl.value}` : flag.ttl.unit;
}

/**
 * The status line:
 * `PROSE: state=… level=… effective=… ttl=… expiresAt=… activatedAt=… source=… [reason=] [field=]`.
 *
 * @example
 * ```ts
 * import { statusLine } from "./status.ts";
 * statusLine({ state: "absent", flag: null, reason: null, field: null });
 * // "PROSE: state=absent level=- effective=off ttl=- expiresAt=- activatedAt=- source=-"
 * ```
 */
export function statusLine(read: Pick<FlagRead, "state" | "flag" | "reason" | "field">): string {
  const f = read.flag;
  const parts = [
    `state=${read.state}`,
    `level=${f ? f.level : "-"}`,
    `effective=${resolveLevel(read)}`,
    `ttl=${f ? ttlWord(f) : "-"}`,
    `expiresAt=${f ? (f.expiresAt === null ? "never" : isoTime(f.expiresAt)) : "-"}`,
    `activatedAt=${f ? isoTime(f.activatedAt) : "-"}`,
    `source=${f ? f.source : "-"}`,
  ];
  if (read.reason !== null) parts.push(`reason=${renderValue(read.reason)}`);
  if (read.field !== null) parts.push(`field=${renderValue(read.field)}`);
  return `PROSE: ${parts.join(" ")}`;
}

function ttlPhrase(flag: ProseFlag): string {
  switch (flag.ttl.unit) {
    case "turn":
      return flag.ttl.value === 1 ? "1 response left" : `${flag.ttl.value} responses left`;
    case "block":
      return "until the work block ends (commit or push)";
    case "session":
      return "until the session ends";
    case "explicit":
      return "until `prose off`";
  }
}

/**
 * One human sentence for a read, e.g. "Prose override active: level full, 2 responses left, no
 * time limit."
 */
export function statusSentence(read: FlagRead): string {
  const f = read.flag;
  switch (read.state) {
    case "absent":
      return "No prose override: default quantization applies.";
    case "expired":
      return `Prose override expired at ${isoTime(f!.expiresAt!)}: default quantization applies.`;
    case "invalid":
      return `Prose flag is invalid (${read.reason}): default quantization applies; run \`prose off\` to remove it.`;
    case "unsafe":
      return `Prose flag path is unsafe (${read.reason}): default quantization applies; check ${
        sanitize(read.path)
      }.`;
    case "active": {
      const limit = f!.expiresAt === null ? "no time limit" : `expires ${isoTime(f!.expiresAt)}`;
      if (f!.level === "off") {
        return `Prose override paused (level off): default quantization applies, ${
          ttlPhrase(f!)
        }, ${limit}.`;
      }
      return `Prose override active: level ${f!.level}, ${ttlPhrase(f!)}, ${limit}.`;
    }
  }
}

/**
 * Build the status document for a read. Pass `mirror` when a backend read its mirror.
 *
 * @example
 * ```ts ignore
 * import { readProseFlag, statusDocument } from "./mod.ts";
 * const doc = statusDocument(readProseFlag(), "filesystem", Date.now());
 * ```
 */
export function statusDocument(
  read: FlagRead,
  via: "filesystem" | "backend",
  now: number,
  mirror: MirrorReport | null = null,
): StatusDocument {
  const showFlag = read.state === "active" || read.state === "expired";
  return {
    schema: STATUS_SCHEMA_ID,
    via,
    now,
    flagPath: sanitize(read.path),
    state: read.state,
    reason: read.reason,
    field: read.field,
    effectiveLevel: resolveLevel(read),
    flag: showFlag ? read.flag : null,
    mirror: mirror?.mirror ?? null,
    expected: expectedMirror(read),
    drift: mirror?.drift ?? null,
    driftKeys: mirror?.driftKeys ?? null,
  };
}
