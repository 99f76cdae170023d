import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";

import { PathRefusedError, SnapshotMissingError } from "../errors.ts";
import { collectingReporter } from "../report.ts";
import { checkpoint } from "./checkpoint.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** A root with `rules/a.md` and `b.md` (drafts) and a run dir snapshotting both. */
function fixture() {
  const base = makeTempDir("ctxkit-ckpt-");
  const root = `${base}/root`;
  const runDir = `${base}/run`;
  mkdirSync(`${root}/rules`, { recursive: true });
  mkdirSync(`${runDir}/orig/rules`, { recursive: true });
  for (const rel of ["rules/a.md", "b.md"]) writeFileSync(`${runDir}/orig/${rel}`, "original\n");
  writeFileSync(`${root}/rules/a.md`, "draft a\n");
  writeFileSync(`${root}/b.md`, "draft b\n");
  return { base, root, runDir };
}

Deno.test("checkpoint records each file's current hash, or MISSING for a deleted one, in order", async () => {
  const f = fixture();
  Deno.removeSync(`${f.root}/b.md`);
  const out = collectingReporter();
  const rels = await checkpoint(
    { projectDir: f.root, runDir: f.runDir, files: [`${f.root}/rules/a.md`, `${f.root}/b.md`] },
    out,
  );
  assert.deepEqual(rels, ["rules/a.md", "b.md"]);
  assert.deepEqual(out.lines.map((l) => `${l.stream}: ${l.text}`), [
    "stdout: CHECKPOINT: rules/a.md",
    "stdout: CHECKPOINT: b.md",
  ]);
  assert.equal(
    readFileSync(`${f.runDir}/draft/rules/a.md.sha256`, "utf8"),
    `${sha("draft a\n")}\n`,
  );
  assert.equal(readFileSync(`${f.runDir}/draft/b.md.sha256`, "utf8"), "MISSING\n");
});

Deno.test("checkpoint checks every file before writing any record", async () => {
  const f = fixture();
  writeFileSync(`${f.root}/new.md`, "never snapshotted\n");
  await assert.rejects(
    async () =>
      await checkpoint({
        projectDir: f.root,
        runDir: f.runDir,
        files: [`${f.root}/rules/a.md`, `${f.root}/new.md`],
      }),
    (e: unknown) =>
      e instanceof SnapshotMissingError && e.rel === "new.md" &&
      e.message === "no snapshot for new.md",
  );
  // A directory where a snapshotted file was: refused, and the earlier valid file gets no record.
  mkdirSync(`${f.root}/dir.md`);
  writeFileSync(`${f.runDir}/orig/dir.md`, "original\n");
  await assert.rejects(
    async () =>
      await checkpoint({
        projectDir: f.root,
        runDir: f.runDir,
        files: [`${f.root}/b.md`, `${f.root}/dir.md`],
      }),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "not-regular-draft" &&
      e.message === `not a regular draft: ${f.root}/dir.md`,
  );
  assert.equal(existsSync(`${f.runDir}/draft`), false, "no record was written");
});

Deno.test("checkpoint refuses a linked run dir and a target outside the root", async () => {
  const f = fixture();
  symlinkSync(f.runDir, `${f.base}/run-link`);
  await assert.rejects(
    async () =>
      await checkpoint({
        projectDir: f.root,
        runDir: `${f.base}/run-link`,
        files: [`${f.root}/b.md`],
      }),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "linked-component" &&
      e.message === `symbolic-link snapshot path: ${f.base}/run-link`,
  );
  writeFileSync(`${f.base}/outside.md`, "x");
  await assert.rejects(
    () => checkpoint({ projectDir: f.root, runDir: f.runDir, files: [`${f.base}/outside.md`] }),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "outside-root" &&
      e.message === `${f.base}/outside.md is outside the project root ${f.root}`,
  );
  assert.equal(existsSync(`${f.runDir}/draft`), false);
});
