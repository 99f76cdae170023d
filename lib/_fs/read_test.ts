import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { hashFile, openRegular, readHead, ReadRefusedError, readRegular } from "./read.ts";
import { invokingUser, ownPrivate } from "./owner.ts";
import { sha256Hex } from "./sha256.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const refusal = (fn: () => unknown, want: string) =>
  assert.throws(fn, (e: unknown) => e instanceof ReadRefusedError && e.refusal === want);

Deno.test("openRegular never opens a FIFO or a directory, and refuses links on request", () => {
  const dir = makeTempDir("ctxkit-read-");
  new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).outputSync();
  mkdirSync(`${dir}/d`);
  writeFileSync(`${dir}/f`, "text");
  symlinkSync(`${dir}/f`, `${dir}/l`);
  refusal(() => openRegular(`${dir}/fifo`), "not-regular"); // returns at once: never blocks
  refusal(() => readRegular(`${dir}/d`), "not-regular");
  refusal(() => readRegular("/dev/null"), "not-regular");
  refusal(() => readRegular(`${dir}/l`, { follow: false }), "symlink");
  assert.equal(new TextDecoder().decode(readRegular(`${dir}/l`)), "text");
  assert.throws(
    () => readRegular(`${dir}/missing`),
    (e: unknown) => (e as { code?: string }).code === "ENOENT",
  );
});

Deno.test("readRegular refuses above maxBytes; readHead and hashFile read in chunks", () => {
  const dir = makeTempDir("ctxkit-read-");
  const bytes = new Uint8Array(2_500_000).map((_, i) => i % 253);
  writeFileSync(`${dir}/big`, bytes);
  assert.throws(
    () => readRegular(`${dir}/big`, { maxBytes: 1000 }),
    (e: unknown) =>
      e instanceof ReadRefusedError && e.refusal === "too-large" && e.size === 2_500_000,
  );
  assert.deepEqual(readRegular(`${dir}/big`), bytes);
  const head = readHead(`${dir}/big`, 10);
  assert.deepEqual({ bytes: head.bytes, size: head.size }, {
    bytes: bytes.subarray(0, 10),
    size: bytes.length,
  });
  assert.equal(head.info.ino, Deno.statSync(`${dir}/big`).ino);
  assert.deepEqual(hashFile(`${dir}/big`), { sha256: sha256Hex(bytes), size: bytes.length });
  writeFileSync(`${dir}/empty`, "");
  assert.deepEqual(readHead(`${dir}/empty`, 10).bytes.length, 0);
});

Deno.test("openRegular checks the opened file: a FIFO put where a file was looked at never blocks; another user's file is foreign", () => {
  const dir = makeTempDir("ctxkit-read-");
  new Deno.Command("mkfifo", { args: [`${dir}/fifo`] }).outputSync();
  // Opened without a look first (links followed): the open itself must not wait for a writer.
  refusal(() => readRegular(`${dir}/fifo`, { stable: true }), "not-regular");
  writeFileSync(`${dir}/f`, "text");
  const who = invokingUser()!;
  const mine = (info: Deno.FileInfo) => ownPrivate(info, who);
  assert.equal(new TextDecoder().decode(readRegular(`${dir}/f`, { ownedBy: mine })), "text");
  Deno.chmodSync(`${dir}/f`, 0o666); // writable by others: not the user's own
  refusal(() => readRegular(`${dir}/f`, { ownedBy: mine }), "foreign");
  const other = { uid: who.uid + 1, gid: who.gid };
  refusal(() => readRegular(`${dir}/f`, { ownedBy: (i) => ownPrivate(i, other) }), "foreign");
});

Deno.test("openRegular without follow accepts a regular file renamed over the path since the look, never a link", () => {
  const dir = makeTempDir("ctxkit-read-");
  writeFileSync(`${dir}/a`, "new");
  writeFileSync(`${dir}/target`, "outside");
  symlinkSync(`${dir}/target`, `${dir}/l`);
  refusal(() => openRegular(`${dir}/l`, { follow: false }), "symlink");
  const { file, info } = openRegular(`${dir}/a`, { follow: false });
  file.close();
  assert.equal(info.size, 3);
});
