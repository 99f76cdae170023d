import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import {
  LinkedComponentError,
  listRegularFiles,
  makeDirsBelow,
  makePrivateDirs,
  removeMadeDirs,
} from "./dirs.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

Deno.test("makePrivateDirs: 0700 directories; links above the trusted base are followed, below refused", () => {
  const base = makeTempDir("ctxkit-dirs-");
  mkdirSync(`${base}/real`);
  symlinkSync(`${base}/real`, `${base}/home`); // a dotfiles-style link above the base
  makePrivateDirs(`${base}/home/b/run/orig`, `${base}/home/b`);
  assert.equal(Deno.statSync(`${base}/real/b/run/orig`).mode! & 0o777, 0o700);
  symlinkSync(`${base}/real`, `${base}/real/b/run/link`);
  assert.throws(
    () => makePrivateDirs(`${base}/home/b/run/link/x`, `${base}/home/b`),
    (e: unknown) => e instanceof LinkedComponentError && e.path === `${base}/home/b/run/link`,
  );
});

Deno.test("listRegularFiles: every regular file below, relative, C-locale order, links skipped", () => {
  const dir = makeTempDir("ctxkit-dirs-");
  mkdirSync(`${dir}/a/b`, { recursive: true });
  for (const f of ["z.md", "a/b/c.md", "ｚ.md", "𝔸.md", "a-b.md"]) {
    writeFileSync(`${dir}/${f}`, "x");
  }
  symlinkSync(`${dir}/z.md`, `${dir}/link.md`);
  symlinkSync(`${dir}/a`, `${dir}/linkdir`);
  assert.deepEqual(listRegularFiles(dir), ["a-b.md", "a/b/c.md", "z.md", "ｚ.md", "𝔸.md"]);
  assert.deepEqual(listRegularFiles(`${dir}/missing`), []);
});

Deno.test("makePrivateDirs: a missing trusted base is created with its ancestors; a linked base is refused", () => {
  const base = makeTempDir("ctxkit-dirs-");
  makePrivateDirs(`${base}/a/b/run/draft`, `${base}/a/b`);
  for (const d of ["a", "a/b", "a/b/run", "a/b/run/draft"]) {
    assert.equal(Deno.lstatSync(`${base}/${d}`).mode! & 0o777, 0o700, d);
  }
  mkdirSync(`${base}/real`);
  symlinkSync(`${base}/real`, `${base}/linked`);
  assert.throws(
    () => makePrivateDirs(`${base}/linked/run`, `${base}/linked`),
    (e: unknown) => e instanceof LinkedComponentError && e.path === `${base}/linked`,
  );
  assert.throws(() => Deno.lstatSync(`${base}/real/run`), Deno.errors.NotFound);
});

Deno.test("makePrivateDirs: a link planted between its lstat and its mkdir is refused, not followed", () => {
  const base = makeTempDir("ctxkit-dirs-");
  mkdirSync(`${base}/b`);
  mkdirSync(`${base}/elsewhere`);
  const deno = Deno as { mkdirSync: typeof Deno.mkdirSync };
  const mkdir = deno.mkdirSync;
  deno.mkdirSync = (path, options) => {
    // The race, made deterministic: someone plants a link right after the component was found
    // absent; the real mkdir then fails with EEXIST.
    if (path === `${base}/b/run`) symlinkSync(`${base}/elsewhere`, path);
    return mkdir(path, options);
  };
  try {
    assert.throws(
      () => makePrivateDirs(`${base}/b/run/orig`, `${base}/b`),
      (e: unknown) => e instanceof LinkedComponentError && e.path === `${base}/b/run`,
    );
  } finally {
    deno.mkdirSync = mkdir;
  }
  assert.deepEqual([...Deno.readDirSync(`${base}/elsewhere`)], []);
});

Deno.test("makeDirsBelow: ordinary directories below the base, one at a time; a link below the base is refused", () => {
  const base = makeTempDir("ctxkit-dirs-");
  mkdirSync(`${base}/root`);
  const made = makeDirsBelow(`${base}/root`, `${base}/root/a/b/c`);
  assert.deepEqual(made, [`${base}/root/a`, `${base}/root/a/b`, `${base}/root/a/b/c`]);
  const probe = `${base}/probe`;
  mkdirSync(probe);
  assert.equal(
    Deno.statSync(`${base}/root/a/b`).mode! & 0o7777,
    Deno.statSync(probe).mode! & 0o7777,
  );
  mkdirSync(`${base}/elsewhere`);
  symlinkSync(`${base}/elsewhere`, `${base}/root/a/link`);
  assert.throws(
    () => makeDirsBelow(`${base}/root`, `${base}/root/a/link/x`),
    (e: unknown) => e instanceof LinkedComponentError && e.path === `${base}/root/a/link`,
  );
  assert.deepEqual([...Deno.readDirSync(`${base}/elsewhere`)], []);
  writeFileSync(`${base}/root/file`, "");
  assert.throws(() => makeDirsBelow(`${base}/root`, `${base}/root/file/x`), /Not a directory/);
  removeMadeDirs(made);
  // The empty ones go, innermost first; a/ holds the link now and stays.
  assert.deepEqual([...Deno.readDirSync(`${base}/root/a`)].map((e) => e.name), ["link"]);
});
