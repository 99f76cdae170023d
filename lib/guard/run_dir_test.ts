import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";

import { PathRefusedError, SnapshotMissingError } from "./errors.ts";
import {
  draftRecordPath,
  isTrustedCopy,
  linkedDirBelow,
  linkFreeChain,
  makeRunDirs,
  noSnapshotDir,
  prepareReplace,
  replaceFile,
  requireRunDir,
  requireSnapshotDir,
  snapshotCopyPath,
  writePathProblem,
} from "./run_dir.ts";
import { makeTempDir } from "../../tests/_helpers.ts";
import { syncPendingWrites } from "../_fs/write.ts";

const modeOf = (p: string) => Deno.statSync(p).mode! & 0o7777;

Deno.test("a run dir's layout: orig/<rel> copies and draft/<rel>.sha256 records", () => {
  assert.equal(snapshotCopyPath("/b/r", "a/b.md"), "/b/r/orig/a/b.md");
  assert.equal(draftRecordPath("/b/r", "a/b.md"), "/b/r/draft/a/b.md.sha256");
  const e = noSnapshotDir("/b/r");
  assert.ok(e instanceof SnapshotMissingError);
  assert.equal(e.problem, "no-snapshot-dir");
  assert.equal(e.runDir, "/b/r");
  assert.equal(e.message, "no snapshot dir: /b/r/orig");
});

Deno.test("requireSnapshotDir refuses a linked run dir or orig/, then a run dir without orig/", () => {
  const base = makeTempDir("ctxkit-rundir-");
  mkdirSync(`${base}/real/orig`, { recursive: true });
  requireSnapshotDir(`${base}/real`);
  symlinkSync(`${base}/real`, `${base}/linked`);
  for (const given of [`${base}/linked`, `${base}/linked/`]) {
    assert.throws(
      () => requireRunDir(given),
      (e: unknown) =>
        e instanceof PathRefusedError && e.reason === "linked-component" &&
        e.path === `${base}/linked` && e.message === `symbolic-link snapshot path: ${base}/linked`,
    );
  }
  mkdirSync(`${base}/orig-linked`);
  symlinkSync(`${base}/real/orig`, `${base}/orig-linked/orig`);
  assert.throws(
    () => requireSnapshotDir(`${base}/orig-linked`),
    (e: unknown) => e instanceof PathRefusedError && e.path === `${base}/orig-linked/orig`,
  );
  mkdirSync(`${base}/empty`);
  for (const dir of [`${base}/empty`, `${base}/absent`]) {
    assert.throws(
      () => requireSnapshotDir(dir),
      (e: unknown) =>
        e instanceof SnapshotMissingError && e.message === `no snapshot dir: ${dir}/orig`,
    );
  }
});

Deno.test("makeRunDirs creates owner-only directories and refuses a link at or below the trusted base", () => {
  const base = makeTempDir("ctxkit-rundir-");
  const b = `${base}/dotfiles-link/backups`;
  mkdirSync(`${base}/dotfiles`);
  symlinkSync(`${base}/dotfiles`, `${base}/dotfiles-link`); // above B: followed
  makeRunDirs(`${b}/run/orig/a`, b);
  for (const d of [b, `${b}/run`, `${b}/run/orig`, `${b}/run/orig/a`]) {
    assert.equal(modeOf(d), 0o700, d);
  }
  mkdirSync(`${base}/elsewhere`);
  symlinkSync(`${base}/elsewhere`, `${b}/run/draft`);
  assert.throws(
    () => makeRunDirs(`${b}/run/draft/x`, `${b}/run`),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "linked-component" &&
      e.message === `symbolic-link snapshot path: ${b}/run/draft`,
  );
  assert.equal(existsSync(`${base}/elsewhere/x`), false, "nothing created through the link");
});

Deno.test("isTrustedCopy: a regular file reached through real directories only", () => {
  const base = makeTempDir("ctxkit-rundir-");
  const orig = `${base}/orig`;
  mkdirSync(`${orig}/rules`, { recursive: true });
  writeFileSync(`${orig}/rules/a.md`, "x");
  mkdirSync(`${base}/outside`);
  writeFileSync(`${base}/outside/a.md`, "x");
  symlinkSync(`${base}/outside`, `${orig}/linked`);
  symlinkSync(`${orig}/rules/a.md`, `${orig}/rules/link.md`);
  mkdirSync(`${orig}/rules/dir.md`);
  assert.equal(isTrustedCopy(orig, "rules/a.md"), true);
  assert.equal(isTrustedCopy(orig, "linked/a.md"), false);
  assert.equal(linkFreeChain(orig, "linked/a.md"), false);
  assert.equal(isTrustedCopy(orig, "rules/link.md"), false);
  assert.equal(isTrustedCopy(orig, "rules/dir.md"), false);
  assert.equal(isTrustedCopy(orig, "rules/absent.md"), false);
  assert.equal(linkFreeChain(orig, "absent/a.md"), false);
  assert.equal(linkFreeChain(orig, "top.md"), true);
});

Deno.test("replaceFile turns a link or a non-regular destination into a PathRefusedError, writing nothing", () => {
  const base = makeTempDir("ctxkit-rundir-");
  writeFileSync(`${base}/target`, "keep");
  symlinkSync(`${base}/target`, `${base}/link`);
  mkdirSync(`${base}/dir`);
  assert.throws(
    () => replaceFile(`${base}/link`, "new", {}),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "symlink" && e.exitCode === 2 &&
      e.message === `refusing to replace symbolic link: ${base}/link`,
  );
  assert.throws(
    () => replaceFile(`${base}/dir`, "new", {}),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "special-file" &&
      e.message === `refusing to replace a non-regular file: ${base}/dir`,
  );
  assert.equal(readFileSync(`${base}/target`, "utf8"), "keep");
  const w = replaceFile(`${base}/new`, "abc", { mode: 0o640, exactMode: true });
  assert.equal(w.size, 3);
  assert.equal(modeOf(`${base}/new`), 0o640);
});

Deno.test("writePathProblem names the first link, non-directory or non-regular file on the way", () => {
  const base = makeTempDir("ctxkit-rundir-");
  mkdirSync(`${base}/a/b`, { recursive: true });
  writeFileSync(`${base}/a/b/state.json`, "{}");
  mkdirSync(`${base}/real`);
  symlinkSync(`${base}/real`, `${base}/a/link`);
  writeFileSync(`${base}/a/file`, "");
  execFileSync("mkfifo", [`${base}/a/fifo`]);
  assert.equal(writePathProblem(base, `${base}/a/b/state.json`), undefined);
  assert.equal(writePathProblem(base, `${base}/a/new/deeper/state.json`), undefined);
  assert.deepEqual(writePathProblem(base, `${base}/a/link/state.json`), {
    at: `${base}/a/link`,
    problem: "symlink",
  });
  assert.deepEqual(writePathProblem(base, `${base}/a/file/state.json`), {
    at: `${base}/a/file`,
    problem: "not-directory",
  });
  assert.deepEqual(writePathProblem(base, `${base}/a/fifo`), {
    at: `${base}/a/fifo`,
    problem: "special-file",
  });
  assert.deepEqual(writePathProblem(base, `${base}/a/b`), {
    at: `${base}/a/b`,
    problem: "special-file",
  });
  // A link above the root is not the guard's business.
  symlinkSync(`${base}/a`, `${base}/a-link`);
  assert.equal(writePathProblem(`${base}/a-link`, `${base}/a-link/b/state.json`), undefined);
  // A path outside the root is judged by its last component alone.
  assert.deepEqual(writePathProblem("/nowhere", `${base}/a/link`), {
    at: `${base}/a/link`,
    problem: "symlink",
  });
});

Deno.test("linkedDirBelow: the first linked directory strictly between the root and the file", () => {
  const base = makeTempDir("ctxkit-rundir-");
  mkdirSync(`${base}/root/real/deep`, { recursive: true });
  symlinkSync(`${base}/root/real`, `${base}/root/ln`);
  symlinkSync(`${base}/root/real/deep`, `${base}/root/real/dl`);
  writeFileSync(`${base}/root/real/file.md`, "");
  symlinkSync(`${base}/root/real/file.md`, `${base}/root/file-link.md`);
  symlinkSync(base, `${base}/root-link`);
  assert.equal(linkedDirBelow(`${base}/root`, `${base}/root/ln/deep/a.md`), `${base}/root/ln`);
  assert.equal(linkedDirBelow(`${base}/root`, `${base}/root/real/dl/a.md`), `${base}/root/real/dl`);
  assert.equal(linkedDirBelow(`${base}/root`, `${base}/root/real/deep/a.md`), undefined);
  // The file itself and the root (or what lies above it) are not checked here.
  assert.equal(linkedDirBelow(`${base}/root`, `${base}/root/file-link.md`), undefined);
  assert.equal(
    linkedDirBelow(`${base}/root-link/root`, `${base}/root-link/root/real/a.md`),
    undefined,
  );
  assert.equal(linkedDirBelow(`${base}/root`, `${base}/other/ln/a.md`), undefined);
});

Deno.test("a prepared guard write is synced with its batch: the batch syncs the write's own temp file", async () => {
  const dir = makeTempDir();
  writeFileSync(`${dir}/a.md`, "old\n");
  const pending = prepareReplace(`${dir}/a.md`, "new\n", { syncDirectory: false });
  // Take the temp file away: a batch that syncs it must now fail, one that skips it would not.
  const temp = Deno.readDirSync(dir).find((e) => e.name.includes(".ctxkit-tmp-"))!.name;
  Deno.removeSync(`${dir}/${temp}`);
  await assert.rejects(() => syncPendingWrites([pending, undefined]), Deno.errors.NotFound);
  assert.equal(readFileSync(`${dir}/a.md`, "utf8"), "old\n");
});
