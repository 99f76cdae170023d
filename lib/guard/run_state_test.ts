import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

import { collectingReporter } from "./report.ts";
import { keepStateBefore, readRunState, restoreRunState, rootStatePath } from "./run_state.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const modeOf = (p: string) => Deno.statSync(p).mode! & 0o7777;

function fixture() {
  const base = makeTempDir("ctxkit-runstate-");
  const runDir = `${base}/run`;
  mkdirSync(`${runDir}/orig`, { recursive: true, mode: 0o700 });
  const root = `${base}/root`;
  const path = rootStatePath(root);
  mkdirSync(`${root}/.claude/brewtools/context-slim`, { recursive: true });
  return { base, runDir, root, path };
}

/** What `state` does: keep the before and record the hash it is about to write, then write. */
function writeState(runDir: string, path: string, content: string): void {
  keepStateBefore(runDir, path, sha(content));
  writeFileSync(path, content);
}

Deno.test("keepStateBefore keeps the first before of a run, and records every hash before it is written", () => {
  const f = fixture();
  writeFileSync(f.path, "before\n");
  chmodSync(f.path, 0o640);
  const made = keepStateBefore(f.runDir, f.path, sha("first\n"));
  assert.deepEqual(made, [`${f.runDir}/state`]);
  // Intent first: the record names the hash before the state file holds it.
  assert.deepEqual(readRunState(f.runDir), {
    path: f.path,
    existed: true,
    mode: 0o640,
    written: [sha("first\n")],
  });
  assert.equal(readFileSync(f.path, "utf8"), "before\n");
  writeFileSync(f.path, "first\n");
  assert.equal(readFileSync(`${f.runDir}/state/previous`, "utf8"), "before\n");
  assert.equal(modeOf(`${f.runDir}/state/previous`), 0o600);
  assert.equal(modeOf(`${f.runDir}/state/record.json`), 0o600);
  assert.equal(modeOf(`${f.runDir}/state`), 0o700);
  // A second `state` of the same run keeps the first before, and adds its hash.
  writeState(f.runDir, f.path, "second\n");
  assert.equal(readFileSync(`${f.runDir}/state/previous`, "utf8"), "before\n");
  assert.deepEqual(readRunState(f.runDir)?.written, [sha("first\n"), sha("second\n")]);

  const g = fixture();
  keepStateBefore(g.runDir, g.path, sha("x\n"));
  assert.deepEqual(readRunState(g.runDir), {
    path: g.path,
    existed: false,
    mode: 0o644,
    written: [sha("x\n")],
  });
  assert.equal(existsSync(`${g.runDir}/state/previous`), false);
});

Deno.test("readRunState: no record, or one that fails its schema, is none; an older record's one hash reads", () => {
  const f = fixture();
  assert.equal(readRunState(f.runDir), undefined);
  mkdirSync(`${f.runDir}/state`, { mode: 0o700 });
  for (
    const bad of [
      "not json",
      JSON.stringify({ path: "relative", existed: true, mode: 0o644, written: [] }),
      JSON.stringify({ path: "/a", existed: true, mode: 0o644, written: ["xyz"] }),
      JSON.stringify({ path: "/a", existed: true, mode: 0o644, written: [], extra: 1 }),
    ]
  ) {
    writeFileSync(`${f.runDir}/state/record.json`, bad, { mode: 0o600 });
    assert.equal(readRunState(f.runDir), undefined, bad);
  }
  writeFileSync(
    `${f.runDir}/state/record.json`,
    JSON.stringify({ path: "/a", existed: false, mode: 0o644, written_sha256: sha("x") }),
  );
  assert.deepEqual(readRunState(f.runDir)?.written, [sha("x")]);
  // Another user's record (here: writable by others) is none.
  chmodSync(`${f.runDir}/state/record.json`, 0o666);
  assert.equal(readRunState(f.runDir), undefined);
});

Deno.test("restoreRunState puts the state file back as the run found it: restored with its mode, or removed", () => {
  const f = fixture();
  writeFileSync(f.path, "before\n");
  chmodSync(f.path, 0o640);
  writeState(f.runDir, f.path, "after\n");
  const out = collectingReporter();
  restoreRunState(f.runDir, f.root, out);
  assert.deepEqual(out.lines, [{ stream: "stdout", text: `STATE: restored ${f.path}` }]);
  assert.equal(readFileSync(f.path, "utf8"), "before\n");
  assert.equal(modeOf(f.path), 0o640);

  const g = fixture();
  writeState(g.runDir, g.path, "after\n");
  const out2 = collectingReporter();
  restoreRunState(g.runDir, g.root, out2);
  assert.deepEqual(out2.lines, [{ stream: "stdout", text: `STATE: removed ${g.path}` }]);
  assert.equal(existsSync(g.path), false);
});

Deno.test("restoreRunState: a kill between the record and the write leaves the file as the run found it, and nothing is said", () => {
  const f = fixture();
  writeFileSync(f.path, "before\n");
  keepStateBefore(f.runDir, f.path, sha("never written\n"));
  const none = collectingReporter();
  restoreRunState(f.runDir, f.root, none);
  assert.deepEqual(none.lines, []);
  assert.equal(readFileSync(f.path, "utf8"), "before\n");
  const g = fixture();
  keepStateBefore(g.runDir, g.path, sha("never written\n"));
  restoreRunState(g.runDir, g.root, none);
  assert.deepEqual(none.lines, []);
  assert.equal(existsSync(g.path), false);
  // A second state of the run killed before its write: the first write is still the run's own.
  const h = fixture();
  writeState(h.runDir, h.path, "first\n");
  keepStateBefore(h.runDir, h.path, sha("second, never written\n"));
  const out = collectingReporter();
  restoreRunState(h.runDir, h.root, out);
  assert.deepEqual(out.lines, [{ stream: "stdout", text: `STATE: removed ${h.path}` }]);
});

Deno.test("restoreRunState keeps a state file changed since the run wrote it", () => {
  const f = fixture();
  writeState(f.runDir, f.path, "after\n");
  writeFileSync(f.path, "someone else's\n");
  const out = collectingReporter();
  restoreRunState(f.runDir, f.root, out);
  assert.deepEqual(out.lines, [{
    stream: "stderr",
    text: `STATE: kept ${f.path} (changed since this run wrote it)`,
  }]);
  assert.equal(readFileSync(f.path, "utf8"), "someone else's\n");
  // Removed since, though it existed before: kept too (nothing to put back over).
  const g = fixture();
  writeFileSync(g.path, "before\n");
  writeState(g.runDir, g.path, "after\n");
  Deno.removeSync(g.path);
  const gone = collectingReporter();
  restoreRunState(g.runDir, g.root, gone);
  assert.equal(gone.lines[0].text, `STATE: kept ${g.path} (changed since this run wrote it)`);
  assert.equal(existsSync(g.path), false);
  // No record: silent.
  const none = collectingReporter();
  restoreRunState(`${f.base}/no-run`, f.root, none);
  assert.deepEqual(none.lines, []);
});

Deno.test("restoreRunState touches only its root's own state file, never another path its record names", () => {
  const f = fixture();
  const other = `${f.base}/.bashrc`;
  writeFileSync(other, "export EDITOR=vi\n");
  writeState(f.runDir, other, "export EDITOR=vi\n"); // a record naming another file
  writeFileSync(`${f.runDir}/state/previous`, "planted\n", { mode: 0o600 });
  const out = collectingReporter();
  restoreRunState(f.runDir, f.root, out);
  assert.deepEqual(out.lines, []);
  assert.equal(readFileSync(other, "utf8"), "export EDITOR=vi\n");
});
