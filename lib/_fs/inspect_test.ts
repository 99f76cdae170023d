import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import {
  entryKind,
  existsFollow,
  existsNoFollow,
  isDirectoryFollow,
  isFileFollow,
  isRegularNoFollow,
  isSymlink,
  physicalPath,
} from "./inspect.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

Deno.test("entryKind tells files, directories, links, FIFOs and devices apart", () => {
  const dir = makeTempDir("ctxkit-inspect-");
  writeFileSync(`${dir}/f`, "x");
  mkdirSync(`${dir}/d`);
  symlinkSync(`${dir}/f`, `${dir}/l`);
  symlinkSync(`${dir}/nowhere`, `${dir}/dangling`);
  new Deno.Command("mkfifo", { args: [`${dir}/p`] }).outputSync();
  assert.equal(entryKind(`${dir}/f`), "file");
  assert.equal(entryKind(`${dir}/d`), "directory");
  assert.equal(entryKind(`${dir}/l`), "symlink");
  assert.equal(entryKind(`${dir}/l`, true), "file");
  assert.equal(entryKind(`${dir}/dangling`, true), "absent");
  assert.equal(entryKind(`${dir}/p`), "fifo");
  assert.equal(entryKind("/dev/null"), "char-device");
  assert.equal(entryKind(`${dir}/missing`), "absent");
});

Deno.test("predicates follow links only where their name says so", () => {
  const dir = makeTempDir("ctxkit-inspect-");
  writeFileSync(`${dir}/f`, "x");
  symlinkSync(`${dir}/f`, `${dir}/l`);
  symlinkSync(`${dir}/nowhere`, `${dir}/dangling`);
  assert.equal(isSymlink(`${dir}/l`), true);
  assert.equal(isRegularNoFollow(`${dir}/l`), false);
  assert.equal(isFileFollow(`${dir}/l`), true);
  assert.equal(existsNoFollow(`${dir}/dangling`), true);
  assert.equal(existsFollow(`${dir}/dangling`), false);
  assert.equal(isDirectoryFollow(dir), true);
  assert.equal(physicalPath(`${dir}/l`), `${dir}/f`);
  assert.equal(physicalPath(`${dir}/dangling`), undefined);
});
