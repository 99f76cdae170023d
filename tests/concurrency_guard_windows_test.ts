/**
 * Issue 22 with real concurrent processes (reliability suite, `references/reliability.md#concurrency`):
 * a link swapped in mid-snapshot never puts an outside file into the backup; a save made while a
 * restore of thousands of files runs is never replaced; a rename failing mid-restore leaves a
 * summary that says exactly which files changed.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { lines, makeTempDir, runTool, runToolAsync, writeTree } from "./_helpers.ts";
import { errLines } from "./_guard_fixtures.ts";

/** A Deno child running `source` with `args`; resolves when it exits. */
function spawnScript(dir: string, source: string, args: string[]): Deno.ChildProcess {
  const script = `${dir}/helper-${crypto.randomUUID()}.ts`;
  writeFileSync(script, source);
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-config", script, ...args],
    stdout: "null",
    stderr: "inherit",
  }).spawn();
}

/** Wait, without a clock, until `ready()` holds (polling the file system). */
async function until(ready: () => boolean, what: string, child?: Deno.ChildProcess): Promise<void> {
  let exited = false;
  child?.status.then(() => (exited = true));
  while (!ready()) {
    if (exited) throw new Error(`helper exited before ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

function runDirOf(stdout: string): string {
  return lines(stdout).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
}

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
