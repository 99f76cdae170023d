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
import { errorCode, firstLine, isAbsent } from "../_fs/errors.ts";
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

/** The one statement that writes the mirror: it needs a UNIQUE or PRIMARY KEY index on `key`. */
const UPSERT = "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) " +
  "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";
/** The files SQLite keeps next to a database, which it reads as part of it. */
const SIDE_SUFFIXES = ["-wal", "-shm", "-journal"] as const;
/** The columns the mirror writes. */
const MIRROR_COLUMNS = ["key", "value", "updated_at"];
// Short: a message is clamped to 200 code points where it is printed, two paths included.
const SIDE_HINT = "remove it";
const DIR_HINT = "use a private directory";

function refuse(path: string, why: string): never {
  throw new MirrorError(`cannot open database ${path}: ${why}`);
}

function dirOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "." : i === 0 ? "/" : path.slice(0, i);
}

/**
 * The uid that owns what this process creates next to `path`: an exclusive temp file is made
 * there, inspected and removed (Deno tells the process's uid only under `--allow-sys=uid`, which
 * the shebang does not grant). The directory is already known to be writable by nobody else.
 */
function ownUid(path: string): number {
  const probe = tempPathFor(path);
  try {
    createFileExclusive(probe, "", 0o600, true, false);
    return Deno.lstatSync(probe).uid ?? -1;
  } catch (e) {
    return refuse(path, firstLine(e));
  } finally {
    try {
      Deno.removeSync(probe);
    } catch { /* never made, or gone */ }
  }
}

/** What {@linkcode checkPlace} found: the user's uid and the side files present. */
interface Place {
  /** The uid that owns what this process creates next to the database. */
  uid: number;
  /** The side files that exist (each the user's own regular file, writable by nobody else). */
  present: string[];
  /** Those others may read (forced to 0600 once the database is known to be ours). */
  readable: string[];
}

/**
 * Refuse a database another user could feed (`references/prose.md#starting-and-stopping`): its
 * directory must be the user's own and writable by nobody else, so nobody can plant a side file
 * SQLite would read (a `-wal` or `-journal` is replayed into the database) between these checks and
 * the open; and a side file already there must be the user's own regular file that nobody else can
 * write.
 */
function checkPlace(path: string): Place {
  const dir = dirOf(path);
  let st: Deno.FileInfo;
  try {
    st = Deno.statSync(dir);
  } catch (e) {
    refuse(path, firstLine(e));
  }
  if (!st.isDirectory) refuse(path, `${dir} is not a directory`);
  if (((st.mode ?? 0) & 0o022) !== 0) {
    refuse(path, `its directory is writable by others, who could plant its -wal; ${DIR_HINT}`);
  }
  const uid = ownUid(path);
  if (st.uid !== uid) refuse(path, `its directory is owned by another user; ${DIR_HINT}`);
  const place: Place = { uid, present: [], readable: [] };
  for (const suffix of SIDE_SUFFIXES) {
    const side = `${path}${suffix}`;
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(side);
    } catch (e) {
      if (isAbsent(e)) continue;
      refuse(path, `${side}: ${firstLine(e)}`);
    }
    if (info.isSymlink || !info.isFile) {
      refuse(path, `${side} is a link or not a regular file; ${SIDE_HINT}`);
    }
    if (info.uid !== uid) refuse(path, `${side} is owned by another user; ${SIDE_HINT}`);
    const mode = (info.mode ?? 0) & 0o777;
    if ((mode & 0o022) !== 0) refuse(path, `${side} is writable by others; ${SIDE_HINT}`);
    place.present.push(side);
    if (mode !== 0o600) place.readable.push(side);
  }
  return place;
}

/**
 * Check, before anything is opened for writing or chmod-ed, that an existing `path` is a mirror of
 * ours: a regular file (not a link), not empty, with the SQLite header, holding a `settings` table
 * the mirror's upsert can write (its columns, a UNIQUE or PRIMARY KEY index on `key` alone, no other
 * column NOT NULL without a default). A refused file keeps its mode and bytes.
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
  let columns: { name: string; required: boolean }[];
  let upserts = true;
  try {
    const db = new Database(path, { readOnly: true });
    try {
      // Another server may be making this file a mirror right now (switching it to WAL).
      db.exec("PRAGMA busy_timeout = 1000");
      columns = db.prepare(
        'SELECT name, "notnull" AND dflt_value IS NULL AND pk = 0 AS required ' +
          "FROM pragma_table_info('settings')",
      ).all().map((r) => ({ name: String(r.name), required: Boolean(r.required) }));
      // SQLite checks an upsert's ON CONFLICT target when it prepares it: no write is needed.
      if (columns.length > 0) {
        try {
          db.prepare(UPSERT);
        } catch {
          upserts = false; // "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint"
        }
      }
    } finally {
      db.close();
    }
  } catch (e) {
    refuse(path, firstLine(e));
  }
  const names = columns.map((c) => c.name);
  if (!MIRROR_COLUMNS.every((c) => names.includes(c))) {
    refuse(path, "a SQLite database without the mirror's settings table (left untouched)");
  }
  if (!upserts) {
    refuse(
      path,
      "its settings table has no UNIQUE index on key alone, which the upsert needs (left untouched)",
    );
  }
  const required = columns.find((c) => c.required && !MIRROR_COLUMNS.includes(c.name));
  if (required !== undefined) {
    refuse(
      path,
      `its settings column ${required.name} is NOT NULL with no default (left untouched)`,
    );
  }
}

/**
 * Create a new mirror at `path`, which must not exist: built in an exclusive 0600 temp file next to
 * it, then linked into place, so the path is never an empty or half-made database and a file that
 * appeared meanwhile is never replaced. `false` when one did appear (another `serve` starting at
 * the same moment made it): the caller validates it like any existing file.
 */
function createMirror(path: string, Database: typeof DatabaseSync): boolean {
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
    return true;
  } catch (e) {
    if (errorCode(e) === "EEXIST") return false;
    return refuse(path, firstLine(e));
  } finally {
    try {
      Deno.removeSync(temp);
    } catch { /* already gone */ }
  }
}

function lstatOrAbsent(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch (e) {
    if (!isAbsent(e)) refuse(path, firstLine(e));
    return undefined;
  }
}

/**
 * Make `path` a mirror of ours with mode 0600: validate an existing one, or create it. Its place
 * is checked first ({@linkcode checkPlace}); SQLite opens nothing before.
 */
function prepareFile(path: string, Database: typeof DatabaseSync): void {
  let place = checkPlace(path);
  let st = lstatOrAbsent(path);
  if (st === undefined) {
    // A side file appears only after its database: one without it is a stale or planted file
    // that SQLite would read into the new database.
    if (place.present.length > 0) {
      refuse(path, `${place.present[0]} is left without its database; ${SIDE_HINT}`);
    }
    if (createMirror(path, Database)) return;
    // Another server made it meanwhile: check it, and its side files, like any existing file.
    place = checkPlace(path);
    st = lstatOrAbsent(path);
    if (st === undefined) refuse(path, "it was removed while it was being created");
  }
  checkExisting(path, st, Database);
  if (st.uid !== place.uid) refuse(path, "owned by another user (left untouched)");
  // Ours: force 0600, so the -wal/-shm files SQLite derives from it are owner-only too.
  try {
    if (((st.mode ?? 0) & 0o777) !== 0o600) Deno.chmodSync(path, 0o600);
    for (const side of place.readable) Deno.chmodSync(side, 0o600);
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
