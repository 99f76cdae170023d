// The git gate of context-guard `snapshot` (references/context-guard.md#snapshot): what git is
// asked, literally, and that a failed git call is a failure, never "untracked" (the batches past
// ARG_MAX: tests/stress/guard_git_batches_test.ts).
import assert from "node:assert/strict";
import { appendFileSync, chownSync, mkdirSync, writeFileSync } from "node:fs";

import { DirtyTreeError } from "../errors.ts";
import { errLines, outLines } from "../../../tests/_guard_fixtures.ts";
import { git, IS_ROOT, runTool } from "../../../tests/_helpers.ts";
import { commitAll, gate, gateRepo as repo } from "../../../tests/_git_gate.ts";

Deno.test("git gate: names that are pathspec magic (a?.md, *.md, :!x.md, [a].md) are untracked, taken literally", async () => {
  const { proj, roots } = repo();
  for (const name of ["ab.md", "x.md", "a.md", "y.md"]) {
    writeFileSync(`${proj}/${name}`, `${name}\n`);
  }
  commitAll(proj);
  const magic = ["a?.md", "*.md", ":!x.md", "[a].md"];
  for (const name of magic) writeFileSync(`${proj}/${name}`, "loose\n");
  const r = await gate(roots, magic.map((n) => `${proj}/${n}`));
  assert.equal(r.error, undefined, String(r.error));
  assert.equal(
    r.out[0],
    "SNAPSHOT-ONLY: 4 untracked/git-ignored target(s), no git recovery - the manifest is the only one: a?.md *.md :!x.md [a].md",
  );
  assert.ok(!r.out.some((l) => l.startsWith("GIT-COVERED")), r.out.join("\n"));
  // A tracked file named like magic is tracked, and its own state (not a pattern's) is asked.
  git(proj, "--literal-pathspecs", "add", "--", ":!x.md");
  git(proj, "commit", "-qm", "magic");
  appendFileSync(`${proj}/x.md`, "dirty, but not a target\n");
  const tracked = await gate(roots, [`${proj}/:!x.md`]);
  assert.equal(tracked.error, undefined, String(tracked.error));
  assert.equal(tracked.out[0], "GIT-COVERED: 1 tracked target(s), clean");
});

Deno.test("git gate: a git call that fails (a damaged index) is a failure, exit 3, never 'untracked'", async () => {
  const { proj, roots } = repo();
  writeFileSync(`${proj}/CLAUDE.md`, "rules\n");
  commitAll(proj);
  writeFileSync(`${proj}/.git/index`, "not an index");
  const r = await gate(roots, [`${proj}/CLAUDE.md`]);
  assert.ok(r.error instanceof DirtyTreeError, String(r.error));
  assert.equal(r.error.exitCode, 3);
  assert.match(
    r.error.message,
    /^git cannot answer for .*: .*index.* - refusing to rewrite in place unchecked\.\n/,
  );
  assert.deepEqual(r.out, []);
});

Deno.test("git gate: a dirty file inside a submodule is tracked and dirty, never 'untracked'", async () => {
  const { base, proj, roots } = repo();
  const sub = `${base}/sub`;
  mkdirSync(sub);
  git(sub, "init", "-q");
  writeFileSync(`${sub}/RULES.md`, "sub rules\n");
  commitAll(sub);
  git(proj, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "mod");
  git(proj, "commit", "-qm", "submodule");
  const clean = await gate(roots, [`${proj}/mod/RULES.md`]);
  assert.equal(clean.error, undefined, String(clean.error));
  assert.equal(clean.out[0], "GIT-COVERED: 1 tracked target(s), clean");
  appendFileSync(`${proj}/mod/RULES.md`, "edited\n");
  const dirty = await gate(roots, [`${proj}/mod/RULES.md`]);
  assert.ok(dirty.error instanceof DirtyTreeError, String(dirty.error));
  assert.deepEqual(dirty.error.porcelain, [" M mod"]);
  assert.deepEqual(dirty.out, []);
});

Deno.test("git gate: exported GIT_DIR/GIT_WORK_TREE of another repository do not answer for the layer root", () => {
  const { base, proj } = repo();
  writeFileSync(`${proj}/CLAUDE.md`, "rules\n");
  commitAll(proj);
  appendFileSync(`${proj}/CLAUDE.md`, "uncommitted\n");
  // Another repository tracking a clean CLAUDE.md: asked instead, it would call ours clean.
  const other = `${base}/other`;
  mkdirSync(other);
  git(other, "init", "-q");
  writeFileSync(`${other}/CLAUDE.md`, "rules\n");
  commitAll(other);
  const r = runTool("context-guard", ["snapshot", "CLAUDE.md"], {
    cwd: proj,
    env: {
      HOME: `${base}/home`,
      CLAUDE_PROJECT_DIR: proj,
      GIT_DIR: `${other}/.git`,
      GIT_WORK_TREE: other,
    },
  });
  assert.equal(r.code, 3, r.stdout + r.stderr);
  assert.deepEqual(outLines(r), []);
  assert.deepEqual(errLines(r), [
    "❌ uncommitted changes in TRACKED targets - refusing to rewrite in place:",
    " M CLAUDE.md",
    "   Commit or stash exactly these paths, then re-run (--allow-dirty accepts the risk).",
  ]);
});

Deno.test({
  name:
    "git gate: a repository git refuses as another user's (dubious ownership) is not 'not a git repo': exit 3",
  ignore: !IS_ROOT,
  fn: () => {
    const { base, proj } = repo();
    writeFileSync(`${proj}/CLAUDE.md`, "rules\n");
    commitAll(proj);
    chownSync(proj, 65534, 65534);
    chownSync(`${proj}/.git`, 65534, 65534);
    const r = runTool("context-guard", ["snapshot", "CLAUDE.md"], {
      cwd: proj,
      env: { HOME: `${base}/home`, CLAUDE_PROJECT_DIR: proj },
    });
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.deepEqual(outLines(r), []);
    assert.deepEqual(errLines(r), [
      `❌ git cannot answer for ${proj}: fatal: detected dubious ownership in repository at '${proj}' - refusing to rewrite in place unchecked.`,
      `   Make git accept the repository (for another user's: git config --global --add safe.directory ${proj}), or re-run with --allow-dirty.`,
    ]);
  },
});
