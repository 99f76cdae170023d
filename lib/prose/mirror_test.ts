import assert from "node:assert/strict";
import { lstatSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { makeTempDir, removeDir } from "../../tests/_helpers.ts";
import {
  expectedMirror,
  MIRROR_DEFAULTS,
  mirrorDrift,
  MirrorError,
  type MirrorRows,
  ProseMirror,
} from "./mirror.ts";

const ACTIVE_FULL = {
  CELLM_PROSE_ACTIVE: "true",
  CELLM_PROSE_LEVEL: "full",
  CELLM_PROSE_EXPIRES_AT: "1800000000000",
};

Deno.test("expectedMirror: only an active flag is mirrored as active", () => {
  assert.deepEqual(
    expectedMirror({ state: "active", flag: { level: "full", expiresAt: 1800000000000 } }),
    ACTIVE_FULL,
  );
  assert.deepEqual(
    expectedMirror({ state: "active", flag: { level: "off", expiresAt: null } }),
    { CELLM_PROSE_ACTIVE: "true", CELLM_PROSE_LEVEL: "off", CELLM_PROSE_EXPIRES_AT: "null" },
  );
  for (const state of ["expired", "absent", "invalid", "unsafe"]) {
    const flag = state === "expired" ? { level: "full", expiresAt: 5 } : null;
    assert.deepEqual(expectedMirror({ state, flag }), MIRROR_DEFAULTS);
  }
});

Deno.test("mirrorDrift: missing rows are inactive defaults; keys in fixed order", () => {
  const none: MirrorRows = {
    CELLM_PROSE_ACTIVE: null,
    CELLM_PROSE_LEVEL: null,
    CELLM_PROSE_EXPIRES_AT: null,
  };
  assert.deepEqual(mirrorDrift(none, { ...MIRROR_DEFAULTS }), { drift: false, driftKeys: [] });
  assert.deepEqual(mirrorDrift(none, ACTIVE_FULL), {
    drift: true,
    driftKeys: ["CELLM_PROSE_ACTIVE", "CELLM_PROSE_LEVEL", "CELLM_PROSE_EXPIRES_AT"],
  });
  assert.deepEqual(
    mirrorDrift({ ...ACTIVE_FULL, CELLM_PROSE_LEVEL: "minimal" }, ACTIVE_FULL).driftKeys,
    ["CELLM_PROSE_LEVEL"],
  );
});

Deno.test("mirrorDrift: undecodable values are drift even when equal as text", () => {
  const odd = {
    CELLM_PROSE_ACTIVE: "yes",
    CELLM_PROSE_LEVEL: "max",
    CELLM_PROSE_EXPIRES_AT: "007",
  };
  assert.deepEqual(mirrorDrift(odd, odd).driftKeys, [
    "CELLM_PROSE_ACTIVE",
    "CELLM_PROSE_LEVEL",
    "CELLM_PROSE_EXPIRES_AT",
  ]);
});

Deno.test("ProseMirror: creates a 0600 WAL database with the settings table", () => {
  const dir = makeTempDir("prose-mirror-");
  try {
    const path = join(dir, "prose.db");
    const mirror = ProseMirror.open(path);
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

Deno.test("ProseMirror: a reopened database keeps its rows; an existing file is forced to 0600", () => {
  const dir = makeTempDir("prose-mirror-");
  try {
    const path = join(dir, "prose.db");
    const first = ProseMirror.open(path);
    first.write(ACTIVE_FULL, 1);
    first.write({ ...ACTIVE_FULL, CELLM_PROSE_LEVEL: "minimal" }, 2);
    first.close();
    Deno.chmodSync(path, 0o644);
    const second = ProseMirror.open(path);
    assert.equal(lstatSync(path).mode & 0o777, 0o600);
    assert.deepEqual(second.read(), { ...ACTIVE_FULL, CELLM_PROSE_LEVEL: "minimal" });
    second.close();
    // Closing checkpoints the WAL: only the database file is left.
    assert.deepEqual(readdirSync(dir), ["prose.db"]);
  } finally {
    removeDir(dir);
  }
});

Deno.test("ProseMirror: other keys in a shared settings table are left alone", () => {
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
    const mirror = ProseMirror.open(path);
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

Deno.test("ProseMirror: bad paths and non-databases are MirrorErrors", () => {
  const dir = makeTempDir("prose-mirror-");
  try {
    assert.throws(() => ProseMirror.open(join(dir, "missing", "prose.db")), MirrorError);
    assert.throws(() => ProseMirror.open(dir), MirrorError);
    const junk = join(dir, "junk.db");
    writeFileSync(junk, "this is not a database, just text that is long enough to matter\n");
    assert.throws(() => ProseMirror.open(junk), (e: unknown) => {
      assert.ok(e instanceof MirrorError);
      assert.match(e.message, /^cannot open database .*junk\.db: /);
      return true;
    });
    const link = join(dir, "link.db");
    symlinkSync(join(dir, "target.db"), link);
    assert.throws(() => ProseMirror.open(link), /symbolic link/);
    assert.deepEqual(readdirSync(dir).sort(), ["junk.db", "link.db"]);
  } finally {
    removeDir(dir);
  }
});
