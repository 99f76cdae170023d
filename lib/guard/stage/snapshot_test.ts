import assert from "node:assert/strict";
import process from "node:process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";

import { UsageError } from "../../errors.ts";
import { DirtyTreeError, PathRefusedError } from "../errors.ts";
import { collectingReporter } from "../report.ts";
import { stageSnapshot } from "./snapshot.ts";
import { git, makeTempDir } from "../../../tests/_helpers.ts";

const modeOf = (p: string) => Deno.statSync(p).mode! & 0o7777;
const read = (p: string) => readFileSync(p, "utf8");
const NOW = new Date(2026, 9, 12, 14, 3, 7);

/** A committed git project with `CLAUDE.md` and `rules/a.md`. */
function gitProject(): { base: string; root: string } {
  const base = makeTempDir("ctxkit-ssnap-");
  const root = `${base}/proj`;
  mkdirSync(`${root}/rules`, { recursive: true });
  writeFileSync(`${root}/CLAUDE.md`, "NEVER 1\n");
  writeFileSync(`${root}/rules/a.md`, "ALWAYS 2\n");
  git(root, "init", "-q");
  git(root, "add", "-A");
  git(root, "commit", "-qm", "init");
  return { base, root };
}

Deno.test("stageSnapshot copies each target owner-only into a fresh run dir and prints its lines", async () => {
  const { root } = gitProject();
  Deno.chmodSync(`${root}/rules/a.md`, 0o640);
  const out = collectingReporter();
  const files = [`${root}/rules/a.md`, `${root}/CLAUDE.md`, `${root}/rules/a.md`];
  const r = await stageSnapshot({ projectDir: root, files, now: NOW }, out);
  const runDir = `${root}/.claude/reports/20261012-140307_text-optimize`;
  assert.equal(r.runDir, runDir);
  assert.equal(r.root, root);
  assert.deepEqual(out.lines.map((l) => `${l.stream}: ${l.text}`), [
    `stdout: ROOT: ${root}`,
    "stdout: SNAPSHOT: 3 files",
    "stdout:   rules/a.md",
    "stdout:   CLAUDE.md",
    "stdout:   rules/a.md",
    `stdout: RUN_DIR: ${runDir}`,
  ]);
  assert.equal(read(`${runDir}/orig/CLAUDE.md`), "NEVER 1\n");
  assert.equal(read(`${runDir}/orig/rules/a.md`), "ALWAYS 2\n");
  for (const copy of ["CLAUDE.md", "rules/a.md"]) {
    assert.equal(modeOf(`${runDir}/orig/${copy}`), 0o600);
  }
  for (const dir of [runDir, `${runDir}/orig`, `${runDir}/orig/rules`]) {
    assert.equal(modeOf(dir), 0o700);
  }
  // What the manifest needs: each distinct rel's mode, size and hash as copied.
  assert.deepEqual([...r.records.keys()].sort(), ["CLAUDE.md", "rules/a.md"]);
  assert.equal(r.records.get("rules/a.md")?.mode, 0o640);
  assert.equal(r.records.get("CLAUDE.md")?.written?.size, 8);
  // .gitignore created with the line once; the same second's next run gets -2.
  assert.equal(read(`${root}/.gitignore`), ".claude/reports/\n");
  assert.equal(modeOf(`${root}/.gitignore`), 0o666 & ~process.umask());
  const again = await stageSnapshot({
    projectDir: root,
    files: [`${root}/CLAUDE.md`],
    now: NOW,
    allowDirty: true,
  }, collectingReporter());
  assert.equal(again.runDir, `${runDir}-2`);
  assert.equal(read(`${root}/.gitignore`), ".claude/reports/\n");
  // A name taken by anything, a dangling link included, moves on to the next suffix.
  const later = `${root}/.claude/reports/20261012-140308_text-optimize`;
  symlinkSync(`${root}/nowhere`, later);
  const third = await stageSnapshot({
    projectDir: root,
    files: [`${root}/CLAUDE.md`],
    now: new Date(NOW.getTime() + 1000),
    allowDirty: true,
  }, collectingReporter());
  assert.equal(third.runDir, `${later}-2`);
  assert.equal(existsSync(`${root}/nowhere`), false);
});

Deno.test("stageSnapshot appends the ignore line newline-safe and keeps the file's mode", async () => {
  const { root } = gitProject();
  writeFileSync(`${root}/.gitignore`, "node_modules");
  Deno.chmodSync(`${root}/.gitignore`, 0o604);
  await stageSnapshot(
    { projectDir: root, files: [`${root}/CLAUDE.md`], allowDirty: true, now: NOW },
    collectingReporter(),
  );
  assert.equal(read(`${root}/.gitignore`), "node_modules\n.claude/reports/\n");
  assert.equal(modeOf(`${root}/.gitignore`), 0o604);
});

Deno.test("stageSnapshot's clean-tree gate: dirty or untracked targets, or no repository, exit 3 with nothing written", async () => {
  const { root } = gitProject();
  writeFileSync(`${root}/CLAUDE.md`, "changed\n");
  writeFileSync(`${root}/new.md`, "untracked\n");
  await assert.rejects(
    async () =>
      await stageSnapshot({
        projectDir: root,
        files: [`${root}/CLAUDE.md`, `${root}/new.md`, `${root}/rules/a.md`],
      }, collectingReporter()),
    (e: unknown) => {
      assert.ok(e instanceof DirtyTreeError, String(e));
      assert.equal(e.exitCode, 3);
      assert.equal(e.root, root);
      assert.deepEqual(e.porcelain, [" M CLAUDE.md", "?? new.md"]);
      assert.equal(
        e.message,
        "uncommitted changes in the optimize targets - refusing to rewrite in place:\n" +
          " M CLAUDE.md\n?? new.md\n" +
          "   Commit or stash them, or re-run with --allow-dirty.",
      );
      return true;
    },
  );
  assert.equal(existsSync(`${root}/.claude`), false);
  assert.equal(existsSync(`${root}/.gitignore`), false);
  // The clean file alone passes the gate.
  await stageSnapshot(
    { projectDir: root, files: [`${root}/rules/a.md`], now: NOW },
    collectingReporter(),
  );

  const plain = `${makeTempDir("ctxkit-ssnap-")}/plain`;
  mkdirSync(plain);
  writeFileSync(`${plain}/a.md`, "x");
  await assert.rejects(
    () => stageSnapshot({ projectDir: plain, files: [`${plain}/a.md`] }, collectingReporter()),
    (e: unknown) =>
      e instanceof DirtyTreeError && e.exitCode === 3 && e.porcelain.length === 0 &&
      e.message ===
        `${plain} is not a git repository - no recoverable pre-state.\n` +
          "   Commit the targets under git, or re-run with --allow-dirty to accept the risk.",
  );
  assert.deepEqual(readdirSync(plain), ["a.md"]);
  // --allow-dirty outside git: no .gitignore is touched.
  await stageSnapshot(
    { projectDir: plain, files: [`${plain}/a.md`], allowDirty: true, now: NOW },
    collectingReporter(),
  );
  assert.deepEqual(readdirSync(plain).sort(), [".claude", "a.md"]);
});

Deno.test("stageSnapshot refuses bad targets and run dirs before writing anything", async () => {
  const { base, root } = gitProject();
  const refused = async (files: string[], check: (e: unknown) => boolean, runDir?: string) => {
    await assert.rejects(
      async () =>
        await stageSnapshot(
          { projectDir: root, files, runDir, allowDirty: true },
          collectingReporter(),
        ),
      check,
    );
    assert.equal(existsSync(`${root}/.claude`), false);
  };
  await assert.rejects(
    () => stageSnapshot({ projectDir: root, files: [] }, collectingReporter()),
    (e: unknown) => e instanceof UsageError && e.message === "snapshot needs at least one file",
  );
  refused(
    [`${root}/rules`],
    (e) =>
      e instanceof PathRefusedError && e.reason === "not-a-file" &&
      e.message === `not a file: ${root}/rules`,
  );
  symlinkSync(`${root}/CLAUDE.md`, `${root}/link.md`);
  refused([`${root}/link.md`], (e) => e instanceof PathRefusedError && e.reason === "symlink");
  writeFileSync(`${base}/outside.md`, "x");
  refused(
    [`${base}/outside.md`],
    (e) =>
      e instanceof PathRefusedError &&
      e.message === `${base}/outside.md is outside the project root ${root}`,
  );
  mkdirSync(`${base}/exists`);
  refused(
    [`${root}/CLAUDE.md`],
    (e) =>
      e instanceof PathRefusedError && e.reason === "exists" &&
      e.message === `snapshot directory already exists: ${base}/exists`,
    `${base}/exists`,
  );
  mkdirSync(`${base}/real`);
  symlinkSync(`${base}/real`, `${base}/linked`);
  refused(
    [`${root}/CLAUDE.md`],
    (e) =>
      e instanceof PathRefusedError && e.reason === "linked-component" &&
      e.message === `symbolic-link snapshot path: ${base}/linked`,
    `${base}/linked/run`,
  );
  assert.deepEqual(readdirSync(`${base}/real`), []);
  // A .gitignore that is not a regular file is refused before the run dir exists.
  mkdirSync(`${root}/.gitignore`);
  refused(
    [`${root}/CLAUDE.md`],
    (e) =>
      e instanceof PathRefusedError && e.reason === "special-file" &&
      e.message === `refusing to update ignore file that is not a regular file: ${root}/.gitignore`,
  );
  Deno.removeSync(`${root}/.gitignore`);
  symlinkSync(`${base}/outside.md`, `${root}/.gitignore`);
  refused(
    [`${root}/CLAUDE.md`],
    (e) =>
      e instanceof PathRefusedError && e.reason === "symlink" &&
      e.message === `refusing to update symbolic-link ignore file: ${root}/.gitignore`,
  );
  assert.equal(read(`${base}/outside.md`), "x");
});

Deno.test("stageSnapshot for context-guard: links checked only from B down, dotfiles links by content, no linked dirs below the root", async () => {
  const base = makeTempDir("ctxkit-ssnap-");
  const dotfiles = `${base}/dotfiles`;
  mkdirSync(dotfiles);
  symlinkSync(dotfiles, `${base}/claude-link`); // ~/.claude is a link to a dotfiles repo
  const g = `${base}/claude-link`;
  const b = `${g}/backups`;
  writeFileSync(`${base}/real-claude.md`, "NEVER 9\n");
  symlinkSync(`${base}/real-claude.md`, `${g}/CLAUDE.md`);
  const out = collectingReporter();
  const r = await stageSnapshot({
    projectDir: g,
    files: [`${g}/CLAUDE.md`],
    allowDirty: true,
    allowLinks: true,
    runDir: `${b}/run`,
    linkCheckBase: b,
    rootName: "global",
    now: NOW,
  }, out);
  assert.equal(r.root, dotfiles, "T is the physical root");
  assert.deepEqual(r.records.get("CLAUDE.md")?.linkTarget, `${base}/real-claude.md`);
  assert.equal(read(`${b}/run/orig/CLAUDE.md`), "NEVER 9\n");
  // Without allowLinks the same link is refused.
  await assert.rejects(
    async () =>
      await stageSnapshot({
        projectDir: g,
        files: [`${g}/CLAUDE.md`],
        allowDirty: true,
        runDir: `${b}/run2`,
        rootName: "global",
      }, collectingReporter()),
    (e: unknown) => e instanceof PathRefusedError && e.reason === "symlink",
  );
  // Below B a link is refused even so: at the run dir itself, or between B and it.
  mkdirSync(`${base}/elsewhere`);
  symlinkSync(`${base}/elsewhere`, `${b}/linked-run`);
  for (const runDir of [`${b}/linked-run`, `${b}/linked-run/deeper`]) {
    await assert.rejects(
      async () =>
        await stageSnapshot({
          projectDir: g,
          files: [`${g}/CLAUDE.md`],
          allowDirty: true,
          allowLinks: true,
          runDir,
          linkCheckBase: b,
          rootName: "global",
        }, collectingReporter()),
      (e: unknown) =>
        e instanceof PathRefusedError &&
        e.message === `symbolic-link snapshot path: ${b}/linked-run`,
    );
  }
  assert.deepEqual(readdirSync(`${base}/elsewhere`), []);
  // The same link above B is refused when the check is not limited to B and below.
  writeFileSync(`${g}/plain.md`, "x");
  await assert.rejects(
    async () =>
      await stageSnapshot({
        projectDir: g,
        files: [`${g}/plain.md`],
        allowDirty: true,
        runDir: `${b}/run3`,
      }, collectingReporter()),
    (e: unknown) =>
      e instanceof PathRefusedError && e.message === `symbolic-link snapshot path: ${g}`,
  );
  assert.equal(existsSync(`${b}/run3`), false);
  // A file reached through a linked directory below the logical root.
  const proj = `${base}/proj`;
  mkdirSync(`${proj}/real`, { recursive: true });
  writeFileSync(`${proj}/real/a.md`, "x");
  symlinkSync(`${proj}/real`, `${proj}/via`);
  await assert.rejects(
    async () =>
      await stageSnapshot({
        projectDir: proj,
        files: [`${proj}/via/a.md`],
        allowDirty: true,
        noLinkedDirsBelow: proj,
        now: NOW,
      }, collectingReporter()),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "linked-component" &&
      e.message ===
        `${proj}/via/a.md passes through the symbolic link ${proj}/via - name the real path`,
  );
  assert.equal(existsSync(`${proj}/.claude`), false);
});
