import assert from "node:assert/strict";
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import {
  createFileExclusive,
  DestinationRefusedError,
  fsyncDirectories,
  fsyncFiles,
  prepareFileAtomic,
  STALE_TEMP_MS,
  sweepTemps,
  syncPendingWrites,
  tempPrefix,
  writeFileAtomic,
} from "./write.ts";
import { sha256Hex } from "./sha256.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const sweepDeadTemps = (dir: string) => sweepTemps(dir);

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("writeFileAtomic sweeps the temp files a killed writer left next to the file", async () => {
  const dir = makeTempDir("ctxkit-atomic-");
  const path = `${dir}/CLAUDE.md`;
  writeFileSync(path, "old\n");
  const dead = `${tempPrefix(path)}${await deadPid()}-0123456789ab`;
  const live = `${tempPrefix(path)}${Deno.pid}-0123456789ab`; // a writer still running (us)
  const other = `${tempPrefix(`${dir}/other.md`)}${await deadPid()}-0123456789ab`; // dead too
  const odd = `${tempPrefix(path)}notapid-0123456789ab`; // not our naming
  for (const name of [dead, live, other, odd]) writeFileSync(`${dir}/${name}`, "partial");
  mkdirSync(`${dir}/${tempPrefix(path)}999999998-0123456789ab`); // not a regular file
  writeFileAtomic(path, "new\n");
  assert.equal(readFileSync(path, "utf8"), "new\n");
  assert.deepEqual(
    readdirSync(dir).sort(),
    ["CLAUDE.md", live, `${tempPrefix(path)}999999998-0123456789ab`, odd].sort(),
  );
});

Deno.test("sweepDeadTemps never follows or removes a symlink, and tolerates a missing directory", async () => {
  const dir = makeTempDir("ctxkit-atomic-");
  const path = `${dir}/a.md`;
  const target = `${dir}/keep.txt`;
  writeFileSync(target, "keep");
  const link = `${dir}/${tempPrefix(path)}${await deadPid()}-0123456789ab`;
  symlinkSync(target, link);
  assert.equal(sweepDeadTemps(dir), 0);
  assert.equal(readFileSync(target, "utf8"), "keep");
  assert.deepEqual(readdirSync(dir).sort(), [link.slice(dir.length + 1), "keep.txt"].sort());
  assert.equal(sweepDeadTemps(`${dir}/missing`), 0);
});

Deno.test("sweepDeadTemps: a temp older than STALE_TEMP_MS goes even when its pid looks alive", () => {
  const dir = makeTempDir("ctxkit-atomic-");
  const prefix = tempPrefix(`${dir}/a.md`);
  const old = `${prefix}1-0123456789ab`; // pid 1 is alive
  const fresh = `${prefix}1-ba9876543210`;
  const mine = `${prefix}${Deno.pid}-0123456789ab`;
  for (const name of [old, fresh, mine]) writeFileSync(`${dir}/${name}`, "partial");
  const past = new Date(Date.now() - STALE_TEMP_MS - 5_000);
  for (const name of [old, mine]) utimesSync(`${dir}/${name}`, past, past);
  assert.equal(sweepDeadTemps(dir), 1);
  assert.deepEqual(readdirSync(dir).sort(), [fresh, mine].sort());
});

Deno.test("under narrow grants (no /proc access) only age counts", () => {
  const dir = makeTempDir("ctxkit-atomic-");
  const script = `${dir}/probe.ts`;
  writeFileSync(
    script,
    `import { sweepTemps } from ${JSON.stringify(new URL("./write.ts", import.meta.url).href)};\n` +
      `console.log(sweepTemps(Deno.args[0]));\n`,
  );
  const temps = `${dir}/t`;
  mkdirSync(temps);
  writeFileSync(`${temps}/.a.md.ctxkit-tmp-999999999-0123456789ab`, "dead pid, fresh");
  writeFileSync(`${temps}/.a.md.ctxkit-tmp-999999998-0123456789ab`, "dead pid, old");
  utimesSync(`${temps}/.a.md.ctxkit-tmp-999999998-0123456789ab`, new Date(0), new Date(0));
  const r = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-read", "--allow-write", "--allow-run=git", script, temps],
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
  assert.equal(new TextDecoder().decode(r.stdout), "1\n");
  assert.deepEqual(readdirSync(temps), [".a.md.ctxkit-tmp-999999999-0123456789ab"]);
});

Deno.test("writeFileAtomic refuses a link or a non-regular destination, before and without writing", () => {
  const dir = makeTempDir("ctxkit-write-");
  writeFileSync(`${dir}/target`, "keep");
  symlinkSync(`${dir}/target`, `${dir}/link`);
  mkdirSync(`${dir}/sub`);
  for (const [name, kind] of [["link", "symlink"], ["sub", "not-regular"]] as const) {
    assert.throws(
      () => writeFileAtomic(`${dir}/${name}`, "new"),
      (e: unknown) => e instanceof DestinationRefusedError && e.kind === kind,
    );
  }
  assert.equal(readFileSync(`${dir}/target`, "utf8"), "keep");
  assert.deepEqual(readdirSync(dir).sort(), ["link", "sub", "target"]);
});

Deno.test("writeFileAtomic: mode exact or umask-filtered, content from text, bytes or a file", () => {
  const dir = makeTempDir("ctxkit-write-");
  const w = writeFileAtomic(`${dir}/a`, "hello", { mode: 0o640, exactMode: true });
  assert.deepEqual(w, { size: 5, sha256: sha256Hex(new TextEncoder().encode("hello")) });
  assert.equal(Deno.statSync(`${dir}/a`).mode! & 0o777, 0o640);
  writeFileAtomic(`${dir}/b`, new Uint8Array([1, 2, 3]));
  assert.equal(Deno.statSync(`${dir}/b`).mode! & 0o777, 0o600);
  const big = new Uint8Array(3 * 1024 * 1024 + 7).map((_, i) => i % 251);
  writeFileSync(`${dir}/src`, big);
  const copied = writeFileAtomic(`${dir}/c`, { copyFrom: `${dir}/src` });
  assert.deepEqual({ size: copied.size, sha256: copied.sha256 }, {
    size: big.length,
    sha256: sha256Hex(big),
  });
  assert.equal(copied.source?.size, big.length);
  assert.deepEqual(new Uint8Array(readFileSync(`${dir}/c`)), big);
});

Deno.test("writeFileAtomic: a beforeRename veto removes the temp and keeps the old bytes", () => {
  const dir = makeTempDir("ctxkit-write-");
  writeFileSync(`${dir}/f`, "old");
  assert.throws(() =>
    writeFileAtomic(`${dir}/f`, "new", {
      tempPrefix: ".f.tmp-",
      beforeRename: () => {
        throw new Error("veto");
      },
    }), /veto/);
  assert.equal(readFileSync(`${dir}/f`, "utf8"), "old");
  assert.deepEqual(readdirSync(dir), ["f"]);
});

Deno.test("createFileExclusive never writes over anything, a dangling link included", () => {
  const dir = makeTempDir("ctxkit-write-");
  symlinkSync(`${dir}/elsewhere`, `${dir}/dangling`);
  writeFileSync(`${dir}/there`, "keep");
  for (const name of ["dangling", "there"]) {
    assert.throws(
      () => createFileExclusive(`${dir}/${name}`, "x", 0o600),
      (e: unknown) => (e as { code?: string }).code === "EEXIST",
    );
  }
  assert.equal(readdirSync(dir).includes("elsewhere"), false);
  createFileExclusive(`${dir}/new`, "x", 0o640);
  assert.equal(Deno.statSync(`${dir}/new`).mode! & 0o777, 0o640);
});

// Deno.test's op and resource sanitizers fail a test that ends with a sync still running or a
// file still open: these tests also hold that a batch settles every sync before it answers.
Deno.test("fsyncFiles syncs a batch larger than its concurrency and skips what is not a regular file", async () => {
  const dir = makeTempDir();
  const paths: string[] = [];
  for (let i = 0; i < 100; i++) {
    paths.push(`${dir}/f${i}`);
    writeFileSync(paths[i], `file ${i}\n`);
  }
  mkdirSync(`${dir}/sub`);
  await fsyncFiles([...paths, `${dir}/sub`]);
  assert.equal(readFileSync(paths[99], "utf8"), "file 99\n");
  await fsyncFiles([]);
});

Deno.test({
  name: "fsyncFiles rejects with the failure of a missing file, after the rest are synced",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = makeTempDir();
    const paths = Array.from({ length: 300 }, (_, i) => `${dir}/f${i}`);
    for (const p of paths) writeFileSync(p, "x");
    paths.unshift(`${dir}/missing`);
    // Descriptors open on the batch's files (other tests of the process open theirs elsewhere).
    const openHere = () =>
      [...Deno.readDirSync("/proc/self/fd")].filter((fd) => {
        try {
          return Deno.readLinkSync(`/proc/self/fd/${fd.name}`).startsWith(`${dir}/`);
        } catch {
          return false; // closed meanwhile
        }
      }).length;
    await assert.rejects(() => fsyncFiles(paths), Deno.errors.NotFound);
    // No sync of the batch is still running: each holds its file open while it runs.
    assert.equal(openHere(), 0);
  },
});

Deno.test("fsyncDirectories ignores a directory it cannot sync", async () => {
  const dir = makeTempDir();
  mkdirSync(`${dir}/a`);
  await fsyncDirectories([dir, `${dir}/a`, `${dir}/missing`]);
});

Deno.test("syncPendingWrites syncs a batch of prepared writes, which then commit in order", async () => {
  const dir = makeTempDir();
  writeFileSync(`${dir}/a`, "old a\n");
  const pending = [
    prepareFileAtomic(`${dir}/a`, "new a\n", { syncDirectory: false }),
    undefined,
    prepareFileAtomic(`${dir}/b`, "new b\n", { syncDirectory: false }),
  ];
  assert.equal(readFileSync(`${dir}/a`, "utf8"), "old a\n");
  await syncPendingWrites(pending);
  for (const p of pending) p?.commit();
  assert.equal(readFileSync(`${dir}/a`, "utf8"), "new a\n");
  assert.equal(readFileSync(`${dir}/b`, "utf8"), "new b\n");
  assert.deepEqual(readdirSync(dir).sort(), ["a", "b"]);
});
