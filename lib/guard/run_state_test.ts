import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";

import { collectingReporter } from "./report.ts";
import { keepStateBefore, noteStateWritten, readRunState, restoreRunState } from "./run_state.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const modeOf = (p: string) => Deno.statSync(p).mode! & 0o7777;

function fixture() {
  const base = makeTempDir("ctxkit-runstate-");
  const runDir = `${base}/run`;
  mkdirSync(`${runDir}/orig`, { recursive: true });
  const dir = `${base}/root/.claude/brewtools/context-slim`;
  mkdirSync(dir, { recursive: true });
  return { base, runDir, path: `${dir}/state.json` };
}

/** What `state` does: keep the before, write the file, note its hash. */
function writeState(runDir: string, path: string, content: string): void {
  keepStateBefore(runDir, path);
  writeFileSync(path, content);
  noteStateWritten(runDir, sha(content));
}

Deno.test("keepStateBefore keeps the first before of a run: bytes and mode, or the absence", () => {
  const f = fixture();
  writeFileSync(f.path, "before\n");
  chmodSync(f.path, 0o640);
  writeState(f.runDir, f.path, "first\n");
  assert.deepEqual(readRunState(f.runDir), {
    path: f.path,
    existed: true,
    mode: 0o640,
    written_sha256: sha("first\n"),
  });
  assert.equal(readFileSync(`${f.runDir}/state/previous`, "utf8"), "before\n");
  assert.equal(modeOf(`${f.runDir}/state/previous`), 0o600);
  assert.equal(modeOf(`${f.runDir}/state/record.json`), 0o600);
  assert.equal(modeOf(`${f.runDir}/state`), 0o700);
  // A second `state` of the same run keeps the first before, and notes the newest hash.
  writeState(f.runDir, f.path, "second\n");
  assert.equal(readFileSync(`${f.runDir}/state/previous`, "utf8"), "before\n");
  assert.equal(readRunState(f.runDir)?.written_sha256, sha("second\n"));

  const g = fixture();
  keepStateBefore(g.runDir, g.path);
  assert.deepEqual(readRunState(g.runDir), {
    path: g.path,
    existed: false,
    mode: 0o644,
    written_sha256: null,
  });
  assert.equal(existsSync(`${g.runDir}/state/previous`), false);
});

Deno.test("readRunState: no record, or one that fails its schema, is none", () => {
  const f = fixture();
  assert.equal(readRunState(f.runDir), undefined);
  mkdirSync(`${f.runDir}/state`);
  for (
    const bad of [
      "not json",
      JSON.stringify({ path: "relative", existed: true, mode: 0o644, written_sha256: null }),
      JSON.stringify({ path: "/a", existed: true, mode: 0o644, written_sha256: "xyz" }),
      JSON.stringify({ path: "/a", existed: true, mode: 0o644, written_sha256: null, extra: 1 }),
    ]
  ) {
    writeFileSync(`${f.runDir}/state/record.json`, bad);
    assert.equal(readRunState(f.runDir), undefined, bad);
  }
  // noteStateWritten without a record writes none.
  noteStateWritten(f.runDir, sha("x"));
  assert.equal(readFileSync(`${f.runDir}/state/record.json`, "utf8").includes(sha("x")), false);
});

Deno.test("restoreRunState puts the state file back as the run found it: restored with its mode, or removed", () => {
  const f = fixture();
  writeFileSync(f.path, "before\n");
  chmodSync(f.path, 0o640);
  writeState(f.runDir, f.path, "after\n");
  const out = collectingReporter();
  restoreRunState(f.runDir, out);
  assert.deepEqual(out.lines, [{ stream: "stdout", text: `STATE: restored ${f.path}` }]);
  assert.equal(readFileSync(f.path, "utf8"), "before\n");
  assert.equal(modeOf(f.path), 0o640);

  const g = fixture();
  writeState(g.runDir, g.path, "after\n");
  const out2 = collectingReporter();
  restoreRunState(g.runDir, out2);
  assert.deepEqual(out2.lines, [{ stream: "stdout", text: `STATE: removed ${g.path}` }]);
  assert.equal(existsSync(g.path), false);
});

Deno.test("restoreRunState keeps a state file changed since the run wrote it, and does nothing without a write", () => {
  const f = fixture();
  writeState(f.runDir, f.path, "after\n");
  writeFileSync(f.path, "someone else's\n");
  const out = collectingReporter();
  restoreRunState(f.runDir, out);
  assert.deepEqual(out.lines, [{
    stream: "stderr",
    text: `STATE: kept ${f.path} (changed since this run wrote it)`,
  }]);
  assert.equal(readFileSync(f.path, "utf8"), "someone else's\n");
  // Removed since: kept too (nothing to put back over).
  Deno.removeSync(f.path);
  const gone = collectingReporter();
  restoreRunState(f.runDir, gone);
  assert.equal(gone.lines[0].text, `STATE: kept ${f.path} (changed since this run wrote it)`);
  assert.equal(existsSync(f.path), false);
  // A before kept but nothing written (written_sha256 null), or no record: silent, untouched.
  const g = fixture();
  writeFileSync(g.path, "before\n");
  keepStateBefore(g.runDir, g.path);
  writeFileSync(g.path, "written by a state that died before noting it\n");
  const none = collectingReporter();
  restoreRunState(g.runDir, none);
  restoreRunState(`${g.base}/no-run`, none);
  assert.deepEqual(none.lines, []);
  assert.equal(readFileSync(g.path, "utf8"), "written by a state that died before noting it\n");
});
