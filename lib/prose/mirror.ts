/**
 * The SQLite mirror of the prose flag (`references/prose.md#mirror`): a `settings(key, value,
 * updated_at)` table holding exactly three keys, written only by `prose serve`, read to detect
 * drift against the flag file. The one module that touches `node:sqlite`, and only `serve` loads
 * it: {@linkcode loadMirrorOpener} imports the driver on demand, so a bundle does not load it for
 * the other commands either.
 *
 * Values are stored as text (`true`/`false`, a level, a decimal epoch-ms or `null`) so that a row
 * written by hand that cannot be decoded shows up as drift instead of breaking a reader.
 *
 * @module
 */

import type { DatabaseSync } from "node:sqlite";
import { firstLine, isAbsent } from "../_fs/errors.ts";
import { readHead } from "../_fs/read.ts";
import { createFileExclusive, tempPathFor } from "../_fs/write.ts";
import { MIRROR_KEYS, type MirrorKey, type MirrorRows, type MirrorValues } from "./schema.ts";

/** Thrown when the mirror database cannot be opened, read or written (`code=db`). */
export class MirrorError extends Error {
  /** Wrap a database failure; `message` is one line, without a stack. */
  constructor(message: string) {
    super(message);
    this.name = "MirrorError";
  }
}

function storedText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return String(value);
}

/** The first 16 bytes of every SQLite 3 database file. */
const SQLITE_MAGIC = "SQLite format 3\0";
const SETTINGS_TABLE = "CREATE TABLE IF NOT EXISTS settings " +
  "(key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER)";

function refuse(path: string, why: string): never {
  throw new MirrorError(`cannot open database ${path}: ${why}`);
}

/**
 * Check, before anything is opened for writing or chmod-ed, that an existing `path` is a mirror of
 * ours: a regular file (not a link), not empty, with the SQLite header, holding a `settings` table
 * with the mirror's columns. A refused file keeps its mode and bytes.
 */
function checkExisting(path: string, st: Deno.FileInfo, Database: typeof DatabaseSync): void {
  if (st.isSymlink) throw new MirrorError(`database path is a symbolic link: ${path}`);
  if (!st.isFile) throw new MirrorError(`database path is not a regular file: ${path}`);
  if (st.size === 0) {
    refuse(path, "the file is empty; remove it, or name a path that does not exist");
  }
  let head: Uint8Array;
  try {
    head = readHead(path, 16, { follow: false }).bytes;
  } catch (e) {
    refuse(path, firstLine(e));
  }
  if (new TextDecoder("latin1").decode(head) !== SQLITE_MAGIC) {
    refuse(path, "not a SQLite database (left untouched)");
  }
  let columns: string[];
  try {
    const db = new Database(path, { readOnly: true });
    try {
      columns = db.prepare("SELECT name FROM pragma_table_info('settings')").all().map((r) =>
        String(r.name)
      );
    } finally {
      db.close();
    }
  } catch (e) {
    refuse(path, firstLine(e));
  }
  if (!["key", "value", "updated_at"].every((c) => columns.includes(c))) {
    refuse(path, "a SQLite database without the mirror's settings table (left untouched)");
  }
}

/**
 * Create a new mirror at `path`, which must not exist: built in an exclusive 0600 temp file next to
 * it, then linked into place, so the path is never an empty or half-made database and a file that
 * appeared meanwhile is never replaced.
 */
function createMirror(path: string, Database: typeof DatabaseSync): void {
  const temp = tempPathFor(path);
  try {
    createFileExclusive(temp, "", 0o600);
  } catch (e) {
    refuse(path, firstLine(e));
  }
  try {
    const db = new Database(temp);
    try {
      db.exec("PRAGMA journal_mode = MEMORY"); // no journal file next to the temp
      db.exec(SETTINGS_TABLE);
    } finally {
      db.close();
    }
    Deno.linkSync(temp, path);
  } catch (e) {
    refuse(path, firstLine(e));
  } finally {
    try {
      Deno.removeSync(temp);
    } catch { /* already gone */ }
  }
}

/** Make `path` a mirror of ours with mode 0600: validate an existing one, or create it. */
function prepareFile(path: string, Database: typeof DatabaseSync): void {
  let st: Deno.FileInfo | undefined;
  try {
    st = Deno.lstatSync(path);
  } catch (e) {
    if (!isAbsent(e)) refuse(path, firstLine(e));
  }
  if (st === undefined) return createMirror(path, Database);
  checkExisting(path, st, Database);
  // Ours: force 0600, so the -wal/-shm files SQLite derives from it are owner-only too.
  try {
    if (((st.mode ?? 0) & 0o777) !== 0o600) Deno.chmodSync(path, 0o600);
  } catch (e) {
    refuse(path, firstLine(e));
  }
}

/**
 * An open mirror database. Only `prose serve` writes it; everything is synchronous so a toggle's
 * flag write and mirror write never interleave with another request.
 */
export class ProseMirror {
  /** The database file. */
  readonly path: string;
  readonly #db: DatabaseSync;

  /** Wrap an open connection (see {@linkcode loadMirrorOpener}). */
  constructor(path: string, db: DatabaseSync) {
    this.path = path;
    this.#db = db;
    // From now on, never wait inside SQLite: that would block the server's event loop. A write
    // that finds the database locked fails at once and the server retries it on timers
    // (server.ts, references/prose.md#mirror); opening may still wait, before anything is served.
    db.exec("PRAGMA busy_timeout = 0");
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
      throw new MirrorError(`cannot read database ${this.path}: ${firstLine(e)}`);
    }
    return rows;
  }

  /** Write all three values in one transaction, stamped `updatedAt` (epoch-ms). */
  write(values: MirrorValues, updatedAt: number = Date.now()): void {
    try {
      this.#db.exec("BEGIN IMMEDIATE");
    } catch (e) {
      throw new MirrorError(`cannot write database ${this.path}: ${firstLine(e)}`);
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
      throw new MirrorError(`cannot write database ${this.path}: ${firstLine(e)}`);
    }
  }

  /** Close the database (checkpoints the WAL). Safe to call twice. */
  close(): void {
    try {
      if (this.#db.isOpen) this.#db.close();
    } catch { /* closing is best effort */ }
  }
}

/**
 * Load the SQLite driver and return the synchronous opener: it opens the mirror at a path (an
 * existing file must be a mirror of ours; a path that does not exist is created 0600) with WAL
 * journal and the `settings` table, or throws {@linkcode MirrorError}. Loading first lets `serve` bind its port, then open the database with
 * no await in between.
 */
export async function loadMirrorOpener(): Promise<(path: string) => ProseMirror> {
  const { DatabaseSync } = await import("node:sqlite");
  return (path) => {
    prepareFile(path, DatabaseSync);
    let db: DatabaseSync | undefined;
    try {
      db = new DatabaseSync(path);
      db.exec("PRAGMA busy_timeout = 1000");
      db.exec("PRAGMA journal_mode = WAL");
      // WAL + NORMAL never corrupts the file; a power cut may lose the last commit, which only
      // shows as drift until the next toggle or sync re-derives the rows from the flag file.
      db.exec("PRAGMA synchronous = NORMAL");
      db.exec(SETTINGS_TABLE);
      // Fail at startup, not on the first request, when the table has an incompatible shape.
      db.prepare("SELECT key, value, updated_at FROM settings LIMIT 0").all();
      return new ProseMirror(path, db);
    } catch (e) {
      try {
        db?.close();
      } catch { /* already failing */ }
      throw new MirrorError(`cannot open database ${path}: ${firstLine(e)}`);
    }
  };
}
