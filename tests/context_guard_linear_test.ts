/**
 * Issue 29, items 10–12 (`references/context-guard.md#extraction`, `#drop-ledger`): `verify` is
 * linear end to end on adversarial input — the trailing-punctuation strip of `path:`, `neg:` and
 * `url:` tokens, and `--ledger` coverage over a large ledger and file — and a ledger survivor is
 * read like every other gate input: within the 64 MiB limit, a failure named in one line.
 *
 * Each command runs as a child process against a deadline far above what a linear pass takes on a
 * busy 2-core machine (a second or two) and far below what the quadratic code took (the 1 MB line:
 * about 30 min; the 1 MB ledger: hours). The deadline is a failure bound, never a wait.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import {
  makeSharedTempDir,
  runToolAsUser,
  runToolWithin,
  skipWithoutUnprivilegedUser,
  UNPRIVILEGED_ID,
  writeTree,
} from "./_helpers.ts";
import { errLines, outLines, runDirOf, snapshottedProject } from "./_guard_fixtures.ts";

const DEADLINE_MS = 150_000;
const MB = 1_000_000;

/** A project whose CLAUDE.md is `before`, snapshotted, then rewritten to `after`. */
function rewritten(before: string, after: string) {
  const p = snapshottedProject({ "CLAUDE.md": before }, "ctxkit-linear-");
  writeFileSync(`${p.proj}/CLAUDE.md`, after);
  return p;
}

const dots = ".".repeat(MB);

for (
  const [name, line, alphabet, token] of [
    ["path: (a slash, a run of dots, a letter)", `a/${dots}x`, "base", `path:a/${dots}x`],
    ["neg: (!=, a run of dots, a letter)", `!=${dots}x`, "base", `neg:!=${dots}x`],
    ["url: (a URL, a run of dots, a letter)", `http://h${dots}x`, "ext", `url:http://h${dots}x`],
    [
      "path: (dots ending the token are stripped)",
      `a/b${".,;:".repeat(MB / 4)}`,
      "base",
      "path:a/b",
    ],
  ] as const
) {
  Deno.test(`item 10: verify strips trailing punctuation in linear time: 1 MB ${name}`, async () => {
    const p = rewritten(`${line}\n`, "nothing left\n");
    const r = await runToolWithin(
      "context-guard",
      ["verify", `--tokens=${alphabet}`, "--run-dir", p.runDir, "CLAUDE.md"],
      { cwd: p.proj, env: p.env },
      DEADLINE_MS,
    );
    assert.ok(!r.timedOut, `verify did not end within ${DEADLINE_MS} ms: quadratic`);
    assert.equal(r.code, 1, r.stderr);
    const out = outLines(r);
    assert.equal(out[0], "FILE: CLAUDE.md");
    assert.ok(out.includes(`  - ${token}`), `missing the ${token.slice(0, 20)}… miss`);
  });
}

Deno.test("item 11: verify --ledger is linear in ledger and file size: 1 MB of rows over a 1 MB file", async () => {
  // 80,000 lines, each with its own number; the draft keeps none of them: 80,000 misses.
  const n = 80_000;
  const before = Array.from({ length: n }, (_, i) => `Rule ${i + 1}.`).join("\n") + "\n";
  const p = rewritten(before, "# emptied\n");
  // A survivor carrying every even number, and rows that each cover the whole file: the old code
  // took the tokens of every line once per row, and tried every row for every miss.
  writeFileSync(
    `${p.proj}/survivor.md`,
    Array.from({ length: n / 2 }, (_, i) => `${2 * (i + 1)}`).join(" ") + "\n",
  );
  const rows: string[] = ["# path\tline-range\tsurvivor\treason"];
  for (let bytes = 0; bytes < MB;) {
    rows.push(`CLAUDE.md\t1-${n}\tmissing.md\tnot carried`);
    rows.push(`CLAUDE.md\t1-${n}\tsurvivor.md\tevens`);
    bytes += rows.at(-1)!.length + rows.at(-2)!.length + 2;
  }
  writeFileSync(`${p.proj}/ledger.tsv`, rows.join("\n") + "\n");
  const r = await runToolWithin(
    "context-guard",
    ["verify", "--run-dir", p.runDir, "--ledger", "ledger.tsv", "CLAUDE.md"],
    { cwd: p.proj, env: p.env },
    DEADLINE_MS,
  );
  assert.ok(!r.timedOut, `verify --ledger did not end within ${DEADLINE_MS} ms: quadratic`);
  assert.equal(r.code, 1, r.stderr);
  const out = outLines(r);
  const ledgered = out.filter((l) => l.startsWith("LEDGERED: "));
  const uncovered = out.filter((l) => l.startsWith("UNCOVERED: "));
  assert.equal(ledgered.length, n / 2);
  assert.equal(uncovered.length, n / 2);
  // The first row covering a miss in ledger order wins: row 3 (the first survivor.md row).
  assert.ok(ledgered.includes(`LEDGERED: num:2 (row 3: 1-${n} -> survivor.md)`), ledgered[0]);
  assert.ok(uncovered.includes("UNCOVERED: num:1"));
});

Deno.test("item 12: a survivor over the gate's 64 MiB limit is refused in one line before any report, never read", async () => {
  const p = rewritten("Timeout 30 seconds.\n", "Timeout is the default.\n");
  const sparse = `${p.proj}/huge.md`;
  const fd = openSync(sparse, "w");
  closeSync(fd);
  Deno.truncateSync(sparse, 2 * 1024 * 1024 * 1024); // 2 GiB, no disk: a hole
  writeFileSync(`${p.proj}/ledger.tsv`, "CLAUDE.md\t1\thuge.md\tmoved\n");
  const r = await runToolWithin(
    "context-guard",
    ["verify", "--run-dir", p.runDir, "--ledger", "ledger.tsv", "CLAUDE.md"],
    { cwd: p.proj, env: p.env },
    DEADLINE_MS,
  );
  assert.ok(!r.timedOut, "verify did not end");
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.equal(r.stdout, "");
  assert.deepEqual(errLines(r), [
    "❌ too large for the token gate: huge.md (2147483648 bytes; the limit is 67108864)",
  ]);
});

Deno.test("item 12: a survivor that cannot be read is one line naming it, exit 2, never UNCOVERED", () => {
  if (skipWithoutUnprivilegedUser()) return;
  // Everything the user runs on is theirs (uid 65534); the survivor is another user's, 0600.
  const base = makeSharedTempDir("ctxkit-survivor-");
  const home = `${base}/home`;
  const proj = `${home}/proj`;
  writeTree(proj, { "CLAUDE.md": "Timeout 30 seconds.\n" });
  spawnSync("chown", ["-R", `${UNPRIVILEGED_ID}:${UNPRIVILEGED_ID}`, home]);
  const env = { HOME: home, CLAUDE_PROJECT_DIR: proj };
  const snap = runToolAsUser("context-guard", ["snapshot", "--allow-dirty", "CLAUDE.md"], {
    cwd: proj,
    env,
  });
  assert.equal(snap.code, 0, snap.stderr);
  const runDir = runDirOf(snap.stdout);
  writeFileSync(`${proj}/CLAUDE.md`, "Timeout is the default.\n");
  writeFileSync(`${proj}/secret.md`, "Timeout 30 seconds.\n", { mode: 0o600 }); // root's
  writeFileSync(`${proj}/ledger.tsv`, "CLAUDE.md\t1\tsecret.md\tmoved\n");
  spawnSync("chown", [
    `${UNPRIVILEGED_ID}:${UNPRIVILEGED_ID}`,
    `${proj}/CLAUDE.md`,
    `${proj}/ledger.tsv`,
  ]);
  const r = runToolAsUser(
    "context-guard",
    ["verify", "--run-dir", runDir, "--ledger", "ledger.tsv", "CLAUDE.md"],
    { cwd: proj, env },
  );
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.equal(r.stdout, "");
  assert.deepEqual(errLines(r), ["❌ cannot read secret.md: Permission denied"]);
});
