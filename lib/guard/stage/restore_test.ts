import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";

import { plain, type Text } from "../../text.ts";
import { RestoreRefusedError, RestoreStoppedError, SnapshotMissingError } from "../errors.ts";
import { writeDraftRecord } from "../ownership.ts";
import { collectingReporter } from "../report.ts";
import { stageRestore } from "./restore.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const read = (p: string) => readFileSync(p, "utf8");

/** A root and a run dir snapshotting `files` (rel → original content). */
function fixture(files: Record<string, string>) {
  const base = makeTempDir("ctxkit-srestore-");
  const root = `${base}/root`;
  const runDir = `${base}/run`;
  mkdirSync(root, { recursive: true });
  mkdirSync(`${runDir}/orig`, { recursive: true });
  for (const [rel, content] of Object.entries(files)) {
    writeFileSync(`${runDir}/orig/${rel}`, content, { mode: 0o600 });
    writeFileSync(`${root}/${rel}`, content);
  }
  return { root, runDir };
}

Deno.test("stageRestore is all or nothing: every unowned file is named and nothing is written", async () => {
  const f = fixture({ "a.md": "A\n", "b.md": "B\n", "c.md": "C\n" });
  writeFileSync(`${f.root}/a.md`, "owned draft\n");
  writeDraftRecord(f.runDir, "a.md", sha("owned draft\n"));
  writeFileSync(`${f.root}/b.md`, "someone's edit\n");
  writeFileSync(`${f.root}/c.md`, "another edit\n");
  writeDraftRecord(f.runDir, "c.md", sha("an older draft\n"));
  const out = collectingReporter();
  await assert.rejects(
    async () =>
      await stageRestore({
        projectDir: f.root,
        runDir: f.runDir,
        files: ["a.md", "b.md", "c.md"].map((r) => `${f.root}/${r}`),
      }, out),
    (e: unknown) =>
      e instanceof RestoreRefusedError && e.exitCode === 1 &&
      JSON.stringify(e.rels) === JSON.stringify(["b.md", "c.md"]),
  );
  assert.deepEqual(out.lines, []);
  assert.equal(read(`${f.root}/a.md`), "owned draft\n", "the owned file was not restored either");
  assert.equal(read(`${f.root}/b.md`), "someone's edit\n");
});

Deno.test("stageRestore restores owned and deleted files in order, with recorded modes, and leaves originals untouched", async () => {
  const f = fixture({ "a.md": "A\n", "gone.md": "G\n", "same.md": "S\n" });
  writeFileSync(`${f.root}/a.md`, "draft\n");
  writeDraftRecord(f.runDir, "a.md", sha("draft\n"));
  Deno.removeSync(`${f.root}/gone.md`);
  writeDraftRecord(f.runDir, "gone.md", "MISSING");
  chmodSync(`${f.root}/same.md`, 0o644);
  const past = new Date(2020, 0, 1);
  utimesSync(`${f.root}/same.md`, past, past);
  const inode = Deno.statSync(`${f.root}/same.md`).ino;
  const out = collectingReporter();
  const targets = await stageRestore({
    projectDir: f.root,
    runDir: f.runDir,
    files: ["same.md", "gone.md", "a.md"].map((r) => `${f.root}/${r}`),
    modes: new Map([["gone.md", 0o640], ["same.md", 0o644]]),
  }, out);
  assert.deepEqual(targets.map((t) => t.rel), ["same.md", "gone.md", "a.md"]);
  assert.deepEqual(out.lines.map((l) => `${l.stream}: ${l.text}`), [
    "stdout: RESTORED: same.md",
    "stdout: RESTORED: gone.md",
    "stdout: RESTORED: a.md",
  ]);
  assert.equal(read(`${f.root}/a.md`), "A\n");
  assert.equal(read(`${f.root}/gone.md`), "G\n");
  assert.equal(Deno.statSync(`${f.root}/gone.md`).mode! & 0o777, 0o640);
  const same = Deno.statSync(`${f.root}/same.md`);
  assert.equal(same.ino, inode, "already original: not rewritten");
  assert.equal(same.mtime?.getTime(), past.getTime());
});

Deno.test("stageRestore: an original file with the wrong recorded mode is rewritten to that mode", async () => {
  const f = fixture({ "a.md": "A\n" });
  chmodSync(`${f.root}/a.md`, 0o600);
  await stageRestore({
    projectDir: f.root,
    runDir: f.runDir,
    files: [`${f.root}/a.md`],
    modes: new Map([["a.md", 0o644]]),
  }, collectingReporter());
  assert.equal(Deno.statSync(`${f.root}/a.md`).mode! & 0o777, 0o644);
});

Deno.test("stageRestore: a file without a snapshot copy is reported before any ownership refusal", async () => {
  const f = fixture({ "a.md": "A\n" });
  writeFileSync(`${f.root}/a.md`, "unowned\n");
  writeFileSync(`${f.root}/new.md`, "x\n");
  await assert.rejects(
    async () =>
      await stageRestore({
        projectDir: f.root,
        runDir: f.runDir,
        files: [`${f.root}/a.md`, `${f.root}/new.md`],
      }, collectingReporter()),
    (e: unknown) => e instanceof SnapshotMissingError && e.message === "no snapshot for new.md",
  );
  assert.equal(existsSync(`${f.runDir}/draft`), false);
});

Deno.test("stageRestore checks each file again right before its rename: a save after the batch check stops it there", async () => {
  // Issue 22 item 2, made deterministic: the "editor" saves b.md the moment a.md is reported back,
  // after every check of the batch and every temp file were done.
  const f = fixture({ "a.md": "A\n", "b.md": "B\n", "c.md": "C\n" });
  for (const rel of ["a.md", "b.md", "c.md"]) {
    writeFileSync(`${f.root}/${rel}`, `${rel} draft\n`);
    writeDraftRecord(f.runDir, rel, sha(`${rel} draft\n`));
  }
  const lines: string[] = [];
  const reporter = {
    out: (line: Text) => {
      lines.push(plain(line));
      if (plain(line) === "RESTORED: a.md") writeFileSync(`${f.root}/b.md`, "the user's save\n");
    },
    err: (line: Text) => lines.push(`err: ${plain(line)}`),
  };
  await assert.rejects(
    () =>
      stageRestore({
        projectDir: f.root,
        runDir: f.runDir,
        files: ["a.md", "b.md", "c.md"].map((r) => `${f.root}/${r}`),
      }, reporter),
    (e: unknown) =>
      e instanceof RestoreStoppedError && e.exitCode === 1 && e.rel === "b.md" &&
      e.restored.join() === "a.md" && e.total === 3 && e.reason instanceof RestoreRefusedError,
  );
  assert.deepEqual(lines, ["RESTORED: a.md"]);
  assert.equal(read(`${f.root}/a.md`), "A\n");
  assert.equal(read(`${f.root}/b.md`), "the user's save\n");
  assert.equal(read(`${f.root}/c.md`), "c.md draft\n");
  assert.deepEqual(readdirSync(f.root).sort(), ["a.md", "b.md", "c.md"]);
});

Deno.test("stageRestore makes a deleted file's missing directories again inside the root", async () => {
  const base = makeTempDir("ctxkit-srestore-");
  const root = `${base}/root`;
  const runDir = `${base}/run`;
  mkdirSync(`${runDir}/orig/skills/s/refs`, { recursive: true });
  writeFileSync(`${runDir}/orig/skills/s/refs/x.md`, "X\n", { mode: 0o600 });
  mkdirSync(root);
  writeDraftRecord(runDir, "skills/s/refs/x.md", "MISSING");
  const out = collectingReporter();
  await stageRestore({ projectDir: root, runDir, files: [`${root}/skills/s/refs/x.md`] }, out);
  assert.equal(read(`${root}/skills/s/refs/x.md`), "X\n");
  assert.deepEqual(out.lines.map((l) => l.text), ["RESTORED: skills/s/refs/x.md"]);
});
