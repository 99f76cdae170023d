/**
 * Issue 29 with real concurrent processes (`references/reliability.md#concurrency`): a snapshot
 * copy is the file as it was, never a torn one (item 2); text-guard verify's own restore never
 * replaces a save that lands while it writes (item 3); a verify racing an editor's rename-saves
 * ends in a result or one line, never an internal error (item 8); a FIFO swapped in by another
 * process never blocks a verify (item 13).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import {
  type BoundedRun,
  lines,
  makeTempDir,
  runTool,
  runToolWithin,
  writeTree,
} from "../_helpers.ts";
import {
  assertGatedOrChangedWhileReading,
  errLines,
  outLines,
  refusedLines,
  runDirOf,
  snapshottedProject,
  spawnScript,
  until,
} from "../_guard_fixtures.ts";

/** Far above what any of these commands takes on a busy machine; a hang or a stall never ends. */
const DEADLINE_MS = 120_000;

const MIB = 1 << 20;
/** Size of the big file the writer rewrites in place (the 24 MB). */
const BIG = 24 * MIB;
/** The writer's chunk: each carries its version in every byte, so a mix of versions shows. */
const CHUNK = 256 * 1024;

/**
 * The in-place writer: each version truncates the file and writes it again in chunks (as many
 * editors save), every byte of version v being `65 + v % 26`. `once`: one rewrite as soon as a run
 * dir's `orig/` exists (the copy is under way), then stop; `loop`: rewrite until `stop` exists.
 */
const WRITER = `
const [path, mode, backups, stop, ready] = Deno.args;
const size = ${BIG}, chunk = ${CHUNK};
const copying = () => {
  try {
    for (const e of Deno.readDirSync(backups)) {
      try { Deno.statSync(backups + "/" + e.name + "/orig"); return true; } catch { /* not yet */ }
    }
  } catch { /* no backups yet */ }
  return false;
};
const write = (v) => {
  const bytes = new Uint8Array(chunk).fill(65 + (v % 26));
  const f = Deno.openSync(path, { write: true, truncate: true });
  for (let at = 0; at < size; at += chunk) {
    let off = 0;
    while (off < chunk) off += f.writeSync(bytes.subarray(off));
  }
  f.close();
};
Deno.writeTextFileSync(ready, "ready");
let v = 1;
if (mode === "once") {
  while (!copying()) { /* wait for the copy to start */ }
  write(v);
} else {
  while (!existsStop()) write(v++);
}
function existsStop() { try { Deno.statSync(stop); return true; } catch { return false; } }
`;

/**
 * True when `bytes` is a state the file really was in, unchanged for the whole copy: one version
 * the writer wrote (or the original) whole, or — only when the writer stalled between two of its
 * writes for the whole copy, its checks and the sync — the clean prefix it had written so far
 * (whole chunks of one version; after the truncation, none). Never a mix of versions, never a
 * partial chunk: a torn copy (`references/context-guard.md#text-guard-snapshot`, step 10).
 */
function fileState(bytes: Uint8Array): "whole" | "stalled" | "torn" {
  if (bytes.length > BIG || bytes.length % CHUNK !== 0) return "torn";
  const first = bytes[0];
  for (let at = 0; at < bytes.length; at += 4096) if (bytes[at] !== first) return "torn";
  if (bytes.length > 0 && bytes[bytes.length - 1] !== first) return "torn";
  return bytes.length === BIG ? "whole" : "stalled";
}

Deno.test("item 2: a file rewritten in place while it is snapshotted: the copy is the whole file as it was, or the snapshot refuses naming it", async () => {
  const base = makeTempDir("ctxkit-torn-");
  const home = `${base}/home`;
  const proj = `${home}/proj`;
  writeTree(proj, { "CLAUDE.md": new Uint8Array(BIG).fill(90) }); // "Z"…: the original version
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const backups = `${home}/.claude/backups`;
  let copied = 0;
  let refused = 0;
  let stalled = 0;
  for (const mode of ["once", "once", "once", "loop", "once", "loop"]) {
    const stop = `${base}/stop-${crypto.randomUUID()}`;
    const ready = `${base}/ready-${crypto.randomUUID()}`;
    const writer = spawnScript(base, WRITER, [`${proj}/CLAUDE.md`, mode, backups, stop, ready]);
    await until(() => existsSync(ready), "it was ready", writer);
    const r = await runToolWithin("context-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
      cwd: proj,
      env,
    }, DEADLINE_MS);
    writeFileSync(stop, "");
    await writer.status;
    assert.ok(!r.timedOut, "snapshot did not end");
    if (r.code === 0) {
      copied++;
      const copy = readFileSync(`${runDirOf(r.stdout)}/orig/CLAUDE.md`);
      const state = fileState(copy);
      assert.notEqual(state, "torn", `a torn copy: ${copy.length} of ${BIG} bytes (${mode})`);
      if (state === "stalled") stalled++;
    } else {
      refused++;
      assert.equal(r.code, 2, r.stderr);
      assert.deepEqual(errLines(r), [
        "❌ CLAUDE.md kept changing while it was being snapshotted - snapshot it again once it is saved",
        "❌ snapshot failed (text-guard exit 2)",
      ]);
      assert.ok(!r.stdout.includes("RUN_DIR:"), r.stdout);
    }
    // Whatever happened, the run dirs on disk hold whole copies only (a refused one holds none).
    for (const run of readdirSync(backups)) {
      const copy = `${backups}/${run}/orig/CLAUDE.md`;
      if (existsSync(`${backups}/${run}/manifest.json`)) {
        assert.notEqual(fileState(readFileSync(copy)), "torn", `a torn copy in ${run}`);
      }
    }
    // The next round starts from a settled file.
    writeFileSync(`${proj}/CLAUDE.md`, new Uint8Array(BIG).fill(90));
  }
  console.log(
    `snapshots: ${copied} copies (${stalled} of a state a stalled writer left), ${refused} refused`,
  );
  assert.ok(copied - stalled > 0, "no whole copy at all: the re-copy never got a settled file");
});

/** 40 MB of text with tokens, a distinct line per 64 KiB so the file is not one long line. */
function bigRules(marker: string): string {
  const line = `Use Node 20.11 and run scripts/build.sh; ${marker} NEVER skip review.\n`;
  return line.repeat(Math.ceil((40 * 1_000_000) / line.length));
}

/**
 * The editor: once text-guard verify's restore has started writing its replacement beside the
 * file (its temp file exists), it saves the file by rename, as vim does, and logs the save.
 */
const RENAME_SAVER = `
const [dir, name, text, log, ready] = Deno.args;
Deno.writeTextFileSync(ready, "ready");
const prefix = "." + name + ".ctxkit-tmp-";
for (;;) {
  let seen = false;
  for (const e of Deno.readDirSync(dir)) if (e.name.startsWith(prefix)) seen = true;
  if (seen) break;
}
Deno.writeTextFileSync(dir + "/" + name + ".swp", text);
Deno.renameSync(dir + "/" + name + ".swp", dir + "/" + name);
Deno.writeTextFileSync(log, "saved\\n");
`;

Deno.test("item 3: text-guard verify's restore checks the file again right before its rename: a save landing meanwhile is kept", async () => {
  const base = makeTempDir("ctxkit-tgwin-");
  const proj = `${base}/proj`;
  writeTree(proj, { "CLAUDE.md": bigRules("Timeout 30 seconds.") });
  const env = { CLAUDE_PROJECT_DIR: proj };
  const snap = runTool("text-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
    cwd: proj,
    env,
  });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  // The optimizer's draft loses `num:30`; it owns it (checkpoint), so the gate restores it.
  writeFileSync(`${proj}/CLAUDE.md`, bigRules("Timeout is the default."));
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: proj,
    env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  const saved = "# The user's own save, made while the gate restored\n";
  const log = `${base}/saved.log`;
  const ready = `${base}/ready`;
  const editor = spawnScript(base, RENAME_SAVER, [proj, "CLAUDE.md", saved, log, ready]);
  await until(() => existsSync(ready), "it was ready", editor);
  const r = await runToolWithin("text-guard", ["verify", "--run-dir", runDir, "CLAUDE.md"], {
    cwd: proj,
    env,
  }, DEADLINE_MS);
  await editor.status;
  assert.ok(!r.timedOut, "verify did not end");
  assert.ok(existsSync(log), "the editor never saved");
  // The user's save is on disk, whenever it landed.
  assert.equal(readFileSync(`${proj}/CLAUDE.md`, "utf8"), saved);
  assert.equal(r.code, 1, r.stderr);
  const out = outLines(r);
  assert.deepEqual(out.slice(0, 4), ["FILE: CLAUDE.md", "MISSING: 1", "  - num:30", "GATE: FAIL"]);
  if (out.includes("ACTION: restored")) {
    // Only true when the save came after the rename (then it is the newer bytes, as asserted).
    console.log("the save landed after the restore's rename");
  } else {
    assert.deepEqual(out.slice(4), ["ACTION: kept (restore refused)", "FILES_FAILED: 1"]);
    assert.deepEqual(
      errLines(r),
      refusedLines("text-guard", runDir, "CLAUDE.md", `${proj}/CLAUDE.md`, proj),
    );
  }
  assert.deepEqual(readdirSync(proj).filter((n) => n.includes("ctxkit-tmp")), []);
});

/** CLAUDE.md of the race tests: every version the helpers put there keeps its tokens. */
const RULES = "# Rules\nUse Node 20.11; NEVER skip review.\n";

/**
 * 30 `context-guard verify` runs while the helper process `source` (args: project, name, stop,
 * ready) races them on CLAUDE.md; each must end (a hang fails at the deadline), never with an
 * internal error, and is handed to `check`.
 */
async function raceVerifies(source: string, check: (r: BoundedRun) => void): Promise<void> {
  const { base, proj, env, runDir } = snapshottedProject({ "CLAUDE.md": RULES }, "ctxkit-race-");
  const stop = `${base}/stop`;
  const ready = `${base}/ready`;
  const helper = spawnScript(base, source, [proj, "CLAUDE.md", stop, ready]);
  await until(() => existsSync(ready), "it was ready", helper);
  try {
    for (let i = 0; i < 30; i++) {
      const r = await runToolWithin("context-guard", ["verify", "--run-dir", runDir, "CLAUDE.md"], {
        cwd: proj,
        env,
      }, DEADLINE_MS);
      assert.ok(!r.timedOut, `verify ${i} did not end (blocked)`);
      assert.ok(!r.stderr.includes("internal error"), r.stderr);
      check(r);
    }
  } finally {
    writeFileSync(stop, "");
    await helper.status;
  }
}

/** Saves `name` by rename (write `.swp`, rename over) as fast as it can until `stop` exists. */
const RENAME_LOOP = `
const [dir, name, stop, ready] = Deno.args;
const text = ${JSON.stringify(RULES)};
Deno.writeTextFileSync(ready, "ready");
for (let i = 0; ; i++) {
  if (i % 64 === 0) { try { Deno.statSync(stop); break; } catch { /* go on */ } }
  Deno.writeTextFileSync(dir + "/" + name + ".swp", text);
  Deno.renameSync(dir + "/" + name + ".swp", dir + "/" + name);
}
`;

Deno.test("item 8: verify racing an editor's rename-saves: a gate result or one line naming the file, never an internal error", async () => {
  const outcomes = new Map<number, number>();
  await raceVerifies(RENAME_LOOP, (r) => {
    assertGatedOrChangedWhileReading(r);
    outcomes.set(r.code, (outcomes.get(r.code) ?? 0) + 1);
  });
  console.log(`verify outcomes by exit code: ${JSON.stringify(Object.fromEntries(outcomes))}`);
});

/**
 * Swaps a FIFO and a regular file (hard links of two prepared files) over `name` in turn, as fast
 * as it can, until `stop` exists.
 */
const FIFO_SWAPPER = `
const [dir, name, stop, ready] = Deno.args;
const reg = dir + "/.reg", fifo = dir + "/.fifo", tmp = dir + "/.swap";
Deno.writeTextFileSync(reg, ${JSON.stringify(RULES)});
new Deno.Command("mkfifo", { args: [fifo] }).outputSync();
Deno.writeTextFileSync(ready, "ready");
for (let i = 0; ; i++) {
  if (i % 64 === 0) { try { Deno.statSync(stop); break; } catch { /* go on */ } }
  Deno.linkSync(i % 2 === 0 ? fifo : reg, tmp);
  Deno.renameSync(tmp, dir + "/" + name);
}
Deno.linkSync(reg, tmp);
Deno.renameSync(tmp, dir + "/" + name);
`;

Deno.test("item 13: a FIFO swapped in by another process between the look and the open never blocks verify", async () => {
  const seen = new Set<string>();
  await raceVerifies(FIFO_SWAPPER, (r) => {
    if (r.code === 0) {
      assert.equal(lines(r.stdout).at(-1), "FILES_FAILED: 0");
      seen.add("gated");
      return;
    }
    assert.equal(r.code, 2, r.stdout + r.stderr);
    const [line, ...rest] = errLines(r);
    assert.deepEqual(rest, []);
    assert.ok(
      [
        "❌ target vanished: CLAUDE.md",
        "❌ cannot read CLAUDE.md: not a regular file",
        "❌ cannot read CLAUDE.md: changed while reading",
      ].includes(line),
      line,
    );
    seen.add(line);
  });
  console.log(`verify outcomes: ${[...seen].join(" | ")}`);
});
