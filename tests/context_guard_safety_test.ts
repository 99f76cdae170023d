/**
 * context-guard under hostile and unusual conditions (`references/context-guard.md#selection`,
 * `#backups-and-run-dirs`, `#deviations-from-the-original-scripts`): several projects sharing one
 * HOME, run names made under other time zones, links and special files on every written path, the
 * token gate's size limit, dotfiles-linked global files, the layers of one run, the one root rule,
 * restored modes and the ratchet that follows an undo.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { git, IS_ROOT, type RunResult, runTool, writeTree } from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  type ExampleProject,
  exampleProject,
  fileHash,
  modeOf,
  outLines,
  read,
  STYLE_MD,
  treeState,
} from "./_guard_fixtures.ts";

function cg(
  p: ExampleProject,
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd = p.proj,
): RunResult {
  return runTool("context-guard", args, { cwd, env: { ...p.env, ...env } });
}

function tg(p: ExampleProject, args: string[], env: Record<string, string | undefined> = {}) {
  return runTool("text-guard", args, { cwd: p.proj, env: { ...p.env, ...env } });
}

function runDirOf(r: RunResult): string {
  strictEqual(r.code, 0, r.stderr);
  return outLines(r).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
}

function dies(r: RunResult, code: number, ...stderr: string[]) {
  strictEqual(r.code, code, r.stderr);
  deepStrictEqual(errLines(r), stderr);
}

/** A second git project `other` next to `p`, sharing p's HOME (and so its backups). */
function sibling(p: ExampleProject, name = "other"): ExampleProject {
  const proj = `${p.home}/${name}`;
  writeTree(proj, { "CLAUDE.md": `${name} NEVER 7\n` });
  git(proj, "init", "-q");
  git(proj, "add", "CLAUDE.md");
  git(proj, "commit", "-qm", "init");
  return { ...p, proj, env: { HOME: p.home, CLAUDE_PROJECT_DIR: proj } };
}

Deno.test("another project's run is never picked: verify, rollback, restore last, retention", () => {
  const a = exampleProject();
  const b = sibling(a);
  const runA = runDirOf(cg(a, ["snapshot", "CLAUDE.md"]));
  // B snapshots, edits and verifies its own run: an edit B accepted.
  const runB = runDirOf(cg(b, ["snapshot", "CLAUDE.md"]));
  writeFileSync(`${b.proj}/CLAUDE.md`, "other NEVER 7 (accepted edit)\n");
  tg(b, ["checkpoint", "--run-dir", runB, "CLAUDE.md"]);
  strictEqual(cg(b, ["verify", "--run-dir", runB, "CLAUDE.md"]).code, 0);
  const accepted = read(`${b.proj}/CLAUDE.md`);
  // In A, B's run is the newest in the shared backups; every implicit selection takes A's own.
  writeFileSync(`${a.proj}/CLAUDE.md`, CLAUDE_MD.replace("30", "thirty"));
  tg(a, ["checkpoint", "--run-dir", runA, "CLAUDE.md"]);
  const v = cg(a, ["verify", "CLAUDE.md"]);
  strictEqual(v.code, 1);
  ok(outLines(v).includes(`ROLLBACK: whole run (gate failed) ${runA}`), v.stdout);
  strictEqual(read(`${a.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${b.proj}/CLAUDE.md`), accepted, "B's accepted edit survives");
  const rb = cg(a, ["rollback"]);
  strictEqual(rb.code, 0, rb.stderr);
  deepStrictEqual(outLines(rb).filter((l) => l.startsWith("ROLLBACK:")), [`ROLLBACK: ${runA}`]);
  const rl = cg(a, ["restore", "last"]);
  strictEqual(rl.code, 0, rl.stderr);
  ok(outLines(rl).every((l) => !l.includes(runB)), rl.stdout);
  strictEqual(read(`${b.proj}/CLAUDE.md`), accepted);
  // `list` shows this project's runs only.
  deepStrictEqual(outLines(cg(a, ["list"])).slice(2).map((l) => l.split(" | ")[0].slice(2)), [
    runA.slice(a.backups.length + 1),
  ]);
  // Five more snapshots in A keep B's only run.
  for (let i = 0; i < 5; i++) {
    strictEqual(cg(a, ["snapshot", "--allow-dirty", "CLAUDE.md"]).code, 0);
  }
  ok(existsSync(`${runB}/manifest.json`), "B's run kept");
  // A project with no run of its own gets a clear answer, B's run untouched.
  const c = sibling(a, "third");
  dies(
    cg(c, ["restore", "last"]),
    2,
    `❌ no backups under ${a.backups} for the project root ${c.proj}`,
  );
  // Naming B's run explicitly still works, on B's own root.
  const named = cg(a, ["verify", "--run-dir", runB, `${b.proj}/CLAUDE.md`]);
  strictEqual(named.code, 0, named.stderr);
});

Deno.test("runs named under another time zone: order and retention follow creation, not the name", () => {
  const p = exampleProject();
  const runs: string[] = [];
  // East of UTC first, then far west: the later run's name reads a day earlier.
  for (const tz of ["Pacific/Kiritimati", "Etc/GMT+12"]) {
    runs.push(runDirOf(cg(p, ["snapshot", "--allow-dirty", "CLAUDE.md"], { TZ: tz })));
    writeFileSync(`${p.proj}/CLAUDE.md`, `${CLAUDE_MD}edit ${tz}\n`);
  }
  ok(runs[1].slice(p.backups.length + 1) < runs[0].slice(p.backups.length + 1), "names disagree");
  const list = outLines(cg(p, ["list"])).slice(2).map((l) =>
    `${p.backups}/${l.split(" | ")[0].slice(2)}`
  );
  deepStrictEqual(list, [runs[1], runs[0]]);
  // restore last takes the run made last: its copy has the first edit.
  tg(p, ["checkpoint", "--run-dir", runs[1], "CLAUDE.md"]);
  const r = cg(p, ["restore", "last"]);
  strictEqual(r.code, 0, r.stderr);
  ok(outLines(r).at(-1)!.endsWith(`(${runs[1]})`), r.stdout);
  strictEqual(read(`${p.proj}/CLAUDE.md`), `${CLAUDE_MD}edit Pacific/Kiritimati\n`);
  // Retention never removes the run made seconds ago, whatever its name says.
  for (let i = 0; i < 6; i++) cg(p, ["snapshot", "--allow-dirty", "CLAUDE.md"], { TZ: "UTC" });
  ok(existsSync(`${runs[1]}/manifest.json`) && existsSync(`${runs[0]}/manifest.json`));
});

Deno.test("state never writes through a linked directory or into a FIFO, device or directory", () => {
  const p = exampleProject();
  const scan = `${p.base}/scan.json`;
  writeFileSync(scan, '{"scan_issues":[],"files":[],"totals":{"grand":{"tokens":0}}}');
  const args = ["state", "--mode", "m", "--before", scan, "--after", scan];
  // A committed link `.claude/brewtools/context-slim -> elsewhere`.
  mkdirSync(`${p.base}/elsewhere`);
  mkdirSync(`${p.proj}/.claude/brewtools`, { recursive: true });
  symlinkSync(`${p.base}/elsewhere`, `${p.proj}/.claude/brewtools/context-slim`);
  let r = cg(p, args);
  strictEqual(r.code, 2);
  deepStrictEqual(errLines(r), [
    `❌ cannot write state file: ${p.proj}/.claude/brewtools/context-slim/state.json (refusing to write through a symbolic link: ${p.proj}/.claude/brewtools/context-slim)`,
  ]);
  deepStrictEqual(readdirSync(`${p.base}/elsewhere`), []);
  // A FIFO, a directory (and, as root, a character device) at --out are refused, left as they are.
  new Deno.Command("mkfifo", { args: [`${p.base}/fifo`] }).outputSync();
  mkdirSync(`${p.base}/dir`);
  const specials = [`${p.base}/fifo`, `${p.base}/dir`];
  if (IS_ROOT) {
    new Deno.Command("mknod", { args: [`${p.base}/null`, "c", "1", "3"] }).outputSync();
    specials.push(`${p.base}/null`);
  }
  for (const out of specials) {
    const before = lstatSync(out);
    r = cg(p, [...args, "--out", out]);
    strictEqual(r.code, 2, out);
    deepStrictEqual(errLines(r), [`❌ cannot write state file: ${out} (not a regular file)`]);
    const after = lstatSync(out);
    strictEqual(after.ino, before.ino, out);
    strictEqual(after.isFile(), false, out);
  }
});

Deno.test("a FIFO or a directory .gitignore is refused at once, and no run dir is left", () => {
  for (const kind of ["fifo", "dir"]) {
    const p = exampleProject();
    if (kind === "fifo") {
      new Deno.Command("mkfifo", { args: [`${p.proj}/.gitignore`] }).outputSync();
    } else mkdirSync(`${p.proj}/.gitignore`);
    const r = cg(p, ["snapshot", "--allow-dirty", "CLAUDE.md"]);
    strictEqual(r.code, 2, kind);
    deepStrictEqual(errLines(r), [
      `❌ refusing to update ignore file that is not a regular file: ${p.proj}/.gitignore`,
      "❌ snapshot failed (text-guard exit 2)",
    ]);
    ok(!existsSync(p.backups) || readdirSync(p.backups).length === 0, kind);
    // Nothing half-made blocks the way back.
    dies(cg(p, ["restore", "last"]), 2, `❌ no backups under ${p.backups}`);
  }
});

Deno.test("links at orig/, at --run-dir and at a draft record are clear refusals, exit 2", () => {
  const p = exampleProject();
  const run = runDirOf(cg(p, ["snapshot", "CLAUDE.md"]));
  // A link at the run dir itself.
  symlinkSync(run, `${p.base}/linked-run`);
  dies(
    cg(p, ["restore", "--run-dir", `${p.base}/linked-run`]),
    2,
    `❌ symbolic-link snapshot path: ${p.base}/linked-run`,
  );
  dies(
    tg(p, ["verify", "--run-dir", `${p.base}/linked-run`, "CLAUDE.md"]),
    2,
    `❌ symbolic-link snapshot path: ${p.base}/linked-run`,
  );
  // A link planted at a draft record.
  mkdirSync(`${run}/draft`, { recursive: true, mode: 0o700 });
  writeFileSync(`${p.base}/victim`, "keep\n");
  symlinkSync(`${p.base}/victim`, `${run}/draft/CLAUDE.md.sha256`);
  dies(
    tg(p, ["checkpoint", "--run-dir", run, "CLAUDE.md"]),
    2,
    `❌ refusing to replace symbolic link: ${run}/draft/CLAUDE.md.sha256`,
  );
  strictEqual(read(`${p.base}/victim`), "keep\n");
  // orig/ replaced by a link to copies elsewhere: never followed.
  renameSync(`${run}/orig`, `${p.base}/orig-elsewhere`);
  symlinkSync(`${p.base}/orig-elsewhere`, `${run}/orig`);
  writeFileSync(`${p.proj}/CLAUDE.md`, "edited\n");
  const before = treeState(p.proj);
  dies(cg(p, ["restore", "--run-dir", run]), 2, `❌ symbolic-link snapshot path: ${run}/orig`);
  deepStrictEqual(treeState(p.proj), before);
});

Deno.test("the token gate refuses a file above 64 MiB with one clear line, before any report", () => {
  const p = exampleProject();
  const run = runDirOf(cg(p, ["snapshot", "--allow-dirty", "CLAUDE.md"]));
  truncateSync(`${p.proj}/CLAUDE.md`, 64 * 1024 * 1024 + 1); // sparse: costs no disk
  const r = cg(p, ["verify", "--run-dir", run, "CLAUDE.md"]);
  strictEqual(r.code, 2);
  strictEqual(r.stdout, "");
  deepStrictEqual(errLines(r), [
    `❌ too large for the token gate: CLAUDE.md (67108865 bytes; the limit is 67108864)`,
  ]);
});

Deno.test("restore <file> of a manifest file the user deleted restores it (a file, never a selector)", () => {
  const p = exampleProject();
  const run = runDirOf(cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]));
  unlinkSync(`${p.proj}/.claude/rules/style.md`);
  tg(p, ["checkpoint", "--run-dir", run, ".claude/rules/style.md"]);
  const r = cg(p, ["restore", ".claude/rules/style.md"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r), [
    "RESTORED: .claude/rules/style.md",
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${run})`,
  ]);
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
});

Deno.test("dotfiles: a linked ~/.claude/CLAUDE.md is snapshotted by content, restored to its target", () => {
  const p = exampleProject();
  const dot = `${p.base}/dotfiles`;
  writeTree(dot, { "CLAUDE.md": "global NEVER 1\n", "other.md": "other NEVER 2\n" });
  mkdirSync(`${p.home}/.claude`, { recursive: true });
  symlinkSync(`${dot}/CLAUDE.md`, `${p.home}/.claude/CLAUDE.md`);
  const s = cg(p, ["snapshot", "--global", `${p.home}/.claude/CLAUDE.md`]);
  const run = runDirOf(s);
  const manifest = read(`${run}/manifest.json`);
  ok(
    manifest.includes(`"path": "CLAUDE.md"`) &&
      manifest.includes(`"link_target": "${dot}/CLAUDE.md"`),
    manifest,
  );
  // The optimizer rewrites the file through the link and checkpoints it; verify fails; rollback.
  writeFileSync(`${p.home}/.claude/CLAUDE.md`, "global\n");
  strictEqual(
    tg(p, ["checkpoint", "--run-dir", run, `${p.home}/.claude/CLAUDE.md`], {
      CLAUDE_PROJECT_DIR: `${p.home}/.claude`,
    }).code,
    0,
  );
  const v = cg(p, ["verify", "--run-dir", run, `${p.home}/.claude/CLAUDE.md`]);
  strictEqual(v.code, 1, v.stderr);
  strictEqual(read(`${dot}/CLAUDE.md`), "global NEVER 1\n");
  ok(lstatSync(`${p.home}/.claude/CLAUDE.md`).isSymbolicLink(), "the link stays a link");
  // A link re-pointed elsewhere is never written through: refused, bytes kept.
  unlinkSync(`${p.home}/.claude/CLAUDE.md`);
  symlinkSync(`${dot}/other.md`, `${p.home}/.claude/CLAUDE.md`);
  const r = cg(p, ["restore", "--run-dir", run]);
  strictEqual(r.code, 1);
  strictEqual(read(`${dot}/other.md`), "other NEVER 2\n");
  // Project-layer links stay refused.
  symlinkSync(`${dot}/other.md`, `${p.proj}/linked.md`);
  strictEqual(cg(p, ["snapshot", "--allow-dirty", "linked.md"]).code, 2);
});

Deno.test("the way back: restore last and rollback take both layers of one invocation", () => {
  const p = exampleProject();
  writeTree(`${p.home}/.claude`, { "CLAUDE.md": "global NEVER 1\n" });
  const proj = runDirOf(cg(p, ["snapshot", "CLAUDE.md"]));
  // The skill's second command, seconds later (another second for sure).
  const wait = Date.now() + 1100;
  while (Date.now() < wait) { /* the names must differ by their second */ }
  const glob = runDirOf(cg(p, ["snapshot", "--global", `${p.home}/.claude/CLAUDE.md`]));
  ok(proj.slice(-30, -13) !== glob.slice(-30, -13));
  writeFileSync(`${p.proj}/CLAUDE.md`, "p edit\n");
  writeFileSync(`${p.home}/.claude/CLAUDE.md`, "g edit\n");
  tg(p, ["checkpoint", "--run-dir", proj, "CLAUDE.md"]);
  tg(p, ["checkpoint", "--run-dir", glob, `${p.home}/.claude/CLAUDE.md`], {
    CLAUDE_PROJECT_DIR: `${p.home}/.claude`,
  });
  const r = cg(p, ["rollback"]);
  strictEqual(r.code, 0, r.stderr);
  deepStrictEqual(outLines(r).filter((l) => /^ROLLBACK(_RESULT)?:/.test(l)), [
    `ROLLBACK: ${proj}`,
    `ROLLBACK: ${glob}`,
    "ROLLBACK_RESULT: 2 layer(s), ok",
  ]);
  strictEqual(read(`${p.proj}/CLAUDE.md`), CLAUDE_MD);
  strictEqual(read(`${p.home}/.claude/CLAUDE.md`), "global NEVER 1\n");
  const list = outLines(cg(p, ["list"])).slice(2);
  deepStrictEqual(list.map((l) => l.split(" | ").at(-1)), ["global |", "project |"]);
});

Deno.test("one root rule: from a subdirectory of a git tree the project root is its top level", () => {
  const p = exampleProject();
  mkdirSync(`${p.proj}/brewtools`);
  const env = { CLAUDE_PROJECT_DIR: undefined };
  const r = cg(p, ["snapshot", "../CLAUDE.md"], env, `${p.proj}/brewtools`);
  strictEqual(r.code, 0, r.stderr);
  ok(outLines(r).includes(`ROOT: ${p.proj}`), r.stdout);
  ok(outLines(r).includes("  CLAUDE.md"), r.stdout);
  ok(!existsSync(`${p.proj}/brewtools/.gitignore`));
  deepStrictEqual(outLines(cg(p, ["state", "--check"], env, `${p.proj}/brewtools`)), [
    `STATE: absent ${p.proj}/.claude/brewtools/context-slim/state.json`,
  ]);
});

Deno.test("--run-dir decides the layer; a contradicting flag is a usage error naming both", () => {
  const p = exampleProject();
  writeTree(`${p.home}/.claude`, { "CLAUDE.md": "global NEVER 1\n" });
  const glob = runDirOf(cg(p, ["snapshot", "--global", `${p.home}/.claude/CLAUDE.md`]));
  const v = cg(p, ["verify", "--run-dir", glob, `${p.home}/.claude/CLAUDE.md`]);
  strictEqual(v.code, 0, v.stderr);
  dies(
    cg(p, ["verify", "--project", "--run-dir", glob, `${p.home}/.claude/CLAUDE.md`]),
    2,
    `❌ --project contradicts the run dir ${glob}: its manifest is of the global layer`,
  );
  // Global-layer messages name the global root.
  dies(
    cg(p, ["verify", "--run-dir", glob, "CLAUDE.md"]),
    2,
    `❌ CLAUDE.md is outside the global root ${p.home}/.claude`,
  );
});

Deno.test("restore gives a file back its recorded mode and leaves an already restored file untouched", () => {
  const p = exampleProject();
  chmodSync(`${p.proj}/.claude/rules/style.md`, 0o644);
  chmodSync(`${p.proj}/CLAUDE.md`, 0o640);
  const run = runDirOf(cg(p, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]));
  unlinkSync(`${p.proj}/.claude/rules/style.md`);
  tg(p, ["checkpoint", "--run-dir", run, ".claude/rules/style.md"]);
  const inode = statSync(`${p.proj}/CLAUDE.md`).ino;
  const mtime = statSync(`${p.proj}/CLAUDE.md`).mtimeMs;
  const r = cg(p, ["restore", "--run-dir", run]);
  strictEqual(r.code, 0, r.stderr);
  ok(outLines(r).includes("RESTORED: CLAUDE.md"), "the line stays");
  strictEqual(modeOf(`${p.proj}/.claude/rules/style.md`), 0o644);
  strictEqual(read(`${p.proj}/.claude/rules/style.md`), STYLE_MD);
  strictEqual(statSync(`${p.proj}/CLAUDE.md`).ino, inode, "untouched: same inode");
  strictEqual(statSync(`${p.proj}/CLAUDE.md`).mtimeMs, mtime, "untouched: same mtime");
  strictEqual(modeOf(`${p.proj}/CLAUDE.md`), 0o640);
  strictEqual(fileHash(`${p.proj}/CLAUDE.md`), fileHash(`${run}/orig/CLAUDE.md`));
});

Deno.test("the ratchet follows an undo: restoring the whole run puts state.json back as it was", () => {
  const p = exampleProject();
  const scan = `${p.base}/scan.json`;
  writeFileSync(scan, '{"scan_issues":[],"files":[],"totals":{"grand":{"tokens":0}}}');
  const statePath = `${p.proj}/.claude/brewtools/context-slim/state.json`;
  const run = runDirOf(cg(p, ["snapshot", "CLAUDE.md"]));
  strictEqual(cg(p, ["state", "--mode", "m", "--before", scan, "--after", scan]).code, 0);
  deepStrictEqual(outLines(cg(p, ["state", "--check"])), [`STATE: present ${statePath}`]);
  const r = cg(p, ["restore", "last"]);
  strictEqual(r.code, 0, r.stderr);
  // The skill reads RESTORE_VERIFIED as the last line per run dir: the state line comes before it.
  deepStrictEqual(outLines(r).slice(-2), [
    `STATE: removed ${statePath}`,
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${run})`,
  ]);
  deepStrictEqual(outLines(cg(p, ["state", "--check"])), [`STATE: absent ${statePath}`]);
  // A state file that existed before the run comes back byte for byte.
  writeFileSync(statePath, "previous ratchet\n");
  runDirOf(cg(p, ["snapshot", "--allow-dirty", "CLAUDE.md"]));
  strictEqual(cg(p, ["state", "--mode", "m", "--before", scan, "--after", scan]).code, 0);
  strictEqual(cg(p, ["rollback"]).code, 0);
  strictEqual(read(statePath), "previous ratchet\n");
  rmSync(statePath);
});
