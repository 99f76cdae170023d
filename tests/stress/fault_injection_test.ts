/**
 * Fault injection (reliability suite): `context-guard snapshot`, `restore`, `rollback` and
 * `prose on` are killed with SIGKILL at every instrumented checkpoint (lib/faults.ts) and after
 * seeded random delays. After each kill every user file is byte-identical to its old or its new
 * content, the prose flag is absent or valid, and the next run of the same command succeeds and
 * leaves no ctxkit temp file next to a user's file.
 *
 * Replay a failure with `CTXKIT_STRESS_SEED=<seed printed> deno task test:stress`.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readManifest } from "../../lib/guard/manifest.ts";
import { readProseFlag } from "../../lib/prose/mod.ts";
import { git, lines, makeTempDir, runTool, writeTree } from "../_helpers.ts";
import {
  ageTemps,
  ctxkitTemps,
  describePlan,
  hashFile,
  type KillPlan,
  prng,
  runKillable,
  sha,
  shebangPermissions,
  stressSeed,
  Tally,
} from "./_harness.ts";

const SEED = stressSeed();

/**
 * Reruns alternate between `-A` (the writer's pid is known dead: its temps go at once) and the
 * tool's own narrow shebang grants (no /proc access, so only age counts: leftovers are backdated
 * first, as when the user comes back later).
 */
function rerunPermissions(round: number, tool: "context-guard" | "prose", dirs: string[]) {
  if (round % 2 === 0) return {};
  for (const d of dirs) ageTemps(d);
  return { permissions: shebangPermissions(tool) };
}

/** Five targets in two directories; manifest (sorted) order = index order. */
const RELS = [
  ".claude/rules/a.md",
  ".claude/rules/b.md",
  ".claude/rules/c.md",
  "CLAUDE.md",
  "docs/d.md",
];
const GITIGNORE = "node_modules";

function original(rel: string): string {
  return `# ${rel}\n\nUse Node 20.11; NEVER skip scripts/build.sh. Timeout 30s.\n`;
}

interface Project {
  home: string;
  proj: string;
  backups: string;
  env: Record<string, string>;
}

function project(): Project {
  const base = makeTempDir("ctxkit-fault-");
  const home = `${base}/home`;
  const proj = `${home}/proj`;
  writeTree(proj, Object.fromEntries(RELS.map((r) => [r, original(r)])));
  writeTree(proj, { ".gitignore": GITIGNORE });
  git(proj, "init", "-q");
  git(proj, "add", "-A");
  git(proj, "commit", "-qm", "init");
  return {
    home,
    proj,
    backups: `${home}/.claude/backups`,
    env: { HOME: home, CLAUDE_PROJECT_DIR: proj },
  };
}

/** Fault points given as `name` with hit counts 1..n each, then `random` seeded delays. */
function plans(points: [string, number][], random: number, rand: () => number, rt: number) {
  const out: KillPlan[] = [];
  for (const [name, n] of points) {
    for (let i = 1; i <= n; i++) out.push({ faultPoint: n === 1 ? name : `${name}:${i}` });
  }
  // Most of a run is Deno's start-up; the spread still lands kills inside the write window.
  for (let i = 0; i < random; i++) out.push({ killAfterMs: Math.floor(rt * (0.2 + rand() * 0.9)) });
  return out;
}

function runDirOf(stdout: string): string {
  const line = lines(stdout).find((l) => l.startsWith("RUN_DIR: "));
  assert.ok(line !== undefined, stdout);
  return line.slice("RUN_DIR: ".length);
}

/** Every backup that has a manifest: it parses and its copies match it (never a torn manifest). */
function assertManifestsWhole(backups: string, context: string): number {
  let whole = 0;
  for (const name of readdirSync(backups)) {
    const dir = join(backups, name);
    if (!readdirSync(dir).includes("manifest.json")) continue;
    const m = readManifest(dir);
    for (const f of m.files) {
      assert.equal(hashFile(join(dir, "orig", f.path)), f.sha256, `${context}: ${dir} ${f.path}`);
    }
    whole++;
  }
  return whole;
}

Deno.test(`fault injection: context-guard snapshot killed anywhere (seed ${SEED})`, async () => {
  const rand = prng(SEED);
  const p = project();
  const args = ["snapshot", ...RELS];
  const hashes = new Map(RELS.map((r) => [r, sha(original(r))]));
  const ignoreOld = sha(GITIGNORE);
  const ignoreNew = sha(`${GITIGNORE}\n.claude/reports/\n`);
  const warm = await runKillable("context-guard", args, { cwd: p.proj, env: p.env });
  assert.equal(warm.code, 0, warm.stderr);
  const tally = new Tally();
  const all = plans(
    [
      ["stage.snapshot.between-copies", RELS.length],
      ["snapshot.before-manifest", 1],
      ["atomic.before-rename", 2], // .gitignore, then manifest.json
      ["atomic.after-rename", 2],
    ],
    120,
    rand,
    warm.ms,
  );
  let round = 0;
  for (const plan of all) {
    const what = describePlan(plan);
    round++;
    writeFileSync(`${p.proj}/.gitignore`, GITIGNORE); // so every run rewrites it
    const r = await runKillable("context-guard", args, { cwd: p.proj, env: p.env, ...plan });
    tally.add(r);
    if ("faultPoint" in plan) assert.equal(r.signal, "SIGKILL", `${what} not reached: ${r.stderr}`);
    else if (r.signal === null) assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    for (const rel of RELS) assert.equal(hashFile(`${p.proj}/${rel}`), hashes.get(rel), what);
    assert.ok([ignoreOld, ignoreNew].includes(hashFile(`${p.proj}/.gitignore`)), what);
    const again = await runKillable("context-guard", args, {
      cwd: p.proj,
      env: p.env,
      ...rerunPermissions(round, "context-guard", [p.proj]),
    });
    assert.equal(again.code, 0, `${what}, rerun: ${again.stderr}`);
    const runDir = runDirOf(again.stdout);
    const m = readManifest(runDir);
    assert.deepEqual(m.files.map((f) => f.path), RELS, what);
    for (const f of m.files) assert.equal(f.sha256, hashes.get(f.path), what);
    assert.equal(hashFile(`${p.proj}/.gitignore`), ignoreNew, what);
    assert.deepEqual(ctxkitTemps(p.proj), [], `${what}: temp file left in the project`);
    assert.ok(assertManifestsWhole(p.backups, what) >= 1);
  }
  console.log(tally.line("snapshot", SEED));
  assert.equal(tally.killed + tally.finished, all.length);
});

async function checkpointEdits(p: Project, runDir: string, round: number): Promise<string[]> {
  const edited = RELS.map((r) => `# ${r} (optimized, round ${round})\n\nNode 20.11.\n`);
  RELS.forEach((r, i) => writeFileSync(`${p.proj}/${r}`, edited[i]));
  const cp = await runKillable("text-guard", ["checkpoint", "--run-dir", runDir, ...RELS], {
    cwd: p.proj,
    env: p.env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  return edited.map(sha);
}

/** How many leading files (manifest order) a checkpoint kill must have restored. */
function restoredBefore(plan: KillPlan): number | undefined {
  if (!("faultPoint" in plan)) return undefined;
  const [name, n = "1"] = plan.faultPoint.split(":");
  return name === "atomic.after-rename" ? Number(n) : Number(n) - 1;
}

for (const command of ["restore", "rollback"] as const) {
  Deno.test(`fault injection: context-guard ${command} killed anywhere (seed ${SEED})`, async () => {
    const rand = prng(SEED + (command === "restore" ? 1 : 2));
    const p = project();
    const snap = runTool("context-guard", ["snapshot", ...RELS], { cwd: p.proj, env: p.env });
    assert.equal(snap.code, 0, snap.stderr);
    const runDir = runDirOf(snap.stdout);
    const origHashes = RELS.map((r) => sha(original(r)));
    const args = [command, "--run-dir", runDir];
    const label = command === "restore" ? "RESTORE_VERIFIED" : "ROLLBACK_VERIFIED";
    await checkpointEdits(p, runDir, 0);
    const warm = await runKillable("context-guard", args, { cwd: p.proj, env: p.env });
    assert.equal(warm.code, 0, warm.stderr);
    const tally = new Tally();
    const all = plans(
      [
        ["stage.restore.between-files", RELS.length],
        ["atomic.before-rename", RELS.length],
        ["atomic.after-rename", RELS.length],
      ],
      60,
      rand,
      warm.ms,
    );
    let round = 0;
    for (const plan of all) {
      const what = describePlan(plan);
      const editedHashes = await checkpointEdits(p, runDir, ++round);
      const r = await runKillable("context-guard", args, { cwd: p.proj, env: p.env, ...plan });
      tally.add(r);
      if ("faultPoint" in plan) {
        assert.equal(r.signal, "SIGKILL", `${what} not reached: ${r.stderr}`);
      } else if (r.signal === null) assert.equal(r.code, 0, `${what}: ${r.stderr}`);
      const now = RELS.map((rel) => hashFile(`${p.proj}/${rel}`));
      RELS.forEach((rel, i) => {
        assert.ok([origHashes[i], editedHashes[i]].includes(now[i]), `${what}: ${rel} torn`);
      });
      const done = restoredBefore(plan);
      if (done !== undefined) {
        const want = RELS.map((_, i) => i < done ? origHashes[i] : editedHashes[i]);
        assert.deepEqual(now, want, `${what}: restore order`);
      }
      const again = await runKillable("context-guard", args, {
        cwd: p.proj,
        env: p.env,
        ...rerunPermissions(round, "context-guard", [p.proj]),
      });
      assert.equal(again.code, 0, `${what}, rerun: ${again.stderr}`);
      assert.ok(
        lines(again.stdout).includes(`${label}: 0 mismatches, 0 missing from snapshot (${runDir})`),
        again.stdout,
      );
      assert.deepEqual(RELS.map((rel) => hashFile(`${p.proj}/${rel}`)), origHashes, what);
      assert.deepEqual(ctxkitTemps(p.proj), [], `${what}: temp file left next to a user file`);
    }
    console.log(tally.line(command, SEED));
  });
}

Deno.test(`fault injection: a restore that stops at an immutable file, killed anywhere (seed ${SEED})`, async () => {
  // Issue 22 item 11: the rename of c.md fails (chattr +i); before the kill or after it, every
  // file is whole, the files past c.md are never touched, and every rerun's summary is true.
  const rand = prng(SEED + 5);
  const p = project();
  const snap = runTool("context-guard", ["snapshot", ...RELS], { cwd: p.proj, env: p.env });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  const stuck = RELS.indexOf(".claude/rules/c.md");
  const immutable = `${p.proj}/${RELS[stuck]}`;
  const origHashes = RELS.map((r) => sha(original(r)));
  const args = ["restore", "--run-dir", runDir];
  const stopped = `RESTORE_VERIFIED: FAILED - restoration stopped at ${
    RELS[stuck]
  }; ${stuck} of ${RELS.length} file(s) restored (the RESTORED: lines), every other file keeps its current bytes (${runDir})`;
  let editedHashes = await checkpointEdits(p, runDir, 0);
  const chattr = new Deno.Command("chattr", { args: ["+i", immutable] }).outputSync();
  if (!chattr.success) {
    console.log(`SKIP: chattr +i failed (${new TextDecoder().decode(chattr.stderr).trim()})`);
    return;
  }
  const release = () => new Deno.Command("chattr", { args: ["-i", immutable] }).outputSync();
  try {
    const warm = await runKillable("context-guard", args, { cwd: p.proj, env: p.env });
    assert.equal(warm.code, 2, warm.stderr);
    const tally = new Tally();
    const all = plans(
      [
        ["stage.restore.between-files", stuck + 1],
        ["atomic.before-rename", stuck + 1],
        ["atomic.after-rename", stuck],
      ],
      30,
      rand,
      warm.ms,
    );
    let round = 0;
    for (const plan of all) {
      const what = describePlan(plan);
      release();
      editedHashes = await checkpointEdits(p, runDir, ++round);
      new Deno.Command("chattr", { args: ["+i", immutable] }).outputSync();
      const r = await runKillable("context-guard", args, { cwd: p.proj, env: p.env, ...plan });
      tally.add(r);
      if ("faultPoint" in plan) {
        assert.equal(r.signal, "SIGKILL", `${what} not reached: ${r.stderr}`);
      }
      const now = RELS.map((rel) => hashFile(`${p.proj}/${rel}`));
      RELS.forEach((rel, i) => {
        const allowed = i < stuck ? [origHashes[i], editedHashes[i]] : [editedHashes[i]];
        assert.ok(allowed.includes(now[i]), `${what}: ${rel}`);
      });
      const again = await runKillable("context-guard", args, { cwd: p.proj, env: p.env });
      assert.equal(again.code, 2, `${what}, rerun: ${again.stderr}`);
      assert.equal(lines(again.stderr).at(-2), stopped, what);
      const restored = lines(again.stdout).filter((l) => l.startsWith("RESTORED: "));
      assert.deepEqual(restored, RELS.slice(0, stuck).map((r) => `RESTORED: ${r}`), what);
      assert.deepEqual(
        RELS.map((rel) => hashFile(`${p.proj}/${rel}`)),
        RELS.map((_, i) => (i < stuck ? origHashes[i] : editedHashes[i])),
        what,
      );
    }
    console.log(tally.line("restore stopped at an immutable file", SEED));
  } finally {
    release();
  }
  const last = await runKillable("context-guard", args, { cwd: p.proj, env: p.env });
  assert.equal(last.code, 0, last.stderr);
  assert.deepEqual(RELS.map((rel) => hashFile(`${p.proj}/${rel}`)), origHashes);
  // A stopped rerun sweeps only the directories it wrote into; the run that succeeds sweeps all.
  assert.deepEqual(ctxkitTemps(p.proj), [], "temp file left next to a user file");
});

Deno.test(`fault injection: prose on killed anywhere (seed ${SEED})`, async () => {
  const rand = prng(SEED + 3);
  const root = join(makeTempDir("ctxkit-fault-prose-"), "cellm");
  const dir = join(root, "prose");
  const flag = join(dir, ".active");
  const NOW = 1_800_000_000_000;
  const envAt = (now: number) => ({ CELLM_DIR: root, CTXKIT_NOW_MS: String(now) });
  const warm = await runKillable("prose", ["on", "block", "--local"], { env: envAt(NOW) });
  assert.equal(warm.code, 0, warm.stderr);
  const tally = new Tally();
  const all = plans([["prose.flag.before-rename", 1]], 80, rand, warm.ms);
  for (let i = 0; i < 10; i++) all.push({ faultPoint: "prose.flag.before-rename" });
  let round = 0;
  for (const plan of all) {
    const what = describePlan(plan);
    const now = NOW + 1000 * ++round;
    // Alternate between no flag and an older turn flag before the kill.
    let old: string | undefined;
    if (round % 2 === 0) {
      rmSync(flag, { force: true });
    } else {
      const prev = runTool("prose", ["on", "3", "turns", "--local"], { env: envAt(now - 500) });
      assert.equal(prev.code, 0, prev.stderr);
      old = readFileSync(flag, "utf8");
    }
    const r = await runKillable("prose", ["on", "block", "--local"], { env: envAt(now), ...plan });
    tally.add(r);
    if ("faultPoint" in plan) assert.equal(r.signal, "SIGKILL", `${what} not reached: ${r.stderr}`);
    else if (r.signal === null) assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    const want =
      `{"level":"full","ttl":{"unit":"block","value":0},"expiresAt":null,"activatedAt":${now},"source":"manual"}\n`;
    const after = hashFile(flag);
    assert.ok([old === undefined ? "MISSING" : sha(old), sha(want)].includes(after), what);
    const read = readProseFlag({ root, now });
    assert.ok(read.state === "active" || read.state === "absent", `${what}: ${read.state}`);
    const status = runTool("prose", ["status", "--local"], { env: envAt(now) });
    assert.equal(status.code, 0, `${what}: ${status.stderr}`);
    // Leftover temps are harmless (readers ignore them) and swept by a later write once older than 60 s.
    const again = await runKillable("prose", ["on", "block", "--local"], {
      env: envAt(now),
      ...rerunPermissions(round, "prose", [dir]),
    });
    assert.equal(again.code, 0, `${what}, rerun: ${again.stderr}`);
    assert.equal(readFileSync(flag, "utf8"), want, what);
    if (round % 2 === 1) assert.deepEqual(ctxkitTemps(dir), [], `${what}: stale temp not swept`);
  }
  ageTemps(dir);
  const last = runTool("prose", ["on", "block", "--local"], { env: envAt(NOW) });
  assert.equal(last.code, 0, last.stderr);
  assert.deepEqual(readdirSync(dir), [".active"]);
  console.log(tally.line("prose on", SEED));
});

/**
 * verify-deleted never writes at the deleted path (references/context-guard.md#verify-deleted):
 * killed anywhere, the path is absent or back at its snapshot bytes, and a rerun ends cleanly —
 * a proof that passes (the draft record is put back) and one that fails (the run is rolled back).
 */
for (const proof of ["passes", "fails"] as const) {
  Deno.test(`fault injection: context-guard verify-deleted (${proof}) killed anywhere (seed ${SEED})`, async () => {
    const rand = prng(SEED + (proof === "passes" ? 4 : 5));
    const p = project();
    const OLD = "docs/d.md";
    const survivor = proof === "passes" ? "CLAUDE.md" : ".claude/rules/a.md";
    const snap = runTool("context-guard", ["snapshot", OLD, survivor], { cwd: p.proj, env: p.env });
    assert.equal(snap.code, 0, snap.stderr);
    const runDir = runDirOf(snap.stdout);
    const record = join(runDir, "draft", `${OLD}.sha256`);
    const oldHash = sha(original(OLD));
    // The survivor either carries every token of the deleted file (its own text + the file's), or
    // lacks `docs/d.md`'s heading path.
    const survivorText = proof === "passes"
      ? original(survivor) + original(OLD)
      : original(survivor);
    const args = ["verify-deleted", "--run-dir", runDir, "--survivor", survivor, OLD];
    /** The round's starting point: the optimizer drafted the file, checkpointed, then deleted it. */
    const prepare = () => {
      writeFileSync(`${p.proj}/${survivor}`, survivorText);
      writeFileSync(`${p.proj}/${OLD}`, "draft\n");
      const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, OLD, survivor], {
        cwd: p.proj,
        env: p.env,
      });
      assert.equal(cp.code, 0, cp.stderr);
      rmSync(`${p.proj}/${OLD}`);
      return readFileSync(record, "utf8");
    };
    prepare();
    const warm = await runKillable("context-guard", args, { cwd: p.proj, env: p.env });
    assert.equal(warm.code, proof === "passes" ? 0 : 1, warm.stderr);
    const tally = new Tally();
    const all = plans(
      proof === "passes"
        ? [["atomic.before-rename", 2], ["atomic.after-rename", 2]] // record, then its put-back
        : [
          ["atomic.before-rename", 2], // record, then the restored file
          ["atomic.after-rename", 2],
          ["stage.restore.between-files", 2],
        ],
      40,
      rand,
      warm.ms,
    );
    let round = 0;
    for (const plan of all) {
      const what = describePlan(plan);
      round++;
      const previous = prepare();
      const r = await runKillable("context-guard", args, { cwd: p.proj, env: p.env, ...plan });
      tally.add(r);
      if ("faultPoint" in plan) {
        assert.equal(r.signal, "SIGKILL", `${what} not reached: ${r.stderr}`);
      }
      const now = hashFile(`${p.proj}/${OLD}`);
      assert.ok(
        ["MISSING", oldHash].includes(now),
        `${what}: ${OLD} is neither deleted nor original`,
      );
      if (proof === "passes") assert.equal(now, "MISSING", `${what}: a passing proof wrote ${OLD}`);
      const recordNow = readFileSync(record, "utf8");
      assert.ok([previous, "MISSING\n"].includes(recordNow), `${what}: record ${recordNow}`);
      const again = await runKillable("context-guard", args, {
        cwd: p.proj,
        env: p.env,
        ...rerunPermissions(round, "context-guard", [p.proj, join(p.proj, "docs")]),
      });
      if (proof === "passes") {
        assert.equal(again.code, 0, `${what}, rerun: ${again.stderr}`);
        // A kill before the put-back leaves the deletion owned (`MISSING`): the rerun keeps that.
        const want = recordNow === "MISSING\n" ? [previous, "MISSING\n"] : [previous];
        assert.ok(want.includes(readFileSync(record, "utf8")), `${what}: record`);
        assert.equal(hashFile(`${p.proj}/${OLD}`), "MISSING", what);
      } else if (now === oldHash) {
        // Already rolled back: the rerun refuses cleanly, nothing written.
        assert.equal(again.code, 2, `${what}, rerun: ${again.stderr}`);
        assert.match(again.stderr, /is still on disk - verify-deleted is for a DELETED file/);
      } else {
        assert.equal(again.code, 1, `${what}, rerun: ${again.stderr}`);
        assert.equal(hashFile(`${p.proj}/${OLD}`), oldHash, `${what}: rolled back on rerun`);
      }
      assert.deepEqual(ctxkitTemps(p.proj), [], `${what}: temp file left next to a user file`);
    }
    console.log(tally.line(`verify-deleted (${proof})`, SEED));
  });
}
