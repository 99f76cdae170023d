/**
 * The status document (`ctxkit.prose.status/1`, `references/prose.md#status-document`): one
 * document for a flag read, built by `status --json` and by the backend, and the only thing the
 * CLI renders status lines from. It also says what the SQLite mirror should hold for the read and
 * where a stored mirror drifts (`references/prose.md#mirror`).
 *
 * A document holds the exact strings (the flag path, the stored mirror text); they are escaped
 * where they are printed (`safeJson`, `sanitize`), never in the document, so a consumer parses
 * back the real path. Invalid flag content is never included (only enum and number fields of a
 * valid flag).
 *
 * @module
 */

import { type FlagRead, resolveLevel } from "./flag.ts";
import {
  MIRROR_KEYS,
  type MirrorKey,
  type MirrorRows,
  type MirrorValues,
  STATUS_SCHEMA_ID,
  type StatusDocument,
} from "./schema.ts";

/** The inactive defaults a missing mirror row counts as. */
export const MIRROR_DEFAULTS: Readonly<MirrorValues> = Object.freeze({
  CELLM_PROSE_ACTIVE: "false",
  CELLM_PROSE_LEVEL: "off",
  CELLM_PROSE_EXPIRES_AT: "null",
});

/**
 * The values the mirror must hold for a flag read: `ACTIVE` is `true` exactly when the state is
 * `active`; `LEVEL` is the active level, else `off`; `EXPIRES_AT` the active flag's `expiresAt`.
 */
export function expectedMirror(
  read: { state: string; flag: { level: string; expiresAt: number | null } | null },
): MirrorValues {
  if (read.state !== "active" || read.flag === null) return { ...MIRROR_DEFAULTS };
  return {
    CELLM_PROSE_ACTIVE: "true",
    CELLM_PROSE_LEVEL: read.flag.level,
    CELLM_PROSE_EXPIRES_AT: read.flag.expiresAt === null ? "null" : String(read.flag.expiresAt),
  };
}

const DECODERS: { [K in MirrorKey]: (value: string) => boolean } = {
  CELLM_PROSE_ACTIVE: (v) => v === "true" || v === "false",
  CELLM_PROSE_LEVEL: (v) => v === "off" || v === "minimal" || v === "full",
  // Canonical decimal only: "007" or "1e3" would compare unequal as text yet decode equal.
  CELLM_PROSE_EXPIRES_AT: (v) => v === "null" || /^(0|[1-9][0-9]{0,15})$/.test(v),
};

/**
 * The keys whose stored value differs from the expected one, in {@linkcode MIRROR_KEYS} order. A
 * missing row counts as its inactive default; a value that is not canonical always drifts.
 */
export function driftKeys(rows: MirrorRows, expected: MirrorValues): MirrorKey[] {
  return MIRROR_KEYS.filter((key) => {
    const stored = rows[key] ?? MIRROR_DEFAULTS[key];
    return !DECODERS[key](stored) || stored !== expected[key];
  });
}

/**
 * Build the status document for a read. `mirror` is what a backend read from its database:
 * omitted without a backend (`mirror`, `drift`, `driftKeys` are `null`), `null` when the database
 * could not be read (every key drifts).
 */
export function statusDocument(
  read: FlagRead,
  via: "filesystem" | "backend",
  now: number,
  mirror?: MirrorRows | null,
): StatusDocument {
  const expected = expectedMirror(read);
  const keys = mirror === undefined
    ? null
    : mirror === null
    ? [...MIRROR_KEYS]
    : driftKeys(mirror, expected);
  return {
    schema: STATUS_SCHEMA_ID,
    via,
    now,
    flagPath: read.path,
    state: read.state,
    reason: read.reason,
    field: read.field,
    effectiveLevel: resolveLevel(read),
    flag: read.state === "active" || read.state === "expired" ? read.flag : null,
    mirror: mirror ?? null,
    expected,
    drift: keys === null ? null : keys.length > 0,
    driftKeys: keys,
  };
}
