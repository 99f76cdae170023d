import assert from "node:assert/strict";
import { lstatSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { makeTempDir, removeDir } from "../../tests/_helpers.ts";
import { loadMirrorOpener, MirrorError } from "./mirror.ts";
import { MIRROR_DEFAULTS } from "./status.ts";

const ACTIVE_FULL = {
  CELLM_PROSE_ACTIVE: "true",
  CELLM_PROSE_LEVEL: "full",
  CELLM_PROSE_EXPIRES_AT: "1800000000000",
};

const open = await loadMirrorOpener();

Deno.test("mirror: creates a 0600 WAL database with the settings table", () => {
  const dir = makeTempDir("prose-mirror-");
  try {
    const path = join(dir, "prose.db");
    const mirror = open(path);
    assert.equal(lstatSync(path).mode & 0o777, 0o600);
    assert.deepEqual(mirror.read(), {
      CELLM_PROSE_ACTIVE: null,
      CELLM_PROSE_LEVEL: null,
      CELLM_PROSE_EXPIRES_AT: null,
    });
    mirror.write(ACTIVE_FULL, 1234);
    assert.deepEqual(mirror.read(), ACTIVE_FULL);
    // Another connection sees WAL mode and exactly the three rows.
    const db = new DatabaseSync(path);
    assert.equal(db.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
    const rows = db.prepare("SELECT key, value, updated_at FROM settings ORDER BY key").all();
    assert.deepEqual(rows.map((r) => [r.key, r.value, r.updated_at]), [
      ["CELLM_PROSE_ACTIVE", "true", 1234],
      ["CELLM_PROSE_EXPIRES_AT", "1800000000000", 1234],
      ["CELLM_PROSE_LEVEL", "full", 1234],
    ]);
    db.close();
    mirror.close();
    mirror.close(); // twice is harmless
  } finally {
    removeDir(dir);
  }
});

Deno.test("mirror: a reopened database keeps its rows; an existing file is forced to 0600", () => {
  const dir = makeTempDir("prose-mirror-");
  try {
    const path = join(dir, "prose.db");
    const first = open(path);
    first.write(ACTIVE_FULL, 1);
    first.write({ ...ACTIVE_FULL, CELLM_PROSE_LEVEL: "minimal" }, 2);
    first.close();
    Deno.chmodSync(path, 0o644);
    const second = open(path);
    assert.equal(lstatSync(path).mode & 0o777, 0o600);
    assert.deepEqual(second.read(), { ...ACTIVE_FULL, CELLM_PROSE_LEVEL: "minimal" });
    second.close();
    // Closing checkpoints the WAL: only the database file is left.
    assert.deepEqual(readdirSync(dir), ["prose.db"]);
  } finally {
    removeDir(dir);
  }
});

Deno.test("mirror: other keys in a shared settings table are left alone", () => {
  const dir = makeTempDir("prose-mirror-");
  try {
    const path = join(dir, "shared.db");
    const db = new DatabaseSync(path);
    db.exec(
      "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER)",
    );
    db.prepare("INSERT INTO settings VALUES (?, ?, ?)").run("OTHER", "x", 1);
    db.prepare("INSERT INTO settings VALUES (?, ?, ?)").run("CELLM_PROSE_LEVEL", 42n, 1);
    db.close();
    const mirror = open(path);
    // A non-text value written by hand is read back as text and counts as drift.
    assert.equal(mirror.read().CELLM_PROSE_LEVEL, "42");
    mirror.write({ ...MIRROR_DEFAULTS }, 5);
    mirror.close();
    const check = new DatabaseSync(path);
    assert.deepEqual(
      check.prepare("SELECT key, value FROM settings ORDER BY key").all().map((r) => [
        r.key,
        r.value,
      ]),
      [
        ["CELLM_PROSE_ACTIVE", "false"],
        ["CELLM_PROSE_EXPIRES_AT", "null"],
        ["CELLM_PROSE_LEVEL", "off"],
        ["OTHER", "x"],
      ],
    );
    check.close();
  } finally {
    removeDir(dir);
  }
});

Deno.test("mirror: bad paths and non-databases are MirrorErrors", () => {
  const dir = makeTempDir("prose-mirror-");
  try {
    assert.throws(() => open(join(dir, "missing", "prose.db")), MirrorError);
    assert.throws(() => open(dir), MirrorError);
    const junk = join(dir, "junk.db");
    writeFileSync(junk, "this is not a database, just text that is long enough to matter\n");
    assert.throws(() => open(junk), (e: unknown) => {
      assert.ok(e instanceof MirrorError);
      assert.match(e.message, /^cannot open database .*junk\.db: /);
      return true;
    });
    const link = join(dir, "link.db");
    symlinkSync(join(dir, "target.db"), link);
    assert.throws(() => open(link), /symbolic link/);
    // The dangling link's target was never created.
    assert.deepEqual(readdirSync(dir).sort(), ["junk.db", "link.db"]);
  } finally {
    removeDir(dir);
  }
});
