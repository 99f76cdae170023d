/**
 * Issue 22 with real concurrent processes (reliability suite, `references/reliability.md#concurrency`):
 * a link swapped in mid-snapshot never puts an outside file into the backup; a save made while a
 * restore of thousands of files runs is never replaced; a rename failing mid-restore leaves a
 * summary that says exactly which files changed.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { lines, makeTempDir, runTool, runToolAsync, writeTree } from "../_helpers.ts";
import { errLines, refusedLines, runDirOf, spawnScript, until } from "../_guard_fixtures.ts";

/** Every file below `dir`, recursively. */
function filesBelow(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(`${e.parentPath}/${e.name}`);
  }
  return out;
}

/**
 * The swapper: once the snapshot has started copying (its `orig/` exists), it renames a prepared
 * link over the last target, pointing outside the project.
 */
const SWAPPER = `
const [backups, target, secret, ready] = Deno.args;
const link = target + ".swap";
Deno.symlinkSync(secret, link);
Deno.writeTextFileSync(ready, "ready");
for (;;) {
  let started = false;
  try {
    for (const e of Deno.readDirSync(backups)) {
      try { Deno.statSync(backups + "/" + e.name + "/orig"); started = true; } catch { /* not yet */ }
    }
  } catch { /* no backups yet */ }
  if (started) break;
}
Deno.renameSync(link, target);
`;

Deno.test("item 3: a link swapped in mid-snapshot never puts an outside file into the backup", async () => {
  let hit = false;
  for (let round = 0; round < 4 && !hit; round++) {
    const base = makeTempDir("ctxkit-swap-");
    const home = `${base}/home`;
    const proj = `${home}/proj`;
    const secret = `${base}/secret.md`;
    writeFileSync(secret, "OUTSIDE SECRET 4242\n");
    const files: Record<string, string> = {};
    for (let i = 0; i < 1500; i++) files[`rules/f${String(i).padStart(4, "0")}.md`] = `# ${i}\n`;
    files["zz-last.md"] = "# last\n";
    writeTree(proj, files);
    const ready = `${base}/ready`;
    const swapper = spawnScript(base, SWAPPER, [
      `${home}/.claude/backups`,
      `${proj}/zz-last.md`,
      secret,
      ready,
    ]);
    await until(() => existsSync(ready), "it was ready", swapper);
    const r = await runToolAsync("context-guard", ["snapshot", ...Object.keys(files)], {
      cwd: proj,
      env: { HOME: home, CLAUDE_PROJECT_DIR: proj },
    });
    await swapper.status;
    for (const f of filesBelow(`${home}/.claude/backups`)) {
      assert.ok(!readFileSync(f, "utf8").includes("OUTSIDE SECRET"), `outside file copied: ${f}`);
    }
    if (r.code === 0) continue; // the swap came after the last copy: nothing to see, again
    hit = true;
    assert.equal(r.code, 2, r.stderr);
    assert.deepEqual(errLines(r), [
      "❌ zz-last.md was replaced while it was being snapshotted - snapshot it again",
      "❌ snapshot failed (text-guard exit 2)",
    ]);
    assert.ok(!r.stdout.includes("RUN_DIR:"), r.stdout);
  }
  assert.ok(hit, "the link never landed between the pre-flight and the last copy in 4 rounds");
});

/** `n` files in two directories of a fresh project, snapshotted, rewritten and checkpointed. */
function ownedDrafts(n: number) {
  const base = makeTempDir("ctxkit-window-");
  const home = `${base}/home`;
  const proj = `${home}/proj`;
  // In manifest (code point) order.
  const rels = Array.from(
    { length: n },
    (_, i) => `d${i < n / 2 ? 0 : 1}/f${String(i).padStart(4, "0")}.md`,
  );
  writeTree(proj, Object.fromEntries(rels.map((r) => [r, `# ${r} original\n`])));
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const snap = runTool("context-guard", ["snapshot", ...rels], { cwd: proj, env });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  for (const r of rels) writeFileSync(`${proj}/${r}`, `# ${r} draft\n`);
  const cp = runTool("text-guard", ["checkpoint", "--run-dir", runDir, ...rels], {
    cwd: proj,
    env,
  });
  assert.equal(cp.code, 0, cp.stderr);
  return { base, proj, env, rels, runDir };
}

/**
 * The editor: once the restore has put the first file back (so every check of the batch is done),
 * it saves the last files, last first — in place or by rename — and logs each save once it is on
 * disk. A save it logged is one the user made: no restore may replace it afterwards.
 */
const EDITOR = `
const [proj, first, original, log, ready, ...rels] = Deno.args;
Deno.writeTextFileSync(ready, "ready");
for (;;) {
  try { if (Deno.readTextFileSync(proj + "/" + first) === original) break; } catch { /* mid-rename */ }
}
let i = 0;
for (const rel of rels) {
  const text = "# " + rel + " saved by the user\\n";
  if (i++ % 2 === 0) Deno.writeTextFileSync(proj + "/" + rel, text);
  else {
    Deno.writeTextFileSync(proj + "/" + rel + ".swp", text);
    Deno.renameSync(proj + "/" + rel + ".swp", proj + "/" + rel);
  }
  Deno.writeTextFileSync(log, rel + "\\n", { append: true });
}
`;

Deno.test("item 2: a save made while a 2,500-file restore runs is never replaced; the summary is true", async () => {
  const { base, proj, env, rels, runDir } = ownedDrafts(2500);
  const log = `${base}/saved.log`;
  const ready = `${base}/ready`;
  const saved = rels.slice(-300).reverse();
  const editor = spawnScript(base, EDITOR, [
    proj,
    rels[0],
    `# ${rels[0]} original\n`,
    log,
    ready,
    ...saved,
  ]);
  await until(() => existsSync(ready), "it was ready", editor);
  const r = await runToolAsync("context-guard", ["restore", "--run-dir", runDir], {
    cwd: proj,
    env,
  });
  await editor.status;
  const logged = readFileSync(log, "utf8").split("\n").filter((l) => l !== "");
  assert.equal(logged.length, saved.length);
  for (const rel of logged) {
    assert.equal(readFileSync(`${proj}/${rel}`, "utf8"), `# ${rel} saved by the user\n`, rel);
  }
  const restored = lines(r.stdout).filter((l) => l.startsWith("RESTORED: ")).map((l) =>
    l.slice("RESTORED: ".length)
  );
  console.log(`restore exit ${r.code}, ${restored.length} of ${rels.length} restored`);
  if (r.code === 0) {
    // Every save came after the last rename: nothing to stop, and nothing was replaced either.
    assert.equal(restored.length, rels.length);
    return;
  }
  assert.equal(r.code, 1, r.stderr);
  const stoppedAt = rels[restored.length];
  assert.deepEqual(restored, rels.slice(0, restored.length));
  assert.deepEqual(errLines(r), [
    ...refusedLines("context-guard", runDir, stoppedAt, `${proj}/${stoppedAt}`),
    `RESTORE_VERIFIED: FAILED - restoration stopped at ${stoppedAt}; ${restored.length} of ${rels.length} file(s) restored (the RESTORED: lines), every other file keeps its current bytes (${runDir})`,
  ]);
  for (const rel of restored) {
    assert.equal(readFileSync(`${proj}/${rel}`, "utf8"), `# ${rel} original\n`, rel);
  }
  for (const rel of rels.slice(restored.length)) {
    const now = readFileSync(`${proj}/${rel}`, "utf8");
    assert.ok(
      now === `# ${rel} draft\n` || now === `# ${rel} saved by the user\n`,
      `${rel} after the stop: ${now}`,
    );
  }
});

/** Once the first file is back, the last target is moved aside and a directory made in its place. */
const DIR_MAKER = `
const [proj, first, original, ready, last] = Deno.args;
Deno.writeTextFileSync(ready, "ready");
for (;;) {
  try { if (Deno.readTextFileSync(proj + "/" + first) === original) break; } catch { /* mid-rename */ }
}
Deno.renameSync(proj + "/" + last, proj + "/" + last + ".aside");
Deno.mkdirSync(proj + "/" + last);
`;

Deno.test("item 11: a target turned into a directory mid-restore by another process: the restore stops there and says what it changed", async () => {
  const { base, proj, env, rels, runDir } = ownedDrafts(1000);
  const ready = `${base}/ready`;
  const last = rels.at(-1)!;
  const maker = spawnScript(base, DIR_MAKER, [
    proj,
    rels[0],
    `# ${rels[0]} original\n`,
    ready,
    last,
  ]);
  await until(() => existsSync(ready), "it was ready", maker);
  const r = await runToolAsync("context-guard", ["rollback", "--run-dir", runDir], {
    cwd: proj,
    env,
  });
  assert.equal((await maker.status).code, 0);
  const restored = lines(r.stdout).filter((l) => l.startsWith("RESTORED: "));
  // Whenever the directory appeared, every line is true: the files named RESTORED are back, the
  // directory and the moved-aside draft are untouched.
  assert.ok(Deno.lstatSync(`${proj}/${last}`).isDirectory);
  assert.equal(readFileSync(`${proj}/${last}.aside`, "utf8"), `# ${last} draft\n`);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.deepEqual(restored, rels.slice(0, -1).map((rel) => `RESTORED: ${rel}`));
  for (const rel of rels.slice(0, -1)) {
    assert.equal(readFileSync(`${proj}/${rel}`, "utf8"), `# ${rel} original\n`, rel);
  }
  assert.deepEqual(errLines(r), [
    ...refusedLines("context-guard", runDir, last, `${proj}/${last}`),
    `ROLLBACK_VERIFIED: FAILED - restoration stopped at ${last}; ${
      rels.length - 1
    } of ${rels.length} file(s) restored (the RESTORED: lines), every other file keeps its current bytes (${runDir})`,
  ]);
  assert.equal(lines(r.stdout).at(-1), "ROLLBACK_RESULT: 1 layer(s), FAILED");
});
