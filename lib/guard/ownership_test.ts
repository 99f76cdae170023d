import assert from "node:assert/strict";
import { chmodSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname } from "node:path";
import process from "node:process";

import { PathRefusedError } from "./errors.ts";
import {
  alreadyRestored,
  currentState,
  mayRestore,
  readDraftRecord,
  restoreFile,
  restoreVerdict,
  writeDraftRecord,
} from "./ownership.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const modeOf = (p: string) => Deno.statSync(p).mode! & 0o7777;

/** A root `T` holding `rel` = `current` (unless `undefined`) and a run dir whose copy is `original`. */
function fixture(rel: string, original: string, current?: string) {
  const base = makeTempDir("ctxkit-own-");
  const root = `${base}/root`;
  const runDir = `${base}/run`;
  mkdirSync(dirname(`${runDir}/orig/${rel}`), { recursive: true, mode: 0o700 });
  writeFileSync(`${runDir}/orig/${rel}`, original, { mode: 0o600 });
  mkdirSync(dirname(`${root}/${rel}`), { recursive: true });
  const abs = `${root}/${rel}`;
  if (current !== undefined) writeFileSync(abs, current);
  return { base, root, runDir, abs };
}

Deno.test("currentState is the file's hash, MISSING when nothing is there, unknown when unreadable", () => {
  const f = fixture("a.md", "x", "hello");
  assert.equal(currentState(f.abs), sha("hello"));
  assert.equal(currentState(`${f.root}/absent.md`), "MISSING");
  assert.equal(currentState(`${f.abs}/below`), "MISSING", "ENOTDIR: nothing can be there");
  // Unreadable is never missing (references/context-guard.md#may-restore, issue 22 item 1).
  assert.equal(currentState(f.root), undefined, "a directory has no bytes, but is there");
});

Deno.test("restoreVerdict: a file that cannot be read is unknown, and a MISSING record does not match it", () => {
  const f = fixture("a.md", "orig", "someone else's\n");
  writeDraftRecord(f.runDir, "a.md", "MISSING");
  const deno = Deno as { openSync: typeof Deno.openSync };
  const open = deno.openSync;
  deno.openSync = (path, options) => {
    // Another user's file, mode 000 (tests run as root, which reads everything).
    if (path === f.abs) {
      throw Object.assign(new Error("Permission denied (os error 13)"), {
        code: "EACCES",
      });
    }
    return open(path, options);
  };
  try {
    assert.equal(currentState(f.abs), undefined);
    assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs), { allowed: false, original: false });
  } finally {
    deno.openSync = open;
  }
});

Deno.test("writeDraftRecord writes <hash>\\n owner-only under draft/, and readDraftRecord reads it back", () => {
  const f = fixture("rules/a.md", "x", "draft");
  const dir = writeDraftRecord(f.runDir, "rules/a.md", sha("draft"));
  const record = `${f.runDir}/draft/rules/a.md.sha256`;
  assert.equal(dir, `${f.runDir}/draft/rules`);
  assert.equal(readFileSync(record, "utf8"), `${sha("draft")}\n`);
  assert.equal(modeOf(record), 0o600);
  assert.equal(modeOf(`${f.runDir}/draft`), 0o700);
  assert.equal(modeOf(`${f.runDir}/draft/rules`), 0o700);
  assert.equal(readDraftRecord(f.runDir, "rules/a.md"), sha("draft"));
  writeDraftRecord(f.runDir, "rules/a.md", "MISSING");
  assert.equal(readFileSync(record, "utf8"), "MISSING\n");
  // Trailing newlines do not count; a link or an oversized record is no record.
  writeFileSync(record, "abc\n\n\n");
  assert.equal(readDraftRecord(f.runDir, "rules/a.md"), "abc");
  writeFileSync(record, "a".repeat(4097));
  assert.equal(readDraftRecord(f.runDir, "rules/a.md"), undefined);
  writeFileSync(`${f.base}/elsewhere`, `${sha("draft")}\n`);
  Deno.removeSync(record);
  symlinkSync(`${f.base}/elsewhere`, record);
  assert.equal(readDraftRecord(f.runDir, "rules/a.md"), undefined);
  assert.equal(readDraftRecord(f.runDir, "never.md"), undefined);
});

Deno.test("writeDraftRecord refuses a link at the record, and names a record it cannot create", () => {
  const f = fixture("a.md", "x", "y");
  mkdirSync(`${f.runDir}/draft`);
  writeFileSync(`${f.base}/target`, "keep");
  symlinkSync(`${f.base}/target`, `${f.runDir}/draft/a.md.sha256`);
  assert.throws(
    () => writeDraftRecord(f.runDir, "a.md", "MISSING"),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "symlink" &&
      e.message === `refusing to replace symbolic link: ${f.runDir}/draft/a.md.sha256`,
  );
  assert.equal(readFileSync(`${f.base}/target`, "utf8"), "keep");
  // A file where the record's directory should be: the record cannot be created.
  writeFileSync(`${f.runDir}/draft/sub`, "not a directory");
  assert.throws(
    () => writeDraftRecord(f.runDir, "sub/b.md", "MISSING"),
    (e: unknown) =>
      e instanceof PathRefusedError && e.reason === "unwritable" &&
      e.path === `${f.runDir}/draft/sub/b.md.sha256` &&
      e.message.startsWith(`cannot record the draft: ${f.runDir}/draft/sub/b.md.sha256 (`),
  );
});

Deno.test("restoreVerdict: allowed when already original or when the draft record holds the current hash", () => {
  // Already the original: allowed without any record.
  let f = fixture("a.md", "orig", "orig");
  assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs), { allowed: true, original: true });
  // Someone else's bytes (no record, or a record of other bytes): refused.
  f = fixture("a.md", "orig", "edited");
  assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs), { allowed: false, original: false });
  writeDraftRecord(f.runDir, "a.md", sha("optimizer's draft"));
  assert.equal(mayRestore(f.runDir, "a.md", f.abs), false);
  // The optimizer checkpointed exactly these bytes: allowed.
  writeDraftRecord(f.runDir, "a.md", sha("edited"));
  assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs), { allowed: true, original: false });
  // A deleted file: only an owned deletion (MISSING) may be brought back.
  f = fixture("a.md", "orig");
  assert.equal(mayRestore(f.runDir, "a.md", f.abs), false);
  writeDraftRecord(f.runDir, "a.md", "MISSING");
  assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs), { allowed: true, original: false });
  // No copy and no file: "both absent" is no proof of anything.
  f = fixture("a.md", "orig");
  Deno.removeSync(`${f.runDir}/orig/a.md`);
  assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs), { allowed: false, original: false });
  // The caller's known copy hash is what "original" is judged against.
  f = fixture("a.md", "orig", "orig");
  assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs, sha("other")), {
    allowed: false,
    original: false,
  });
});

Deno.test("restoreVerdict refuses a link or a non-regular file at the target, whatever the records say", () => {
  const f = fixture("a.md", "orig");
  writeFileSync(`${f.base}/real`, "orig");
  symlinkSync(`${f.base}/real`, f.abs); // a link to the original's very bytes
  writeDraftRecord(f.runDir, "a.md", "MISSING");
  assert.deepEqual(restoreVerdict(f.runDir, "a.md", f.abs), { allowed: false, original: false });
  const g = fixture("b.md", "orig");
  mkdirSync(g.abs);
  writeDraftRecord(g.runDir, "b.md", "MISSING");
  assert.equal(mayRestore(g.runDir, "b.md", g.abs), false);
});

Deno.test("restoreFile: the recorded mode exactly, else a replaced file keeps its mode and a re-created one is owner-only", () => {
  // Recorded mode: applied exactly, not filtered by the umask.
  let f = fixture("a.md", "orig", "draft");
  chmodSync(f.abs, 0o600);
  assert.equal(restoreFile(f.runDir, "a.md", f.abs, true, 0o664), sha("orig"));
  assert.equal(readFileSync(f.abs, "utf8"), "orig");
  assert.equal(modeOf(f.abs), 0o664);
  // No recorded mode: the replaced file keeps its own (setgid and sticky bits included).
  f = fixture("a.md", "orig", "draft");
  chmodSync(f.abs, 0o2751);
  restoreFile(f.runDir, "a.md", f.abs);
  assert.equal(readFileSync(f.abs, "utf8"), "orig");
  assert.equal(modeOf(f.abs), 0o2751);
  // Re-created (deleted) without a recorded mode: the copy's owner-only mode.
  f = fixture("a.md", "orig");
  restoreFile(f.runDir, "a.md", f.abs);
  assert.equal(readFileSync(f.abs, "utf8"), "orig");
  assert.equal(modeOf(f.abs), 0o600);
  // ... minus the umask, not exactly (a copy someone made group-writable stays filtered).
  f = fixture("a.md", "orig");
  chmodSync(`${f.runDir}/orig/a.md`, 0o666);
  restoreFile(f.runDir, "a.md", f.abs);
  assert.equal(modeOf(f.abs), 0o666 & ~process.umask());
});

Deno.test("restoreFile replaces a hard-linked target instead of writing through it", () => {
  const f = fixture("a.md", "orig", "draft");
  linkSync(f.abs, `${f.base}/other-name`);
  restoreFile(f.runDir, "a.md", f.abs);
  assert.equal(readFileSync(f.abs, "utf8"), "orig");
  assert.equal(readFileSync(`${f.base}/other-name`, "utf8"), "draft");
});

Deno.test("alreadyRestored: original bytes, and the recorded mode when there is one", () => {
  const f = fixture("a.md", "orig", "orig");
  chmodSync(f.abs, 0o644);
  assert.equal(alreadyRestored(f.abs, false), false);
  assert.equal(alreadyRestored(f.abs, true), true);
  assert.equal(alreadyRestored(f.abs, true, 0o644), true);
  assert.equal(alreadyRestored(f.abs, true, 0o600), false);
  assert.equal(alreadyRestored(`${f.root}/gone.md`, true, 0o644), false);
});
