import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";

import { listDirectory, problemLine, PRUNE_NAMES, walk, type WalkVisitor } from "./walk.ts";
import { makeTempDir } from "../../tests/_helpers.ts";
import { writeRawName } from "../../tests/context_scan_fixtures.ts";

const statSync = Deno.statSync;
const md: WalkVisitor<null> = { child: () => null, file: (_p, name) => name.endsWith(".md") };

function tree(): string {
  const root = makeTempDir("ctxkit-walk-");
  for (const dir of ["a/b", "build", "other"]) mkdirSync(`${root}/${dir}`, { recursive: true });
  writeFileSync(`${root}/a/b/x.md`, "x");
  writeFileSync(`${root}/build/y.md`, "y");
  writeFileSync(`${root}/other/z.md`, "z");
  symlinkSync(`${root}/other`, `${root}/a/linked`);
  symlinkSync(`${root}/a`, `${root}/a/b/up`);
  symlinkSync(`${root}/other/z.md`, `${root}/a/file.md`);
  return root;
}

Deno.test("PRUNE_NAMES holds the 15 names", () => {
  assert.equal(PRUNE_NAMES.size, 15);
});

Deno.test("followed walk: logical paths, links entered, cycles reported once per link, prune below start", () => {
  const root = tree();
  const start = `${root}/a`;
  const result = walk(start, statSync(start), { follow: true, prune: true }, md, null);
  assert.deepEqual(result.files.sort(), [
    `${start}/b/x.md`,
    `${start}/file.md`,
    `${start}/linked/z.md`,
  ]);
  assert.deepEqual(result.problems.map(problemLine), [
    `File system loop detected; '${start}/b/up' is part of the same file system loop as '${start}'.`,
  ]);
  const whole = walk(root, statSync(root), { follow: true, prune: true }, md, null);
  assert.ok(!whole.files.includes(`${root}/build/y.md`));
  // the start itself is never pruned
  const build = walk(
    `${root}/build`,
    statSync(`${root}/build`),
    { follow: true, prune: true },
    md,
    null,
  );
  assert.deepEqual(build.files, [`${root}/build/y.md`]);
});

Deno.test("physical walk: link entries neither entered nor counted", () => {
  const root = tree();
  const start = `${root}/a`;
  const result = walk(start, statSync(start), { follow: false, prune: false }, md, null);
  assert.deepEqual(result.files, [`${start}/b/x.md`]);
  assert.deepEqual(result.problems, []);
});

Deno.test("listDirectory: one level, no dot-names, links to regular files counted", () => {
  const root = tree();
  writeFileSync(`${root}/a/.hidden`, "h");
  const listed = listDirectory(`${root}/a`);
  assert.deepEqual(listed.files, [`${root}/a/file.md`]);
  assert.deepEqual(listDirectory(`${root}/missing`).problems.map((p) => p.kind), ["unreadable"]);
});

Deno.test("walk: listings are shared through `listings`, and `store` bounds what is kept", () => {
  const root = tree();
  const listings = new Map<string, Deno.DirEntry[]>();
  const store = (dir: string) => dir.endsWith("/other");
  walk(root, statSync(root), { follow: false, prune: true, listings, store }, md, null);
  assert.deepEqual([...listings.keys()], [`${root}/other`]);
  // a later walk reads the stored listing, not the directory: a file removed since is still listed
  Deno.removeSync(`${root}/other/z.md`);
  const again = walk(
    `${root}/other`,
    statSync(`${root}/other`),
    {
      follow: false,
      prune: true,
      listings,
    },
    md,
    null,
  );
  assert.deepEqual(again.files, [`${root}/other/z.md`]);
});

Deno.test("walk and listDirectory: a would-be row whose name is not valid UTF-8 is a problem, not a row", () => {
  const root = makeTempDir("ctxkit-walk-");
  writeRawName(root, "bad\\377.md", "x");
  writeRawName(root, "bad\\377.txt", "x");
  Deno.writeTextFileSync(`${root}/ok.md`, "ok");
  const result = walk(root, statSync(root), { follow: false, prune: false }, md, null);
  assert.deepEqual(result.files, [`${root}/ok.md`]);
  // only the wanted `.md` name is a problem; the `.txt` is never a row
  assert.deepEqual(result.problems.map(problemLine), [
    `'${root}/bad\uFFFD.md': name is not valid UTF-8`,
  ]);
  const listed = listDirectory(root);
  assert.deepEqual(listed.files, [`${root}/ok.md`]);
  assert.deepEqual(listed.problems.map((p) => p.kind), ["lossy", "lossy"]);
});
