/**
 * The SQLite mirror of the prose flag (spec §9): a `settings(key, value, updated_at)` table holding
 * exactly three keys, written only by `prose serve`, read to detect drift against the flag file.
 *
 * The flag file stays the source of truth; the mirror only lets UIs display the state. Values are
 * stored as text (`true`/`false`, a level, a decimal epoch-ms or `null`) so that a row written by
 * hand that cannot be decoded shows up as drift instead of breaking a reader.
 *
 * @module
 */

import { closeSync, constants, fchmodSync, fstatSync, openSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";

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

/** The inactive defaults a missing row counts as. */
export const MIRROR_DEFAULTS: Readonly<MirrorValues> = Object.freeze({
  CELLM_PROSE_ACTIVE: "false",
  CELLM_PROSE_LEVEL: "off",
  CELLM_PROSE_EXPIRES_AT: "null",
});

/** Thrown when the mirror database cannot be opened, read or written (`code=db`). */
export class MirrorError extends Error {
  /** Wrap a database failure; `message` is one line, without a stack. */
  constructor(message: string) {
    super(message);
    this.name = "MirrorError";
  }
}

/** The part of a flag read the mirror depends on (structural, so any read result fits). */
export interface MirrorSource {
  /** The flag state (`absent`, `active`, `expired`, `invalid` or `unsafe`). */
  state: string;
  /** The flag, when one was parsed. */
  flag: { level: string; expiresAt: number | null } | null;
}

/**
 * The values the mirror must hold for a flag read: `ACTIVE` is `true` exactly when the state is
 * `active`; `LEVEL` is the active level, else `off`; `EXPIRES_AT` the active flag's `expiresAt`.
 *
 * @example
 * ```ts
 * import { expectedMirror } from "./mirror.ts";
 * expectedMirror({ state: "active", flag: { level: "full", expiresAt: null } });
 * // { CELLM_PROSE_ACTIVE: "true", CELLM_PROSE_LEVEL: "full", CELLM_PROSE_EXPIRES_AT: "null" }
 * ```
 */
export function expectedMirror(read: MirrorSource): MirrorValues {
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

/** True when `value` is a well-formed stored value for `key`. */
export function decodableMirrorValue(key: MirrorKey, value: string): boolean {
  return DECODERS[key](value);
}

/** The drift verdict of {@linkcode mirrorDrift}. */
export interface DriftResult {
  /** True when any stored value differs from its expected value. */
  drift: boolean;
  /** The differing keys, in {@linkcode MIRROR_KEYS} order. */
  driftKeys: MirrorKey[];
}

/**
 * Compare stored rows with expected values. A missing row counts as its inactive default; a value
 * that cannot be decoded always counts as drift.
 *
 * @example
 * ```ts
 * import { mirrorDrift } from "./mirror.ts";
 * mirrorDrift(
 *   { CELLM_PROSE_ACTIVE: null, CELLM_PROSE_LEVEL: "full", CELLM_PROSE_EXPIRES_AT: null },
 *   { CELLM_PROSE_ACTIVE: "false", CELLM_PROSE_LEVEL: "off", CELLM_PROSE_EXPIRES_AT: "null" },
 * ); // { drift: true, driftKeys: ["CELLM_PROSE_LEVEL"] }
 * ```
 */
export function mirrorDrift(rows: MirrorRows, expected: MirrorValues): DriftResult {
  const driftKeys = MIRROR_KEYS.filter((key) => {
    const stored = rows[key] ?? MIRROR_DEFAULTS[key];
    return !decodableMirrorValue(key, stored) || stored !== expected[key];
  });
  return { drift: driftKeys.length > 0, driftKeys };
}

function oneLine(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.split("\n")[0].trim();
}

function storedText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return String(value);
}

/**
 * Create the database file with mode 0600 when it is missing and force 0600 on an existing one, so
 * SQLite (which copies the main file's mode to its `-wal`/`-shm` files) never widens access.
 */
function prepareFile(path: string): void {
  let fd: number;
  try {
    fd = openSync(
      path,
      constants.O_RDWR | constants.O_CREAT | (constants.O_NOFOLLOW ?? 0),
      0o600,
    );
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === "ELOOP") throw new MirrorError(`database path is a symbolic link: ${path}`);
    throw new MirrorError(`cannot open database ${path}: ${oneLine(e)}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new MirrorError(`database path is not a regular file: ${path}`);
    if ((stat.mode & 0o777) !== 0o600) fchmodSync(fd, 0o600);
  } catch (e) {
    if (e instanceof MirrorError) throw e;
    throw new MirrorError(`cannot prepare database ${path}: ${oneLine(e)}`);
  } finally {
    closeSync(fd);
  }
}

/**
 * An open mirror database. Only `prose serve` writes it; everything is synchronous so a toggle's
 * flag write and mirror write never interleave with another request.
 *
 * @example
 * ```ts ignore
 * const mirror = ProseMirror.open("/tmp/prose.db");
 * mirror.write({ CELLM_PROSE_ACTIVE: "true", CELLM_PROSE_LEVEL: "full", CELLM_PROSE_EXPIRES_AT: "null" });
 * mirror.read().CELLM_PROSE_LEVEL; // "full"
 * mirror.close();
 * ```
 */
export class ProseMirror {
  /** The database file. */
  readonly path: string;
  readonly #db: DatabaseSync;

  private constructor(path: string, db: DatabaseSync) {
    this.path = path;
    this.#db = db;
  }

  /**
   * Open (creating if needed) the database at `path`: mode 0600, WAL journal, the `settings` table.
   * Throws {@linkcode MirrorError} on any failure.
   */
  static open(path: string): ProseMirror {
    prepareFile(path);
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(path);
      db.exec("PRAGMA busy_timeout = 1000");
      db.exec("PRAGMA journal_mode = WAL");
      // WAL + NORMAL never corrupts the file; a power cut may lose the last commit, which only
      // shows as drift until the next toggle or sync re-derives the rows from the flag file.
      db.exec("PRAGMA synchronous = NORMAL");
      db.exec(
        "CREATE TABLE IF NOT EXISTS settings " +
          "(key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER)",
      );
      // Fail at startup, not on the first request, when the table has an incompatible shape.
      db.prepare("SELECT key, value, updated_at FROM settings LIMIT 0").all();
      return new ProseMirror(path, db);
    } catch (e) {
      try {
        db?.close();
      } catch { /* already failing */ }
      throw new MirrorError(`cannot open database ${path}: ${oneLine(e)}`);
    }
  }

  /** The stored value of each mirrored key (`null` for a missing row). */
  read(): MirrorRows {
    const rows: MirrorRows = {
      CELLM_PROSE_ACTIVE: null,
      CELLM_PROSE_LEVEL: null,
      CELLM_PROSE_EXPIRES_AT: null,
    };
    try {
      const found = this.#db
        .prepare("SELECT key, value FROM settings WHERE key IN (?, ?, ?)")
        .all(...MIRROR_KEYS);
      for (const row of found) {
        const key = row.key as MirrorKey;
        if ((MIRROR_KEYS as readonly string[]).includes(key)) rows[key] = storedText(row.value);
      }
    } catch (e) {
      throw new MirrorError(`cannot read database ${this.path}: ${oneLine(e)}`);
    }
    return rows;
  }

  /** Write all three values in one transaction, stamped `updatedAt` (epoch-ms). */
  write(values: MirrorValues, updatedAt: number = Date.now()): void {
    try {
      this.#db.exec("BEGIN IMMEDIATE");
    } catch (e) {
      throw new MirrorError(`cannot write database ${this.path}: ${oneLine(e)}`);
    }
    try {
      const upsert = this.#db.prepare(
        "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) " +
          "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
      );
      for (const key of MIRROR_KEYS) upsert.run(key, values[key], updatedAt);
      this.#db.exec("COMMIT");
    } catch (e) {
      try {
        this.#db.exec("ROLLBACK");
      } catch { /* the transaction is already gone */ }
      throw new MirrorError(`cannot write database ${this.path}: ${oneLine(e)}`);
    }
  }

  /** Close the database (checkpoints the WAL). Safe to call twice. */
  close(): void {
    try {
      if (this.#db.isOpen) this.#db.close();
    } catch { /* closing is best effort */ }
  }
}
