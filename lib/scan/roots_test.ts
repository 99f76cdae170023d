import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { logicalDirectory, memorySlugs, resolveProjectRoot } from "./roots.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

Deno.test("memorySlugs: original slug first, Claude Code's slug only when different", () => {
  assert.deepEqual(memorySlugs("/home/u/demo"), ["-home-u-demo"]);
  assert.deepEqual(memorySlugs("/home/u/my_app.v2"), ["-home-u-my_app.v2", "-home-u-my-app-v2"]);
  assert.deepEqual(memorySlugs("/a b/é"), ["-a b-é", "-a-b--"]);
  // every UTF-16 code unit: an astral character becomes two dashes
  assert.deepEqual(memorySlugs("/𝔸"), ["-𝔸", "---"]);
});

Deno.test("resolveProjectRoot: --root is normalised logically (links kept, `..` lexical)", () => {
  const base = makeTempDir("ctxkit-roots-");
  Deno.mkdirSync(`${base}/real/repo`, { recursive: true });
  Deno.symlinkSync(`${base}/real`, `${base}/lnk`);
  assert.equal(resolveProjectRoot(`${base}/lnk/repo/..`), `${base}/lnk`);
  assert.equal(resolveProjectRoot(`${base}//real/./repo/`), `${base}/real/repo`);
});

Deno.test("resolveProjectRoot: a --root that is not a directory is a UsageError with the value as given", () => {
  const base = makeTempDir("ctxkit-roots-");
  Deno.writeTextFileSync(`${base}/file`, "x");
  for (const root of [`${base}/file`, `${base}/missing`]) {
    assert.throws(
      () => resolveProjectRoot(root),
      (e: unknown) =>
        e instanceof UsageError && e.exitCode === 2 && e.message === `not a directory: ${root}`,
    );
  }
});

Deno.test("logicalDirectory: the lexical path when it is a directory, else the physical one", () => {
  const base = makeTempDir("ctxkit-roots-");
  Deno.mkdirSync(`${base}/a/b`, { recursive: true });
  Deno.mkdirSync(`${base}/x`);
  Deno.symlinkSync(`${base}/a/b`, `${base}/x/lnk`);
  // lexically `x/lnk/..` is `x`, a directory: kept
  assert.equal(logicalDirectory("x/lnk/..", base), `${base}/x`);
  // lexically `x/lnk/../b` is `x/b`, absent; physically it is `a/b`
  assert.equal(logicalDirectory(`${base}/x/lnk/../b`, base), `${base}/a/b`);
});
