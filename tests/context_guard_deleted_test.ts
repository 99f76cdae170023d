/**
 * CLI tests of `context-guard verify-deleted` (`references/context-guard.md#verify-deleted`): the
 * proof, the draft record put back, the whole-run rollback and every refusal.
 */
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, rmSync } from "node:fs";
import {
  makeSharedTempDir,
  runTool,
  runToolAsUser,
  skipWithoutUnprivilegedUser,
  UNPRIVILEGED_ID,
} from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  type ExampleProject,
  exampleProject,
  giveRunsTo,
  outLines,
  read,
  STYLE_MD,
  treeState,
  writeTree,
} from "./_guard_fixtures.ts";

/** A rule file whose every base token is also in CLAUDE.md or style.md. */
const OLD_MD = "# Old rules\n\nUse Node 20.11; ALWAYS run lint/check.sh first.\n" +
  "See the context-slim notes.\n";
const OLD = ".claude/rules/old.md";
const STYLE = ".claude/rules/style.md";

function cg(ex: ExampleProject, args: string[], env: Record<string, string> = {}) {
  return runTool("context-guard", args, { cwd: ex.proj, env: { ...ex.env, ...env } });
}

function tg(ex: ExampleProject, args: string[]) {
  return runTool("text-guard", args, { cwd: ex.proj, env: ex.env });
}

/**
 * The worked-example project plus `old.md`, all three snapshotted; CLAUDE.md edited and checkpointed, `old.md`
 * deleted (and checkpointed as `MISSING` unless `checkpointDeletion` is false).
 */
function setup(options: { checkpointDeletion?: boolean } = {}): { ex: ExampleProject; rd: string } {
  const ex = exampleProject();
  writeTree(ex.proj, { [OLD]: OLD_MD });
  const snap = cg(ex, ["snapshot", "CLAUDE.md", STYLE, OLD]);
  assert.equal(snap.code, 0, snap.stderr);
  const rd = outLines(snap).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
  writeTree(ex.proj, { "CLAUDE.md": CLAUDE_MD + "Merged: see style.\n" });
  rmSync(`${ex.proj}/${OLD}`);
  const files = options.checkpointDeletion ?? true ? ["CLAUDE.md", OLD] : ["CLAUDE.md"];
  const cp = tg(ex, ["checkpoint", "--run-dir", rd, ...files]);
  assert.equal(cp.code, 0, cp.stderr);
  return { ex, rd };
}

const recordOf = (rd: string, rel: string) => {
  const p = `${rd}/draft/${rel}.sha256`;
  return existsSync(p) ? read(p) : undefined;
};

Deno.test("verify-deleted PASS: CHECKPOINT, report, MERGED_VERIFIED; stand-in gone, record as before", () => {
  const { ex, rd } = setup();
  assert.equal(recordOf(rd, OLD), "MISSING\n");
  const r = cg(ex, [
    "verify-deleted",
    "--run-dir",
    rd,
    "--survivor",
    "CLAUDE.md",
    "--survivor",
    STYLE,
    OLD,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(errLines(r), []);
  assert.deepEqual(outLines(r), [
    `CHECKPOINT: ${OLD}`,
    `FILE: ${OLD}`,
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILES_FAILED: 0",
    `MERGED_VERIFIED: ${OLD} -> CLAUDE.md ${STYLE}`,
  ]);
  assert.ok(!existsSync(`${ex.proj}/${OLD}`), "stand-in removed");
  assert.equal(recordOf(rd, OLD), "MISSING\n", "draft record put back");
  // A later rollback of the run succeeds and brings the deleted file back.
  const rb = cg(ex, ["rollback", "--run-dir", rd]);
  assert.equal(rb.code, 0, rb.stdout + rb.stderr);
  assert.deepEqual(outLines(rb), [
    `ROLLBACK: ${rd}`,
    `RESTORED: ${OLD}`,
    `RESTORED: ${STYLE}`,
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    "ROLLBACK_RESULT: 1 layer(s), ok",
  ]);
  assert.equal(read(`${ex.proj}/${OLD}`), OLD_MD);
  assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("verify-deleted PASS without an earlier record leaves none behind", () => {
  const { ex, rd } = setup({ checkpointDeletion: false });
  assert.equal(recordOf(rd, OLD), undefined);
  const r = cg(ex, ["verify-deleted", "--survivor", "CLAUDE.md", "--survivor", STYLE, OLD]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(outLines(r).at(-1), `MERGED_VERIFIED: ${OLD} -> CLAUDE.md ${STYLE}`);
  assert.equal(recordOf(rd, OLD), undefined);
  assert.ok(!existsSync(`${ex.proj}/${OLD}`));
});

Deno.test("verify-deleted FAIL: MERGE_UNPROVEN on stderr, whole-run rollback restores the deleted file", () => {
  const { ex, rd } = setup();
  const r = cg(ex, ["verify-deleted", "--run-dir", rd, "--survivor", STYLE, OLD]);
  assert.equal(r.code, 1);
  assert.deepEqual(errLines(r), [
    `MERGE_UNPROVEN: ${OLD} - survivors do not carry every critical token`,
  ]);
  assert.deepEqual(outLines(r), [
    `CHECKPOINT: ${OLD}`,
    `FILE: ${OLD}`,
    "MISSING: 1",
    "  - num:20.11",
    "GATE: FAIL",
    "ACTION: kept",
    "FILES_FAILED: 1",
    `ROLLBACK: whole run (merge unproven) ${rd}`,
    `RESTORED: ${OLD}`,
    `RESTORED: ${STYLE}`,
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    `RUN: FAILED - every file of ${rd} is back at its pre-edit bytes`,
  ]);
  assert.equal(read(`${ex.proj}/${OLD}`), OLD_MD);
  assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_MD);
  assert.equal(read(`${ex.proj}/${STYLE}`), STYLE_MD);
});

Deno.test("verify-deleted FAIL with a refused rollback leaves the file deleted, its deletion owned (restorable later)", () => {
  const { ex, rd } = setup();
  // A concurrent edit to style.md without a checkpoint: the run cannot be rolled back.
  writeTree(ex.proj, { [STYLE]: STYLE_MD + "someone else's line\n" });
  const r = cg(ex, ["verify-deleted", "--run-dir", rd, "--survivor", STYLE, OLD]);
  assert.equal(r.code, 1);
  const err = errLines(r);
  assert.equal(err[0], `MERGE_UNPROVEN: ${OLD} - survivors do not carry every critical token`);
  assert.ok(
    err.includes(`RESTORE_REFUSED: ${STYLE} (current bytes lack matching draft ownership)`),
  );
  assert.equal(
    err.at(-1),
    `RUN: FAILED - recovery incomplete; inspect preserved current files in ${rd}`,
  );
  // Nothing was ever written at the deleted path (references/context-guard.md#verify-deleted).
  assert.ok(!existsSync(`${ex.proj}/${OLD}`), "the deleted path stays absent");
  assert.equal(recordOf(rd, OLD), "MISSING\n", "the deletion is owned");
  // Once the concurrent edit is settled, restoring the deleted file works.
  const rs = cg(ex, ["restore", "--run-dir", rd, OLD]);
  assert.equal(rs.code, 0, rs.stderr);
  assert.equal(read(`${ex.proj}/${OLD}`), OLD_MD);
});

Deno.test("verify-deleted: --tokens=ext judges the survivors in the extended alphabet", () => {
  const { ex, rd } = setup();
  const args = ["--run-dir", rd, "--survivor", "CLAUDE.md", "--survivor", STYLE, OLD];
  // Every base token survives (the default alphabet, and an explicit --tokens=base).
  for (const alphabet of [[], ["--tokens=base"]]) {
    const r = cg(ex, ["verify-deleted", ...alphabet, ...args]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!existsSync(`${ex.proj}/${OLD}`));
  }
  // ext: `ver:20.11` and `file:check.sh` survive, the slug `context-slim` does not.
  const ext = cg(ex, ["verify-deleted", "--tokens=ext", ...args]);
  assert.equal(ext.code, 1);
  assert.deepEqual(outLines(ext).slice(0, 7), [
    `CHECKPOINT: ${OLD}`,
    `FILE: ${OLD}`,
    "MISSING: 1",
    "  - slug:context-slim",
    "GATE: FAIL",
    "ACTION: kept",
    "FILES_FAILED: 1",
  ]);
  assert.equal(read(`${ex.proj}/${OLD}`), OLD_MD, "rolled back");
  const bad = cg(ex, ["verify-deleted", "--tokens=full", "--survivor", "CLAUDE.md", OLD]);
  assert.equal(bad.code, 2);
  assert.deepEqual(errLines(bad), ["❌ unknown token alphabet: full (want base or ext)"]);
});

Deno.test("verify-deleted: selector heuristic takes `last` and a <ts> before the target", () => {
  const { ex, rd } = setup();
  const ts = rd.split("/").at(-1)!.slice(0, 15);
  for (const selector of ["last", ts]) {
    const r = cg(ex, [
      "verify-deleted",
      "--survivor",
      "CLAUDE.md",
      "--survivor",
      STYLE,
      selector,
      OLD,
    ]);
    assert.equal(r.code, 0, `${selector}: ${r.stderr}`);
    assert.equal(outLines(r).at(-1), `MERGED_VERIFIED: ${OLD} -> CLAUDE.md ${STYLE}`);
  }
  // A selector's word after the target is the selector too (one rule for every command).
  const r = cg(ex, ["verify-deleted", "--survivor", "CLAUDE.md", "--survivor", STYLE, OLD, "last"]);
  assert.equal(r.code, 0, r.stderr);
  // Two targets are still refused.
  const two = cg(ex, ["verify-deleted", "--survivor", "CLAUDE.md", OLD, "other.md"]);
  assert.equal(two.code, 2);
  assert.deepEqual(errLines(two), ["❌ verify-deleted takes exactly one deleted file"]);
});

Deno.test("verify-deleted: refusals exit 2 in order, nothing written", () => {
  const { ex, rd } = setup();
  mkdirSync(`${ex.proj}/adir`);
  const before = [...treeState(ex.proj), ...treeState(ex.backups)];
  const cases: [string[], string][] = [
    [["--survivor", "CLAUDE.md"], "❌ verify-deleted takes exactly one deleted file"],
    [["--survivor", "CLAUDE.md", OLD, "x.md"], "❌ verify-deleted takes exactly one deleted file"],
    [[OLD], "❌ verify-deleted needs at least one --survivor"],
    [
      ["--run-dir", `${ex.base}/nowhere`, "--survivor", "CLAUDE.md", OLD],
      `❌ no snapshot dir: ${ex.base}/nowhere/orig`,
    ],
    // A deleted file's directory may be gone with it (issue 22 item 16): no longer unresolvable,
    // the file is looked up in the run; a directory part that is a file still is.
    [
      ["--run-dir", rd, "--survivor", "CLAUDE.md", "nodir/x.md"],
      `❌ no snapshot for nodir/x.md in ${rd} - snapshot before deleting`,
    ],
    [
      ["--run-dir", rd, "--survivor", "CLAUDE.md", "CLAUDE.md/x.md"],
      "❌ cannot resolve CLAUDE.md/x.md",
    ],
    [
      ["--run-dir", rd, "--survivor", "CLAUDE.md", `${ex.base}/x.md`],
      `❌ ${ex.base}/x.md is outside the snapshot root ${ex.proj}`,
    ],
    [
      ["--run-dir", rd, "--survivor", "CLAUDE.md", "never.md"],
      `❌ no snapshot for never.md in ${rd} - snapshot before deleting`,
    ],
    [
      ["--run-dir", rd, "--survivor", "CLAUDE.md", STYLE],
      `❌ ${STYLE} is still on disk - verify-deleted is for a DELETED file`,
    ],
    [["--run-dir", rd, "--survivor", "missing.md", OLD], "❌ survivor is not a file: missing.md"],
    [
      ["--run-dir", rd, "--survivor", "CLAUDE.md", "--survivor", "adir", OLD],
      "❌ survivor is not a file: adir",
    ],
    [["--run-dir"], "❌ --run-dir needs a value"],
    [["--run-dir", "", OLD], "❌ --run-dir needs a value"],
    [["--survivor"], "❌ --survivor needs a value"],
    [["--survivor", "", OLD], "❌ --survivor needs a value"],
    [["--ledger", "l.tsv", OLD], "❌ --ledger does not apply to verify-deleted"],
    [["-", OLD], "❌ unknown option: -"],
  ];
  for (const [args, message] of cases) {
    const r = cg(ex, ["verify-deleted", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, "", args.join(" "));
    assert.deepEqual(errLines(r), [message], args.join(" "));
  }
  assert.deepEqual([...treeState(ex.proj), ...treeState(ex.backups)], before);
  // No backups at all: said so (the original printed `❌ no snapshot dir: /orig`).
  const empty = exampleProject();
  writeTree(empty.proj, {});
  const r = cg(empty, ["verify-deleted", "--survivor", "CLAUDE.md", OLD]);
  assert.equal(r.code, 2);
  assert.deepEqual(errLines(r), [`❌ no backups under ${empty.backups}`]);
});

Deno.test("verify-deleted --global: the deleted file and run dir of the global layer", () => {
  const ex = exampleProject();
  const g = `${ex.home}/.claude`;
  writeTree(g, {
    "CLAUDE.md": "Global: NEVER push 1.2.3\n",
    "rules/dup.md": "NEVER push 1.2.3 twice\n",
  });
  const snap = cg(ex, ["snapshot", "--global", `${g}/CLAUDE.md`, `${g}/rules/dup.md`]);
  assert.equal(snap.code, 0, snap.stderr);
  rmSync(`${g}/rules/dup.md`);
  const r = cg(ex, [
    "verify-deleted",
    "--global",
    "--survivor",
    `${g}/CLAUDE.md`,
    `${g}/rules/dup.md`,
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(outLines(r).at(-1), `MERGED_VERIFIED: rules/dup.md -> ${g}/CLAUDE.md`);
  // Without --global the target's location implies the layer.
  const implied = cg(ex, ["verify-deleted", "--survivor", `${g}/CLAUDE.md`, `${g}/rules/dup.md`]);
  assert.equal(implied.code, 0, implied.stderr);
  // --project names a layer with no such snapshot.
  const p = cg(ex, [
    "verify-deleted",
    "--project",
    "--survivor",
    `${g}/CLAUDE.md`,
    `${g}/rules/dup.md`,
  ]);
  assert.equal(p.code, 2);
});

Deno.test("verify-deleted: a run dir the user cannot write → exit 2, one clear line, nothing changed", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const base = makeSharedTempDir("ctxkit-vd-");
  const home = `${base}/home`;
  const proj = `${home}/proj`;
  writeTree(proj, { "CLAUDE.md": CLAUDE_MD, "old.md": OLD_MD });
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const snap = runTool("context-guard", ["snapshot", "old.md"], { cwd: proj, env });
  assert.equal(snap.code, 0, snap.stderr);
  const rd = outLines(snap).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
  rmSync(`${proj}/old.md`);
  // The run dir is the unprivileged user's own, but it may not write into it (nor the project).
  giveRunsTo(UNPRIVILEGED_ID, home);
  chmodSync(rd, 0o500);
  chmodSync(home, 0o755);
  chmodSync(proj, 0o755);
  const r = runToolAsUser("context-guard", [
    "verify-deleted",
    "--run-dir",
    rd,
    "--survivor",
    "CLAUDE.md",
    "old.md",
  ], {
    cwd: proj,
    env,
  });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.equal(r.stdout, "");
  assert.match(
    errLines(r)[0],
    /^❌ cannot record the draft: .*old\.md\.sha256 \(Permission denied\)$/,
  );
  assert.ok(!existsSync(`${proj}/old.md`));
  assert.ok(!existsSync(`${rd}/draft`));
});
