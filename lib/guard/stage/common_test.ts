import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";

import { SnapshotMissingError } from "../errors.ts";
import { text } from "../../text.ts";
import { gitPlace, isGitRepo, localStamp, snapshottedTarget } from "./common.ts";
import { git, makeTempDir } from "../../../tests/_helpers.ts";

Deno.test("localStamp is YYYYMMDD-HHMMSS of the local clock, zero-padded", () => {
  assert.equal(localStamp(new Date(2026, 0, 2, 3, 4, 5)), "20260102-030405");
  assert.equal(localStamp(new Date(2026, 11, 31, 23, 59, 59, 999)), "20261231-235959");
});

Deno.test("isGitRepo: git answers in a work tree and inside .git; a plain or missing directory is none", () => {
  const base = makeTempDir("ctxkit-common-");
  mkdirSync(`${base}/plain`);
  mkdirSync(`${base}/repo`);
  git(`${base}/repo`, "init", "-q");
  mkdirSync(`${base}/repo/sub`);
  assert.equal(isGitRepo(`${base}/repo`), true);
  assert.equal(isGitRepo(`${base}/repo/sub`), true);
  assert.equal(isGitRepo(`${base}/repo/.git`), true, "`rev-parse --git-dir` answers there too");
  assert.equal(isGitRepo(`${base}/plain`), false);
  assert.equal(isGitRepo(`${base}/absent`), false);
  writeFileSync(`${base}/file`, "");
  assert.equal(isGitRepo(`${base}/file`), false);
  // One rev-parse answers both questions: inside .git is a repository but no work tree.
  assert.deepEqual(gitPlace(`${base}/repo/sub`), { repo: true, workTree: true });
  assert.deepEqual(gitPlace(`${base}/repo/.git`), { repo: true, workTree: false });
  assert.deepEqual(gitPlace(`${base}/plain`), { repo: false, workTree: false });
});

Deno.test("snapshottedTarget resolves physically and requires a trusted copy in orig/", () => {
  const base = makeTempDir("ctxkit-common-");
  const root = `${base}/root`;
  const runDir = `${base}/run`;
  mkdirSync(`${root}/rules`, { recursive: true });
  mkdirSync(`${runDir}/orig/rules`, { recursive: true });
  writeFileSync(`${runDir}/orig/rules/a.md`, "x");
  writeFileSync(`${root}/rules/a.md`, "y");
  const missing = (rel: string) => text`no snapshot for ${rel} (test)`;
  assert.deepEqual(snapshottedTarget(`${root}/rules/a.md`, root, runDir, missing), {
    arg: `${root}/rules/a.md`,
    abs: `${root}/rules/a.md`,
    rel: "rules/a.md",
  });
  // The copy is reached through a link inside orig/: not trusted.
  mkdirSync(`${base}/elsewhere`);
  writeFileSync(`${base}/elsewhere/b.md`, "x");
  symlinkSync(`${base}/elsewhere`, `${runDir}/orig/linked`);
  mkdirSync(`${root}/linked`);
  for (
    const [f, rel] of [[`${root}/rules/none.md`, "rules/none.md"], [
      `${root}/linked/b.md`,
      "linked/b.md",
    ]]
  ) {
    assert.throws(
      () => snapshottedTarget(f, root, runDir, missing),
      (e: unknown) =>
        e instanceof SnapshotMissingError && e.problem === "no-snapshot" && e.rel === rel &&
        e.runDir === runDir && e.message === `no snapshot for ${rel} (test)`,
    );
  }
});
