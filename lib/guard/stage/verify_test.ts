import assert from "node:assert/strict";
import { refusedShown } from "../_test_utils.ts";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";

import { text } from "../../text.ts";
import { PathRefusedError, SnapshotMissingError } from "../errors.ts";
import { writeDraftRecord } from "../ownership.ts";
import { collectingReporter } from "../report.ts";
import { gateMisses, reportMisses, stageVerify } from "./verify.ts";
import { GATE_MAX_BYTES, readForGate, refuseTooLarge } from "../gate_input.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const read = (p: string) => readFileSync(p, "utf8");

/** A root and a run dir snapshotting `files` (rel → original), the root holding `current`. */
function fixture(files: Record<string, [string, string]>) {
  const base = makeTempDir("ctxkit-sverify-");
  const root = `${base}/root`;
  const runDir = `${base}/run`;
  mkdirSync(root, { recursive: true });
  mkdirSync(`${runDir}/orig`, { recursive: true });
  for (const [rel, [original, current]] of Object.entries(files)) {
    writeFileSync(`${runDir}/orig/${rel}`, original);
    writeFileSync(`${root}/${rel}`, current);
  }
  return { base, root, runDir, path: (rel: string) => `${root}/${rel}` };
}

const shown = (lines: { stream: string; text: string }[]) =>
  lines.map((l) => `${l.stream}: ${l.text}`);

Deno.test("gateMisses: the snapshot's tokens the current bytes lack, sorted; repeats never matter", () => {
  assert.deepEqual(
    gateMisses(enc("NEVER 30 a/b 30\nALWAYS 4.0\n"), enc("30 ALWAYS\n"), "base"),
    ["kw:NEVER", "num:4.0", "path:a/b"],
  );
  assert.deepEqual(gateMisses(enc("x 1"), enc("1 1 1 y"), "base"), []);
  assert.deepEqual(gateMisses(enc("run `npm test`"), enc("run npm test"), "ext"), [
    "tick:`npm test`",
  ]);
  assert.deepEqual(gateMisses(enc("run `npm test`"), enc("run npm test"), "base"), []);
  const out = collectingReporter();
  reportMisses("a.md", ["kw:NEVER", "num:1"], out);
  assert.deepEqual(shown(out.lines), [
    "stdout: FILE: a.md",
    "stdout: MISSING: 2",
    "stdout:   - kw:NEVER",
    "stdout:   - num:1",
  ]);
});

Deno.test("stageVerify: pass keeps; a failure is restored when owned, refused otherwise, kept with noRestore", () => {
  const f = fixture({
    "pass.md": ["NEVER 1\n", "NEVER 1 reworded\n"],
    "owned.md": ["NEVER 2\n", "lost 2\n"],
    "unowned.md": ["NEVER 3\n", "someone's 3\n"],
  });
  writeDraftRecord(f.runDir, "owned.md", sha("lost 2\n"));
  const out = collectingReporter();
  const result = stageVerify({
    projectDir: f.root,
    runDir: f.runDir,
    files: [f.path("pass.md"), f.path("owned.md"), f.path("unowned.md")],
  }, out);
  assert.deepEqual(shown(out.lines), [
    "stdout: FILE: pass.md",
    "stdout: MISSING: 0",
    "stdout: GATE: PASS",
    "stdout: ACTION: kept",
    "stdout: FILE: owned.md",
    "stdout: MISSING: 1",
    "stdout:   - kw:NEVER",
    "stdout: GATE: FAIL",
    "stdout: ACTION: restored",
    "stdout: FILE: unowned.md",
    "stdout: MISSING: 1",
    "stdout:   - kw:NEVER",
    "stdout: GATE: FAIL",
    ...refusedShown(f.runDir, "unowned.md", f.path("unowned.md")),
    "stdout: ACTION: kept (restore refused)",
    "stdout: FILES_FAILED: 2",
  ]);
  assert.equal(result.filesFailed, 2);
  assert.deepEqual(result.files.map((v) => [v.target.rel, v.gate, v.action]), [
    ["pass.md", "pass", "kept"],
    ["owned.md", "fail", "restored"],
    ["unowned.md", "fail", "refused"],
  ]);
  assert.equal(read(f.path("pass.md")), "NEVER 1 reworded\n");
  assert.equal(read(f.path("owned.md")), "NEVER 2\n");
  assert.equal(read(f.path("unowned.md")), "someone's 3\n");

  const g = fixture({ "owned.md": ["NEVER 2\n", "lost 2\n"] });
  writeDraftRecord(g.runDir, "owned.md", sha("lost 2\n"));
  const kept = collectingReporter();
  const r = stageVerify(
    { projectDir: g.root, runDir: g.runDir, files: [g.path("owned.md")], noRestore: true },
    kept,
  );
  assert.deepEqual(r.files.map((v) => v.action), ["kept"]);
  assert.deepEqual(shown(kept.lines).slice(-3), [
    "stdout: GATE: FAIL",
    "stdout: ACTION: kept",
    "stdout: FILES_FAILED: 1",
  ]);
  assert.equal(read(g.path("owned.md")), "lost 2\n");
});

Deno.test("stageVerify: misses the coverage ledgers all pass uncounted; any uncovered one fails", () => {
  const f = fixture({
    "a.md": ["NEVER 1\n", "gone\n"],
    "b.md": ["NEVER 2\n", "gone\n"],
  });
  const out = collectingReporter();
  const result = stageVerify({
    projectDir: f.root,
    runDir: f.runDir,
    files: [f.path("a.md"), f.path("b.md")],
    noRestore: true,
    coverage: {
      cover: (target, copy, misses) => ({
        lines: misses.map((m) =>
          text`NOTE: ${m} of ${target.rel} (${new TextDecoder().decode(copy).trim()})`
        ),
        covered: target.rel === "a.md",
      }),
    },
  }, out);
  assert.deepEqual(shown(out.lines), [
    "stdout: FILE: a.md",
    "stdout: MISSING: 2",
    "stdout:   - kw:NEVER",
    "stdout:   - num:1",
    "stdout: NOTE: kw:NEVER of a.md (NEVER 1)",
    "stdout: NOTE: num:1 of a.md (NEVER 1)",
    "stdout: GATE: PASS (every miss ledgered)",
    "stdout: ACTION: kept",
    "stdout: FILE: b.md",
    "stdout: MISSING: 2",
    "stdout:   - kw:NEVER",
    "stdout:   - num:2",
    "stdout: NOTE: kw:NEVER of b.md (NEVER 2)",
    "stdout: NOTE: num:2 of b.md (NEVER 2)",
    "stdout: GATE: FAIL",
    "stdout: ACTION: kept",
    "stdout: FILES_FAILED: 1",
  ]);
  assert.deepEqual(result.files.map((v) => v.gate), ["ledgered", "fail"]);
});

Deno.test("stageVerify pre-flight: a missing copy, a vanished target or an oversized file stops before any report", () => {
  const f = fixture({ "a.md": ["NEVER 1\n", "gone\n"], "big.md": ["1\n", "1\n"] });
  const files = (...rels: string[]) => rels.map(f.path);
  const preflight = (list: string[], check: (e: unknown) => boolean) => {
    const out = collectingReporter();
    assert.throws(
      () => stageVerify({ projectDir: f.root, runDir: f.runDir, files: list }, out),
      check,
    );
    assert.deepEqual(out.lines, [], "no report printed");
    assert.equal(read(f.path("a.md")), "gone\n", "nothing restored");
  };
  writeDraftRecord(f.runDir, "a.md", sha("gone\n"));
  writeFileSync(f.path("new.md"), "x");
  preflight(files("a.md", "new.md"), (e) =>
    e instanceof SnapshotMissingError &&
    e.message === `no snapshot for new.md in ${f.runDir} - run 'snapshot' before editing`);
  mkdirSync(f.path("dir.md"));
  writeFileSync(`${f.runDir}/orig/dir.md`, "x");
  preflight(
    files("a.md", "dir.md"),
    (e) =>
      e instanceof PathRefusedError && e.reason === "vanished" &&
      e.message === "target vanished: dir.md",
  );
  truncateSync(f.path("big.md"), GATE_MAX_BYTES + 1); // sparse: nothing is really written
  preflight(
    files("a.md", "big.md"),
    (e) =>
      e instanceof PathRefusedError && e.reason === "too-large" &&
      e.message ===
        `too large for the token gate: big.md (${GATE_MAX_BYTES + 1} bytes; the limit is 67108864)`,
  );
  const stage = `${f.base}/nope`;
  assert.throws(
    () =>
      stageVerify(
        { projectDir: f.root, runDir: stage, files: files("a.md") },
        collectingReporter(),
      ),
    (e: unknown) =>
      e instanceof SnapshotMissingError && e.message === `no snapshot dir: ${stage}/orig`,
  );
});

Deno.test("readForGate and refuseTooLarge: the limit is 64 MiB, refused by size before reading", () => {
  const dir = makeTempDir("ctxkit-sverify-");
  writeFileSync(`${dir}/small`, "NEVER\n");
  assert.deepEqual(readForGate(`${dir}/small`, "small"), enc("NEVER\n"));
  refuseTooLarge(`${dir}/small`, "small");
  refuseTooLarge(`${dir}/absent`, "absent"); // not the gate's business
  writeFileSync(`${dir}/big`, "");
  truncateSync(`${dir}/big`, GATE_MAX_BYTES + 7);
  for (
    const fn of [
      () => readForGate(`${dir}/big`, "shown"),
      () => refuseTooLarge(`${dir}/big`, "shown"),
    ]
  ) {
    assert.throws(fn, (e: unknown) =>
      e instanceof PathRefusedError && e.path === "shown" &&
      e.message ===
        `too large for the token gate: shown (${
          GATE_MAX_BYTES + 7
        } bytes; the limit is ${GATE_MAX_BYTES})`);
  }
  assert.equal(GATE_MAX_BYTES, 67108864);
});
