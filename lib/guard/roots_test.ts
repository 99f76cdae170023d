import { deepStrictEqual, throws } from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";

import { CtxkitError } from "../errors.ts";
import { type PhysicalDirs, resolveLogical, resolvePhysical } from "./roots.ts";
import { rootPrefix } from "../paths.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

function dies(fn: () => unknown, message: string) {
  throws(fn, (e) => e instanceof CtxkitError && e.exitCode === 2 && e.message === message);
}

Deno.test("physical resolution: a batch resolves each directory once, as typed", () => {
  const base = makeTempDir("ctxkit-roots-");
  const root = `${base}/root`;
  mkdirSync(`${root}/sub`, { recursive: true });
  for (const f of ["a.md", "b.md"]) writeFileSync(`${root}/sub/${f}`, f);
  symlinkSync(`${root}/sub`, `${base}/lnk`);
  const dirs: PhysicalDirs = new Map();
  deepStrictEqual(
    resolvePhysical(`${base}/lnk/a.md`, root, "project", undefined, dirs).rel,
    "sub/a.md",
  );
  deepStrictEqual([...dirs], [[`${base}/lnk`, `${root}/sub`]]);
  // The batch's answer stands for the rest of the batch: the link moved away meanwhile is not
  // looked at again (a new batch would see it).
  Deno.removeSync(`${base}/lnk`);
  deepStrictEqual(
    resolvePhysical(`${base}/lnk/b.md`, root, "project", undefined, dirs).abs,
    `${root}/sub/b.md`,
  );
  dies(() => resolvePhysical(`${base}/lnk/b.md`, root), `cannot resolve ${base}/lnk/b.md`);
  // An unresolvable directory is remembered as such.
  const missing: PhysicalDirs = new Map();
  dies(
    () => resolvePhysical(`${root}/no/a.md`, root, "project", undefined, missing),
    `cannot resolve ${root}/no/a.md`,
  );
  deepStrictEqual([...missing], [[`${root}/no`, undefined]]);
});

Deno.test("physical resolution: links resolved in the directory, refused at the file", () => {
  const base = makeTempDir("ctxkit-roots-");
  const root = `${base}/root`;
  mkdirSync(`${root}/sub`, { recursive: true });
  writeFileSync(`${root}/sub/a.md`, "a");
  symlinkSync(`${root}/sub`, `${base}/lnk`);
  deepStrictEqual(resolvePhysical(`${base}/lnk/a.md`, root), {
    arg: `${base}/lnk/a.md`,
    abs: `${root}/sub/a.md`,
    rel: "sub/a.md",
  });
  symlinkSync(`${root}/sub/a.md`, `${root}/l.md`);
  dies(
    () => resolvePhysical(`${root}/l.md`, root),
    `symbolic-link target: ${root}/l.md - name the intended real file explicitly: ${root}/sub/a.md`,
  );
  symlinkSync(`${base}/nowhere`, `${root}/dangling.md`);
  dies(
    () => resolvePhysical(`${root}/dangling.md`, root),
    `symbolic-link target: ${root}/dangling.md - name the intended real file explicitly`,
  );
  dies(() => resolvePhysical(`${root}/no/a.md`, root), `cannot resolve ${root}/no/a.md`);
  writeFileSync(`${base}/out.md`, "o");
  dies(
    () => resolvePhysical(`${base}/out.md`, root),
    `${base}/out.md is outside the project root ${root}`,
  );
  dies(
    () => resolvePhysical(`${root}/../rootx/a.md`, root),
    `cannot resolve ${root}/../rootx/a.md`,
  );
});

Deno.test("logical resolution keeps links and normalises lexically", () => {
  const base = makeTempDir("ctxkit-roots-");
  mkdirSync(`${base}/real`);
  symlinkSync(`${base}/real`, `${base}/root`);
  // Logically under the root, physically elsewhere: passes here (the stage refuses it later).
  deepStrictEqual(resolveLogical(`${base}/root/./x/../a.md`.replace("/x/..", ""), `${base}/root`), {
    arg: `${base}/root/./a.md`,
    abs: `${base}/root/a.md`,
    rel: "a.md",
  });
  dies(
    () => resolveLogical(`${base}/real/a.md`, `${base}/root`),
    `${base}/real/a.md is outside the snapshot root ${base}/root`,
  );
  deepStrictEqual(rootPrefix("/"), "/");
  deepStrictEqual(rootPrefix("/a"), "/a/");
});
