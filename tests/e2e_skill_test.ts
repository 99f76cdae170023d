/**
 * End to end: the context-slim skill's phases 1→7 (seed 004) on a fixture with both layers, through
 * the real CLIs — scan, snapshot both layers, edit + delete, checkpoint, verify with a ledger per
 * layer, verify-deleted, re-scan, state — then the way back (`rollback` of both run dirs).
 * Every file and exit code is checked.
 */
import assert from "node:assert/strict";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { runTool } from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  exampleProject,
  fileHash,
  outLines,
  read,
  STYLE_MD,
  writeTree,
} from "./_guard_fixtures.ts";
import { ScanDocumentSchema } from "../lib/scan/schema.ts";
import { WrittenManifestSchema } from "../lib/guard/manifest.ts";
import { StateDocumentSchema } from "../lib/guard/state/document.ts";

const CLAUDE_NEW = "# Project rules\nUse Node 20.11.\n" +
  "You MUST NOT push to main directly; NEVER skip review.\n" +
  "Set env!=prod when testing; retries 3.\n";
const STYLE_NEW = "# Style\n\nIndent with 2 spaces. Max line length 120.\n" +
  "ALWAYS run lint/check.sh and scripts/build.sh first.\n";
const OLD_MD = "# Old rules\n\nUse Node 20.11; ALWAYS run lint/check.sh first.\n";
const GLOBAL_MD = "# Global\nPin the tool to 4.0.6 everywhere.\nNEVER push on Fridays.\n";
const GLOBAL_NEW = "# Global\nNEVER push on Fridays.\n";
const LEDGER = "# path\tline-range\tsurvivor\treason\n" +
  "CLAUDE.md\t3\t.claude/rules/style.md\tbuild step kept in the style rules\n" +
  "CLAUDE.md\t5\t-\tlossy: the timeout is the default\n" +
  "~/.claude/CLAUDE.md\t2\t-\tlossy: the version pin is stale\n" +
  ".claude/rules/old.md\t1-3\tCLAUDE.md\tmerged into CLAUDE.md\n";

Deno.test("e2e: context-slim phases 1-7 with both layers, then the way back", () => {
  const ex = exampleProject();
  const g = `${ex.home}/.claude`;
  writeTree(ex.proj, { ".claude/rules/old.md": OLD_MD });
  writeTree(g, { "CLAUDE.md": GLOBAL_MD });
  const env = ex.env; // HOME + CLAUDE_PROJECT_DIR, cwd = project
  const cg = (args: string[]) => runTool("context-guard", args, { cwd: ex.proj, env });
  const tg = (root: string, args: string[]) =>
    runTool("text-guard", args, { cwd: ex.proj, env: { ...env, CLAUDE_PROJECT_DIR: root } });
  const scan = () => runTool("context-scan", ["--global"], { cwd: ex.proj, env });
  const work = `${ex.base}/work`; // the skill's scratch files live outside both layers
  writeTree(work, { "ledger.tsv": LEDGER });

  // Phase 1: measure.
  const s1 = scan();
  assert.equal(s1.code, 0, s1.stderr);
  const before = ScanDocumentSchema.parse(JSON.parse(s1.stdout));
  assert.deepEqual(before.scan_issues, []);
  assert.deepEqual(before.files.map((f) => f.path).sort(), [
    `${g}/CLAUDE.md`,
    `${ex.proj}/.claude/rules/old.md`,
    `${ex.proj}/.claude/rules/style.md`,
    `${ex.proj}/CLAUDE.md`,
  ]);
  writeFileSync(`${work}/phase1.json`, s1.stdout);

  // Phase 6's virgin-surface test would say absent now.
  let r = cg(["state", "--check"]);
  assert.equal(r.code, 0);
  assert.deepEqual(outLines(r), [
    `STATE: absent ${ex.proj}/.claude/brewtools/context-slim/state.json`,
  ]);

  // Phase 2: snapshot both layers, one run dir and one manifest each.
  r = cg(["snapshot", "CLAUDE.md", ".claude/rules/style.md", ".claude/rules/old.md"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(errLines(r), []);
  const project = outLines(r);
  assert.equal(
    project[0],
    "SNAPSHOT-ONLY: 2 untracked/git-ignored target(s), no git recovery - the manifest is the only one: .claude/rules/style.md .claude/rules/old.md",
  );
  assert.equal(project[1], "GIT-COVERED: 1 tracked target(s), clean");
  const prd = project.find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  assert.match(prd, /\/backups\/[0-9]{8}-[0-9]{6}-project_context-slim$/);
  r = cg(["snapshot", "--global", `${g}/CLAUDE.md`]);
  assert.equal(r.code, 0, r.stderr);
  const global = outLines(r);
  assert.equal(
    global[0],
    `⚠️ global layer: no git tree - the manifest is the only recovery path for ${g}`,
  );
  const grd = global.find((l) => l.startsWith("RUN_DIR: "))!.slice(9);
  assert.match(grd, /\/backups\/[0-9]{8}-[0-9]{6}-global_context-slim$/);
  for (
    const [rd, root, rels] of [
      [prd, ex.proj, [".claude/rules/old.md", ".claude/rules/style.md", "CLAUDE.md"]],
      [grd, g, ["CLAUDE.md"]],
    ] as const
  ) {
    const manifest = WrittenManifestSchema.parse(JSON.parse(read(`${rd}/manifest.json`)));
    assert.equal(manifest.root, root);
    assert.deepEqual(manifest.files.map((f) => f.path), rels);
    for (const f of manifest.files) assert.equal(f.sha256, fileHash(`${root}/${f.path}`));
  }

  // Phase 4: rewrite, dedup-delete, checkpoint every draft (the deletion records MISSING).
  writeTree(ex.proj, { "CLAUDE.md": CLAUDE_NEW, ".claude/rules/style.md": STYLE_NEW });
  rmSync(`${ex.proj}/.claude/rules/old.md`);
  writeTree(g, { "CLAUDE.md": GLOBAL_NEW });
  r = tg(ex.proj, [
    "checkpoint",
    "--run-dir",
    prd,
    "CLAUDE.md",
    ".claude/rules/style.md",
    ".claude/rules/old.md",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(read(`${prd}/draft/.claude/rules/old.md.sha256`), "MISSING\n");
  r = tg(g, ["checkpoint", "--run-dir", grd, `${g}/CLAUDE.md`]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(outLines(r), ["CHECKPOINT: CLAUDE.md"]);

  // Phase 5: one verify per layer, each with the ledger; then the deletion proof.
  r = cg([
    "verify",
    "--run-dir",
    prd,
    "--ledger",
    `${work}/ledger.tsv`,
    "CLAUDE.md",
    ".claude/rules/style.md",
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(errLines(r), []);
  assert.deepEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 2",
    "  - num:30",
    "  - path:scripts/build.sh",
    "LEDGERED: num:30 (row 3: 5 -> -)",
    "LEDGERED: path:scripts/build.sh (row 2: 3 -> .claude/rules/style.md)",
    "GATE: PASS (every miss ledgered)",
    "ACTION: kept",
    "FILE: .claude/rules/style.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILES_FAILED: 0",
  ]);
  r = cg([
    "verify",
    "--global",
    "--run-dir",
    grd,
    "--ledger",
    `${work}/ledger.tsv`,
    `${g}/CLAUDE.md`,
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 1",
    "  - num:4.0.6",
    "LEDGERED: num:4.0.6 (row 4: 2 -> -)",
    "GATE: PASS (every miss ledgered)",
    "ACTION: kept",
    "FILES_FAILED: 0",
  ]);
  r = cg([
    "verify-deleted",
    "--project",
    "--run-dir",
    prd,
    "--survivor",
    "CLAUDE.md",
    "--survivor",
    ".claude/rules/style.md",
    ".claude/rules/old.md",
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(outLines(r), [
    "CHECKPOINT: .claude/rules/old.md",
    "FILE: .claude/rules/old.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    "FILES_FAILED: 0",
    "MERGED_VERIFIED: .claude/rules/old.md -> CLAUDE.md .claude/rules/style.md",
  ]);
  assert.ok(!existsSync(`${ex.proj}/.claude/rules/old.md`));
  assert.equal(read(`${prd}/draft/.claude/rules/old.md.sha256`), "MISSING\n");

  // Phase 6: re-measure with the same scope.
  const s6 = scan();
  assert.equal(s6.code, 0, s6.stderr);
  const after = ScanDocumentSchema.parse(JSON.parse(s6.stdout));
  assert.deepEqual(after.scan_issues, []);
  assert.ok(!after.files.some((f) => f.path.endsWith("/old.md")));
  assert.ok(after.totals.grand.tokens < before.totals.grand.tokens);
  writeFileSync(`${work}/phase6.json`, s6.stdout);

  // Phase 7: the ratchet.
  r = cg([
    "state",
    "--mode",
    "slim",
    "--flags",
    "--global",
    "--before",
    `${work}/phase1.json`,
    "--after",
    `${work}/phase6.json`,
    "--ledger",
    `${work}/ledger.tsv`,
  ]);
  const statePath = `${ex.proj}/.claude/brewtools/context-slim/state.json`;
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(outLines(r), [`STATE: written ${statePath}`]);
  const text = read(statePath);
  const state = StateDocumentSchema.parse(JSON.parse(text));
  assert.equal(state.mode, "slim");
  assert.equal(state.flags, "--global");
  assert.deepEqual(state.totals, {
    before_tokens: before.totals.grand.tokens,
    after_tokens: after.totals.grand.tokens,
  });
  const b = before.totals.grand.tokens;
  const a = after.totals.grand.tokens;
  // Token counts are bytes/4 of the fixture files: fixed, so the whole document is known.
  assert.deepEqual([b, a], [101, 65]);
  const file = (path: string, bt: number, at: number) =>
    `    {\n      "path": "${path}",\n      "before_tokens": ${bt},\n      "after_tokens": ${at}\n    }`;
  const drop = (path: string, lines: string, survivor: string, reason: string) =>
    `    {\n      "path": "${path}",\n      "lines": "${lines}",\n      "survivor": "${survivor}",\n` +
    `      "reason": "${reason}"\n    }`;
  assert.equal(
    text,
    [
      "{",
      `  "schema": 1,`,
      `  "timestamp": "${state.timestamp}",`,
      `  "mode": "slim",`,
      `  "flags": "--global",`,
      `  "totals": {`,
      `    "before_tokens": 101,`,
      `    "after_tokens": 65`,
      `  },`,
      `  "achieved_ratio_pct": 35.64,`,
      `  "files": [`,
      [
        file(`${g}/CLAUDE.md`, 16, 8),
        file(`${ex.proj}/.claude/rules/old.md`, 15, 0),
        file(`${ex.proj}/.claude/rules/style.md`, 21, 26),
        file(`${ex.proj}/CLAUDE.md`, 49, 31),
      ].join(",\n"),
      `  ],`,
      `  "drops": [`,
      [
        drop("CLAUDE.md", "3", ".claude/rules/style.md", "build step kept in the style rules"),
        drop("CLAUDE.md", "5", "-", "lossy: the timeout is the default"),
        drop("~/.claude/CLAUDE.md", "2", "-", "lossy: the version pin is stale"),
        drop(".claude/rules/old.md", "1-3", "CLAUDE.md", "merged into CLAUDE.md"),
      ].join(",\n"),
      `  ]`,
      "}",
      "",
    ].join("\n"),
  );
  const oldRow = state.files.find((f) => f.path.endsWith("/old.md"))!;
  assert.equal(oldRow.after_tokens, 0);
  assert.ok(oldRow.before_tokens > 0);
  assert.deepEqual(state.drops, [
    {
      path: "CLAUDE.md",
      lines: "3",
      survivor: ".claude/rules/style.md",
      reason: "build step kept in the style rules",
    },
    { path: "CLAUDE.md", lines: "5", survivor: "-", reason: "lossy: the timeout is the default" },
    {
      path: "~/.claude/CLAUDE.md",
      lines: "2",
      survivor: "-",
      reason: "lossy: the version pin is stale",
    },
    {
      path: ".claude/rules/old.md",
      lines: "1-3",
      survivor: "CLAUDE.md",
      reason: "merged into CLAUDE.md",
    },
  ]);
  r = cg(["state", "--check"]);
  assert.deepEqual(outLines(r), [`STATE: present ${statePath}`]);

  // The way back the report names: rollback of both run dirs restores every file, the deleted one
  // included (its ownership record survived verify-deleted).
  r = cg(["rollback", "--run-dir", prd, "--run-dir", grd]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(outLines(r), [
    `ROLLBACK: ${prd}`,
    "RESTORED: .claude/rules/old.md",
    "RESTORED: .claude/rules/style.md",
    "RESTORED: CLAUDE.md",
    `STATE: removed ${statePath}`,
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${prd})`,
    `ROLLBACK: ${grd}`,
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${grd})`,
    "ROLLBACK_RESULT: 2 layer(s), ok",
  ]);
  assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_MD);
  assert.equal(read(`${ex.proj}/.claude/rules/style.md`), STYLE_MD);
  assert.equal(read(`${ex.proj}/.claude/rules/old.md`), OLD_MD);
  assert.equal(read(`${g}/CLAUDE.md`), GLOBAL_MD);
  // The state belongs to the run: undoing the run undoes the ratchet it wrote, so the next run's
  // virgin-surface test sees the tree as it now is (references/context-guard.md#ratchet-state).
  assert.equal(existsSync(statePath), false);
  assert.deepEqual(outLines(cg(["state", "--check"])), [`STATE: absent ${statePath}`]);
  assert.ok(text.length > 0);
});
