/**
 * Snapshot-trust runs and forced restores (`references/context-guard.md#snapshot-trust`,
 * `#displaced`, `#may-restore`): the released skills, which never checkpoint, get their undo back
 * without losing a byte, and after any refusal the printed command brings a file back.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { runTool } from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  exampleProject,
  outLines,
  read,
  refusedLines,
  STYLE_MD,
} from "./_guard_fixtures.ts";

const LOSSY = "# Project rules\n\nUse Node and run the build.\n";
const TRUST = { CTXKIT_GUARD_TRUST: "snapshot" };

type Project = ReturnType<typeof exampleProject>;

function cg(p: Project, args: string[], env: Record<string, string> = {}) {
  return runTool("context-guard", args, { cwd: p.proj, env: { ...p.env, ...env } });
}

function tg(p: Project, args: string[], env: Record<string, string> = {}) {
  return runTool("text-guard", args, { cwd: p.proj, env: { ...p.env, ...env } });
}

function runDirOf(stdout: string): string {
  return stdout.split("\n").find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
}

/** Every displaced copy of a run dir: `<n>/<rel>` → its text. */
function displaced(runDir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const root = `${runDir}/displaced`;
  if (!existsSync(root)) return out;
  for (const rel of readdirSync(root, { recursive: true }) as string[]) {
    try {
      out[rel] = readFileSync(`${root}/${rel}`, "utf8");
    } catch { /* a directory */ }
  }
  return out;
}

Deno.test("trust: a released-style context-guard run rolls back without checkpoints, keeping the edits in displaced/", () => {
  const p = exampleProject();
  const snap = cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"], TRUST);
  strictEqual(snap.code, 0, snap.stderr);
  const rd = runDirOf(snap.stdout);
  strictEqual(read(`${rd}/trust`), "snapshot\n");
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  const r = cg(p, ["verify", "--run-dir", rd, "CLAUDE.md", ".claude/rules/style.md"]);
  strictEqual(r.code, 1, r.stderr);
  deepStrictEqual(errLines(r), []);
  deepStrictEqual(outLines(r).slice(-6), [
    `ROLLBACK: whole run (gate failed) ${rd}`,
    "RESTORED: .claude/rules/style.md",
    `DISPLACED: CLAUDE.md -> ${rd}/displaced/1/CLAUDE.md`,
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    `RUN: FAILED - every file of ${rd} is back at its pre-edit bytes`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
  deepStrictEqual(displaced(rd), { "1/CLAUDE.md": LOSSY });

  // Another lossy round, undone by rollback and by restore: each keeps what it replaces.
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY + "two\n");
  const rb = cg(p, ["rollback", "--run-dir", rd]);
  strictEqual(rb.code, 0, rb.stderr);
  deepStrictEqual(outLines(rb), [
    `ROLLBACK: ${rd}`,
    "RESTORED: .claude/rules/style.md",
    `DISPLACED: CLAUDE.md -> ${rd}/displaced/2/CLAUDE.md`,
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    "ROLLBACK_RESULT: 1 layer(s), ok",
  ]);
  writeFileSync(`${p.proj}/.claude/rules/style.md`, "# Style\n");
  const rs = cg(p, ["restore", "last"]);
  strictEqual(rs.code, 0, rs.stderr);
  deepStrictEqual(outLines(rs), [
    `DISPLACED: .claude/rules/style.md -> ${rd}/displaced/3/.claude/rules/style.md`,
    "RESTORED: .claude/rules/style.md",
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
  ]);
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
  deepStrictEqual(displaced(rd), {
    "1/CLAUDE.md": LOSSY,
    "2/CLAUDE.md": LOSSY + "two\n",
    "3/.claude/rules/style.md": "# Style\n",
  });
});

Deno.test("trust: without the mode the same run refuses (the released skill's undo was off)", () => {
  const p = exampleProject();
  const rd = runDirOf(cg(p, ["snapshot", "CLAUDE.md"]).stdout);
  ok(!existsSync(`${rd}/trust`));
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  const r = cg(p, ["verify", "--run-dir", rd, "CLAUDE.md"]);
  strictEqual(r.code, 1);
  deepStrictEqual(errLines(r), [
    ...refusedLines("context-guard", rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`),
    `ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${rd})`,
    `RUN: FAILED - recovery incomplete; inspect preserved current files in ${rd}`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), LOSSY);
});

Deno.test("trust: a file the run checkpointed keeps the ownership proof (a later edit is someone else's)", () => {
  const p = exampleProject();
  const rd = runDirOf(cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"], TRUST).stdout);
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  strictEqual(tg(p, ["checkpoint", "--run-dir", rd, "CLAUDE.md"]).code, 0);
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY + "the user's own line\n");
  writeFileSync(`${p.proj}/.claude/rules/style.md`, "# Style\n");
  const r = cg(p, ["rollback", "--run-dir", rd]);
  strictEqual(r.code, 1);
  deepStrictEqual(errLines(r), [
    ...refusedLines("context-guard", rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`),
    `ROLLBACK_VERIFIED: FAILED - restoration refused; current bytes preserved (${rd})`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), LOSSY + "the user's own line\n");
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), "# Style\n");
  deepStrictEqual(displaced(rd), {});
});

Deno.test("trust: text-guard verify restores a released-style run and keeps the lossy bytes", () => {
  const p = exampleProject();
  const rd = `${p.base}/run`;
  strictEqual(tg(p, ["snapshot", "--allow-dirty", "--run-dir", rd, "CLAUDE.md"], TRUST).code, 0);
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  const r = tg(p, ["verify", "--run-dir", rd, "CLAUDE.md"]);
  strictEqual(r.code, 1);
  deepStrictEqual(errLines(r), []);
  deepStrictEqual(outLines(r).slice(-4), [
    "GATE: FAIL",
    `DISPLACED: CLAUDE.md -> ${rd}/displaced/1/CLAUDE.md`,
    "ACTION: restored",
    "FILES_FAILED: 1",
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  writeFileSync(`${p.proj}/CLAUDE.md`, "obliterated\n");
  const rs = tg(p, ["restore", "--run-dir", rd, "CLAUDE.md"]);
  strictEqual(rs.code, 0, rs.stderr);
  deepStrictEqual(outLines(rs), [
    `DISPLACED: CLAUDE.md -> ${rd}/displaced/2/CLAUDE.md`,
    "RESTORED: CLAUDE.md",
  ]);
  deepStrictEqual(displaced(rd), { "1/CLAUDE.md": LOSSY, "2/CLAUDE.md": "obliterated\n" });
});

Deno.test("trust: an unknown CTXKIT_GUARD_TRUST value takes no run", () => {
  const p = exampleProject();
  const r = cg(p, ["snapshot", "CLAUDE.md"], { CTXKIT_GUARD_TRUST: "yes" });
  strictEqual(r.code, 2);
  deepStrictEqual(errLines(r), ["❌ invalid CTXKIT_GUARD_TRUST: yes (want snapshot, or unset)"]);
  ok(!existsSync(p.backups));
});

Deno.test("force: the command a refusal prints restores the file, keeping the current bytes", () => {
  const p = exampleProject();
  const rd = runDirOf(cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]).stdout);
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  const refused = cg(p, ["restore", "--run-dir", rd]);
  strictEqual(refused.code, 1);
  const hint = errLines(refused)[2];
  const printed = hint.slice(hint.indexOf("/displaced/: ") + "/displaced/: ".length);
  // Run as printed, from anywhere.
  const out = new Deno.Command("sh", {
    args: ["-c", printed],
    cwd: "/",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: p.home },
  }).outputSync();
  const dec = new TextDecoder();
  strictEqual(out.code, 0, dec.decode(out.stderr));
  deepStrictEqual(dec.decode(out.stdout).trimEnd().split("\n"), [
    `DISPLACED: CLAUDE.md -> ${rd}/displaced/1/CLAUDE.md`,
    "RESTORED: CLAUDE.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  deepStrictEqual(displaced(rd), { "1/CLAUDE.md": LOSSY });
});

Deno.test("force: named files only, with --run-dir; a link or a directory at the target is still refused", () => {
  const p = exampleProject();
  const rd = runDirOf(cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]).stdout);
  for (const args of [["--force"], ["--force", "CLAUDE.md"], ["--run-dir", rd, "--force"]]) {
    const r = cg(p, ["restore", ...args]);
    strictEqual(r.code, 2, args.join(" "));
    deepStrictEqual(errLines(r), ["❌ restore --force needs --run-dir and the files to restore"]);
  }
  unlinkSync(`${p.proj}/CLAUDE.md`);
  symlinkSync(`${p.proj}/.claude/rules/style.md`, `${p.proj}/CLAUDE.md`);
  const linked = cg(p, ["restore", "--run-dir", rd, "--force", "CLAUDE.md"]);
  strictEqual(linked.code, 1);
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
  unlinkSync(`${p.proj}/CLAUDE.md`);
  mkdirSync(`${p.proj}/CLAUDE.md`);
  const dir = cg(p, ["restore", "--run-dir", rd, "--force", "CLAUDE.md"]);
  strictEqual(dir.code, 1);
  deepStrictEqual(displaced(rd), {});
  // A deleted file comes back; nothing to keep.
  Deno.removeSync(`${p.proj}/CLAUDE.md`);
  writeFileSync(`${p.proj}/.claude/rules/style.md`, "# Style\n");
  const back = cg(p, [
    "restore",
    "--run-dir",
    rd,
    "--force",
    "CLAUDE.md",
    ".claude/rules/style.md",
  ]);
  strictEqual(back.code, 0, back.stderr);
  deepStrictEqual(outLines(back), [
    "RESTORED: CLAUDE.md",
    `DISPLACED: .claude/rules/style.md -> ${rd}/displaced/1/.claude/rules/style.md`,
    "RESTORED: .claude/rules/style.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});

Deno.test("force: text-guard's refusal names its own forced restore, with the root", () => {
  const p = exampleProject();
  const rd = `${p.base}/run`;
  strictEqual(tg(p, ["snapshot", "--allow-dirty", "--run-dir", rd, "CLAUDE.md"]).code, 0);
  writeFileSync(`${p.proj}/CLAUDE.md`, LOSSY);
  const r = tg(p, ["restore", "--run-dir", rd, "CLAUDE.md"]);
  strictEqual(r.code, 1);
  deepStrictEqual(
    errLines(r),
    refusedLines("text-guard", rd, "CLAUDE.md", `${p.proj}/CLAUDE.md`, p.proj),
  );
  const f = tg(p, ["restore", "--run-dir", rd, "--force", "CLAUDE.md"]);
  strictEqual(f.code, 0, f.stderr);
  deepStrictEqual(outLines(f), [
    `DISPLACED: CLAUDE.md -> ${rd}/displaced/1/CLAUDE.md`,
    "RESTORED: CLAUDE.md",
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
});
