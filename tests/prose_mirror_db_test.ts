/**
 * The mirror database of `prose serve` under attack (issue 23, points 5, 8 and 11;
 * `references/prose.md#starting-and-stopping`): a database in a directory another user can write
 * to, or next to SQLite side files another user planted, is refused before SQLite opens anything;
 * a shared `settings` table the mirror's upsert cannot write is refused at start-up; several
 * servers started at once on a fresh state directory all open the one mirror. Cross-user cases
 * plant their files as a real second uid (`setpriv`), and skip with the reason where that cannot
 * run. Runs against the sources or, with `CTXKIT_TEST_TARGET=bundle`, the bundle.
 */
import assert from "node:assert/strict";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  baseEnv,
  IS_ROOT,
  lines,
  makeSharedTempDir,
  makeTempDir,
  removeDir,
  toolArgv,
  UNPRIVILEGED_ID,
} from "./_helpers.ts";
import { spawnServe } from "./_prose_fixtures.ts";

/** A state root of our own (0700), for `CELLM_DIR`. */
function stateRoot(): string {
  const root = join(makeTempDir("prose-db-"), "cellm");
  mkdirSync(join(root, "prose"), { recursive: true, mode: 0o700 });
  return root;
}

/**
 * `serve --port 0 --db path`, expected to be refused at start-up. A server that starts instead is
 * stopped at once (so a test of a missing refusal fails instead of waiting for it forever).
 */
async function refusedServe(
  path: string,
): Promise<{ code: number; error: string; stdout: string }> {
  const child = new Deno.Command(toolArgv("prose")[0], {
    args: [...toolArgv("prose").slice(1), "serve", "--port", "0", "--db", path],
    clearEnv: true,
    env: { ...baseEnv(), CELLM_DIR: stateRoot() },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let stdout = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stdout) {
    stdout += decoder.decode(chunk, { stream: true });
    if (stdout.includes("PROSE: serve listening=")) child.kill("SIGTERM");
  }
  const status = await child.status;
  const err = await stderr;
  assert.doesNotMatch(stdout, /serve listening=/, `serve started on ${path}`);
  assert.equal(lines(err).at(-1), `❌ FAILED EXIT:${status.code}`);
  return { code: status.code, error: lines(err)[0] ?? "", stdout };
}

/**
 * Run `sh -c script` as uid 65534 (`setpriv`, no supplementary groups, umask 0); why not, when it
 * cannot run here (not root, no setpriv).
 */
function asNobody(script: string, ...args: string[]): string | undefined {
  if (!IS_ROOT) return "not root: cannot plant a file as another uid";
  const id = String(UNPRIVILEGED_ID);
  try {
    const r = new Deno.Command("setpriv", {
      args: [`--reuid=${id}`, `--regid=${id}`, "--clear-groups", "/bin/sh", "-c", script, "sh"]
        .concat(args),
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      stdin: "null",
    }).outputSync();
    if (r.code !== 0) return `setpriv as uid ${id}: ${new TextDecoder().decode(r.stderr).trim()}`;
  } catch (e) {
    return `setpriv: ${(e as Error).message}`;
  }
  return undefined;
}

const PLANT = 'umask 0 && printf "planted by another user" >"$1"';

Deno.test("--db in a directory others can write to is refused, a side file planted there by another uid untouched (issue 23, point 5)", async () => {
  for (const mode of [0o777, 0o1777]) {
    const shared = join(makeSharedTempDir("prose-db-shared-"), "shared");
    mkdirSync(shared);
    chmodSync(shared, mode);
    const db = join(shared, "prose.db");
    const why = asNobody(PLANT, `${db}-wal`);
    if (why !== undefined) {
      console.log(`SKIP: ${why}`);
      return;
    }
    const r = await refusedServe(db);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, "");
    assert.equal(
      r.error,
      `PROSE-ERROR: code=db cannot open database ${db}: its directory is writable by others, ` +
        "who could plant its -wal; use a private directory",
    );
    // Nothing was created, opened or chmod-ed there.
    assert.deepEqual(readdirSync(shared), ["prose.db-wal"]);
    const planted = lstatSync(`${db}-wal`);
    assert.equal(planted.uid, UNPRIVILEGED_ID);
    assert.equal(planted.mode & 0o777, 0o666);
    assert.equal(readFileSync(`${db}-wal`, "utf8"), "planted by another user");
    removeDir(join(shared, ".."));
  }
});

Deno.test("--db next to a side file that is not the user's own is refused before SQLite reads it (issue 23, point 5)", async () => {
  // A private directory holding another user's -wal (planted while it was open), next to a mirror.
  const dir = join(makeSharedTempDir("prose-db-side-"), "mine");
  mkdirSync(dir);
  chmodSync(dir, 0o777);
  const db = join(dir, "prose.db");
  const why = asNobody(PLANT, `${db}-shm`);
  if (why !== undefined) {
    console.log(`SKIP: ${why}`);
    return;
  }
  chmodSync(dir, 0o700);
  const mirror = new DatabaseSync(db);
  mirror.exec(
    "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER)",
  );
  mirror.close();
  chmodSync(db, 0o600);
  const r = await refusedServe(db);
  assert.equal(r.code, 1);
  assert.equal(
    r.error,
    `PROSE-ERROR: code=db cannot open database ${db}: ${db}-shm is owned by another user; ` +
      "remove it",
  );
  assert.equal(readFileSync(`${db}-shm`, "utf8"), "planted by another user");
  assert.deepEqual(readdirSync(dir).sort(), ["prose.db", "prose.db-shm"]);
});

Deno.test("--db: a linked, writable-by-others or orphaned side file is refused; an owner-only directory is used", async () => {
  const dir = makeTempDir("prose-db-own-");
  const db = join(dir, "prose.db");
  // No database yet, but a journal: SQLite would play it into the new database.
  writeFileSync(`${db}-journal`, "left over");
  assert.equal(
    (await refusedServe(db)).error,
    `PROSE-ERROR: code=db cannot open database ${db}: ${db}-journal is left without its ` +
      "database; remove it",
  );
  assert.deepEqual(readdirSync(dir), ["prose.db-journal"]);
  Deno.removeSync(`${db}-journal`);
  const first = await spawnServe(["--port", "0", "--db", db], { CELLM_DIR: stateRoot() });
  assert.equal((await first.stop("SIGTERM")).code, 0);
  symlinkSync(join(dir, "elsewhere"), `${db}-wal`);
  assert.equal(
    (await refusedServe(db)).error,
    `PROSE-ERROR: code=db cannot open database ${db}: ${db}-wal is a link or not a regular ` +
      "file; remove it",
  );
  Deno.removeSync(`${db}-wal`);
  writeFileSync(`${db}-wal`, "");
  chmodSync(`${db}-wal`, 0o662);
  assert.equal(
    (await refusedServe(db)).error,
    `PROSE-ERROR: code=db cannot open database ${db}: ${db}-wal is writable by others; remove it`,
  );
  assert.equal(statSync(`${db}-wal`).mode & 0o777, 0o662);
  Deno.removeSync(`${db}-wal`);
  // A directory owned by another user is not the user's own either.
  if (IS_ROOT) {
    const foreign = join(dir, "theirs");
    mkdirSync(foreign, { mode: 0o755 });
    chownSync(foreign, UNPRIVILEGED_ID, UNPRIVILEGED_ID);
    assert.equal(
      (await refusedServe(join(foreign, "prose.db"))).error,
      `PROSE-ERROR: code=db cannot open database ${join(foreign, "prose.db")}: its directory ` +
        "is owned by another user; use a private directory",
    );
    assert.deepEqual(readdirSync(foreign), []);
  }
  const again = await spawnServe(["--port", "0", "--db", db], { CELLM_DIR: stateRoot() });
  assert.equal((await again.stop("SIGTERM")).code, 0);
  assert.equal(existsSync(db), true);
  removeDir(dir);
});

Deno.test("a shared settings table the mirror's upsert cannot write is refused at start-up, untouched (issue 23, point 8)", async () => {
  const dir = makeTempDir("prose-db-table-");
  const cases: [string, string, RegExp][] = [
    [
      "no-unique.db",
      "CREATE TABLE settings (key TEXT, value TEXT NOT NULL, updated_at INTEGER)",
      /: its settings table has no UNIQUE index on key alone, which the upsert needs \(left untouched\)$/,
    ],
    [
      "composite.db",
      "CREATE TABLE settings (key TEXT, value TEXT NOT NULL, updated_at INTEGER, " +
      "app TEXT, UNIQUE (app, key))",
      /: its settings table has no UNIQUE index on key alone, which the upsert needs \(left untouched\)$/,
    ],
    [
      "not-null.db",
      "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER, " +
      "app TEXT NOT NULL)",
      /: its settings column app is NOT NULL with no default \(left untouched\)$/,
    ],
  ];
  for (const [name, table, why] of cases) {
    const path = join(dir, name);
    const db = new DatabaseSync(path);
    db.exec(table);
    db.exec(
      table.includes("app")
        ? "INSERT INTO settings (key, value, updated_at, app) VALUES ('theme', 'dark', 1, 'ui')"
        : "INSERT INTO settings (key, value, updated_at) VALUES ('theme', 'dark', 1)",
    );
    db.close();
    chmodSync(path, 0o644);
    const before = readFileSync(path);
    const r = await refusedServe(path);
    assert.equal(r.code, 1, name);
    assert.ok(r.error.startsWith(`PROSE-ERROR: code=db cannot open database ${path}: `), r.error);
    assert.match(r.error, why, name);
    assert.deepEqual(readFileSync(path), before, `${name}: bytes changed`);
    assert.equal(statSync(path).mode & 0o777, 0o644, `${name}: mode changed`);
  }
  assert.deepEqual(readdirSync(dir).sort(), ["composite.db", "no-unique.db", "not-null.db"]);
  // A unique index on key alone is what the upsert needs: that shared table is used.
  const shared = join(dir, "indexed.db");
  const db = new DatabaseSync(shared);
  db.exec("CREATE TABLE settings (key TEXT, value TEXT NOT NULL, updated_at INTEGER, note TEXT)");
  db.exec("CREATE UNIQUE INDEX settings_key ON settings (key)");
  db.close();
  const child = await spawnServe(["--port", "0", "--db", shared], { CELLM_DIR: stateRoot() });
  assert.equal((await child.stop("SIGTERM")).code, 0);
  removeDir(dir);
});

Deno.test("several serve started at once on a fresh state directory all open the one mirror (issue 23, point 11)", async () => {
  for (let round = 0; round < 3; round++) {
    const root = join(makeTempDir("prose-db-race-"), "cellm"); // R and D do not exist yet
    const starts = await Promise.allSettled(
      Array.from({ length: 6 }, () => spawnServe(["--port", "0"], { CELLM_DIR: root })),
    );
    // Stopped one after another: the last to close its connection is then alone and checkpoints
    // the WAL away (servers closing at the same instant may each leave -wal/-shm to the other).
    const stopped = [];
    for (const s of starts) {
      stopped.push(s.status === "fulfilled" ? await s.value.stop("SIGTERM") : null);
    }
    const failures = starts.flatMap((s) => s.status === "rejected" ? [String(s.reason)] : []);
    assert.deepEqual(failures, [], `round ${round}`);
    for (const r of stopped) assert.equal(r?.code, 0, r?.stderr);
    const dir = join(root, "prose");
    assert.deepEqual(readdirSync(dir), ["prose.db"]);
    assert.equal(statSync(join(dir, "prose.db")).mode & 0o777, 0o600);
    removeDir(join(root, ".."));
  }
});
