/**
 * CLI tests of `context-guard verify --ledger` (`references/context-guard.md#drop-ledger`): the
 * ledger example, coverage, matching, validation and the whole-run rollback.
 */
import assert from "node:assert/strict";
import { symlinkSync } from "node:fs";
import { runTool } from "./_helpers.ts";
import {
  CLAUDE_MD,
  errLines,
  type ExampleProject,
  exampleProject,
  outLines,
  read,
  STYLE_MD,
  treeState,
  writeTree,
} from "./_guard_fixtures.ts";

/** CLAUDE.md of the ledger example: `30` and `scripts/build.sh` dropped. */
const CLAUDE_86 = "# Project rules\nUse Node 20.11.\n" +
  "You MUST NOT push to main directly; NEVER skip review.\n" +
  "Set env!=prod when testing; retries 3.\n";
/** style.md of the ledger example: now also names scripts/build.sh. */
const STYLE_86 = "# Style\n\nIndent with 2 spaces. Max line length 120.\n" +
  "ALWAYS run lint/check.sh and scripts/build.sh first.\n";

const HEADER = "# path\tline-range\tsurvivor\treason\n";
const ROW2 = "CLAUDE.md\t3\t.claude/rules/style.md\tbuild step kept in the style rules\n";
const ROW3 = "CLAUDE.md\t5\t-\tlossy: the timeout is the default\n";

function cg(ex: ExampleProject, args: string[], env: Record<string, string> = {}) {
  return runTool("context-guard", args, { cwd: ex.proj, env: { ...ex.env, ...env } });
}

/** The worked-example project, snapshotted (both files), drafts rewritten as in the ledger example and checkpointed. */
function setup(options: { checkpoint?: boolean } = {}): { ex: ExampleProject; rd: string } {
  const ex = exampleProject();
  const snap = cg(ex, ["snapshot", "CLAUDE.md", ".claude/rules/style.md"]);
  assert.equal(snap.code, 0, snap.stderr);
  const rd = outLines(snap).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
  writeTree(ex.proj, { "CLAUDE.md": CLAUDE_86, ".claude/rules/style.md": STYLE_86 });
  if (options.checkpoint ?? true) {
    const cp = runTool(
      "text-guard",
      ["checkpoint", "--run-dir", rd, "CLAUDE.md", ".claude/rules/style.md"],
      { cwd: ex.proj, env: ex.env },
    );
    assert.equal(cp.code, 0, cp.stderr);
  }
  return { ex, rd };
}

const verifyArgs = (rd: string, ledger = "ledger.tsv", extra: string[] = []) => [
  "verify",
  "--run-dir",
  rd,
  "--ledger",
  ledger,
  ...extra,
  "CLAUDE.md",
  ".claude/rules/style.md",
];

const STYLE_PASS = [
  "FILE: .claude/rules/style.md",
  "MISSING: 0",
  "GATE: PASS",
  "ACTION: kept",
];

function rollbackTail(rd: string): string[] {
  return [
    `ROLLBACK: whole run (gate failed) ${rd}`,
    "RESTORED: .claude/rules/style.md",
    "RESTORED: CLAUDE.md",
    `ROLLBACK_VERIFIED: 0 mismatches, 0 missing from snapshot (${rd})`,
    `RUN: FAILED - every file of ${rd} is back at its pre-edit bytes`,
  ];
}

Deno.test("ledger example: every miss ledgered → GATE: PASS (every miss ledgered), exit 0, nothing restored", () => {
  const { ex, rd } = setup();
  writeTree(ex.proj, { "ledger.tsv": HEADER + ROW2 + ROW3 });
  const r = cg(ex, verifyArgs(rd));
  assert.equal(r.code, 0, r.stderr);
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
    ...STYLE_PASS,
    "FILES_FAILED: 0",
  ]);
  assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_86);
  assert.equal(read(`${ex.proj}/.claude/rules/style.md`), STYLE_86);
});

Deno.test("ledger example: survivor lacking the token → UNCOVERED, whole-run rollback restores both files", () => {
  const { ex, rd } = setup();
  writeTree(ex.proj, {
    "README.md": "keep\n",
    "ledger.tsv": HEADER + "CLAUDE.md\t3\tREADME.md\tbuild step kept in the style rules\n" + ROW3,
  });
  const r = cg(ex, verifyArgs(rd));
  assert.equal(r.code, 1, r.stderr);
  assert.deepEqual(errLines(r), []);
  assert.deepEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 2",
    "  - num:30",
    "  - path:scripts/build.sh",
    "LEDGERED: num:30 (row 3: 5 -> -)",
    "UNCOVERED: path:scripts/build.sh",
    "GATE: FAIL",
    "ACTION: kept",
    ...STYLE_PASS,
    "FILES_FAILED: 1",
    ...rollbackTail(rd),
  ]);
  // The ledgered-clean style.md is rolled back too: the whole run, not just the failing file.
  assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_MD);
  assert.equal(read(`${ex.proj}/.claude/rules/style.md`), STYLE_MD);
});

Deno.test("ledger example: malformed range → exit 2, stdout empty, nothing touched", () => {
  const { ex, rd } = setup();
  writeTree(ex.proj, {
    "ledger.tsv": HEADER + "CLAUDE.md\t3-x\t.claude/rules/style.md\tbuild step\n" + ROW3,
  });
  const before = treeState(ex.proj);
  const r = cg(ex, verifyArgs(rd));
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.deepEqual(errLines(r), [
    "❌ malformed ledger row ledger.tsv:2: bad line range '3-x' (want N or N-M, 1 <= N <= M)",
  ]);
  assert.deepEqual(treeState(ex.proj), before);
});

Deno.test("ledger: every malformed reason with its physical line (comments, blanks, CRLF, CR counted)", () => {
  const { ex, rd } = setup();
  const cases: [string, string][] = [
    ["CLAUDE.md\t3\n", "ledger.tsv:1: need path<TAB>line-range<TAB>survivor[<TAB>reason]"],
    ["# c\r\n\r\nCLAUDE.md\n", "ledger.tsv:3: need path<TAB>line-range<TAB>survivor[<TAB>reason]"],
    ["# c\r\r\tx\t-\n", "ledger.tsv:3: empty path"],
    [
      HEADER + ROW3 + "CLAUDE.md\t0\t-\n",
      "ledger.tsv:3: bad line range '0' (want N or N-M, 1 <= N <= M)",
    ],
    [
      HEADER + "CLAUDE.md\t5-3\t-\n",
      "ledger.tsv:2: bad line range '5-3' (want N or N-M, 1 <= N <= M)",
    ],
    [HEADER + "CLAUDE.md\t\t-\n", "ledger.tsv:2: bad line range '' (want N or N-M, 1 <= N <= M)"],
    [
      HEADER + "CLAUDE.md\t3\t\treason\n",
      "ledger.tsv:2: empty survivor (use - for an accepted loss)",
    ],
    // Rows of other files are validated too, before any gate output.
    [ROW3 + "other.md\t1\n", "ledger.tsv:2: need path<TAB>line-range<TAB>survivor[<TAB>reason]"],
  ];
  for (const [text, where] of cases) {
    writeTree(ex.proj, { "ledger.tsv": text });
    const r = cg(ex, verifyArgs(rd));
    assert.equal(r.code, 2, JSON.stringify(text));
    assert.equal(r.stdout, "");
    assert.deepEqual(errLines(r), [`❌ malformed ledger row ${where}`], JSON.stringify(text));
  }
  // The ledger is named as typed.
  writeTree(ex.proj, { "sub/l.tsv": "\t1\t-\n" });
  const r = cg(ex, verifyArgs(rd, "./sub/l.tsv"));
  assert.deepEqual(errLines(r), ["❌ malformed ledger row ./sub/l.tsv:1: empty path"]);
  assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_86);
});

Deno.test("ledger: missing or non-regular ledger file → exit 2 before any report; run-dir errors first", () => {
  const { ex, rd } = setup();
  for (const l of ["nope.tsv", ".claude"]) {
    const r = cg(ex, verifyArgs(rd, l));
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.deepEqual(errLines(r), [`❌ no such ledger file: ${l}`]);
  }
  let r = cg(ex, ["verify", "--run-dir", `${ex.base}/none`, "--ledger", "nope.tsv", "CLAUDE.md"]);
  assert.deepEqual(errLines(r), [`❌ no snapshot dir: ${ex.base}/none/orig`]);
  r = cg(ex, ["verify", "--run-dir", rd, "--ledger", "nope.tsv"]);
  assert.deepEqual(errLines(r), ["❌ verify needs at least one file"]);
  for (const args of [["--ledger"], ["--ledger", ""]]) {
    r = cg(ex, ["verify", "--run-dir", rd, "CLAUDE.md", ...args]);
    assert.equal(r.code, 2);
    assert.deepEqual(errLines(r), ["❌ --ledger needs a value"]);
  }
});

Deno.test("ledger coverage: range without the token, missing survivor, survivor = file → UNCOVERED", () => {
  const cases: [string, string][] = [
    ["CLAUDE.md\t4\t-\tline 4 has no 30\n", "UNCOVERED: num:30"],
    ["CLAUDE.md\t5\tmissing.md\tgone\n", "UNCOVERED: num:30"],
    ["CLAUDE.md\t5\tCLAUDE.md\tself\n", "UNCOVERED: num:30"],
    ["CLAUDE.md\t5\t.claude\ta directory\n", "UNCOVERED: num:30"],
    // Lines past the end of the snapshot are absent; a range reaching into them still works.
    ["CLAUDE.md\t6-99\t-\tpast the end\n", "UNCOVERED: num:30"],
    ["CLAUDE.md\t4-99\t-\tto the end\n", "LEDGERED: num:30 (row 1: 4-99 -> -)"],
    // Rows of other files never cover this one.
    [".claude/rules/style.md\t1-9\t-\tother\nother.md\t5\t-\n", "UNCOVERED: num:30"],
    // First matching row wins, in file order.
    [
      "CLAUDE.md\t5\tmissing.md\nCLAUDE.md\t1-5\t-\tb\nCLAUDE.md\t5\t-\tc\n",
      "LEDGERED: num:30 (row 2: 1-5 -> -)",
    ],
  ];
  for (const [ledger, line] of cases) {
    const { ex, rd } = setup();
    // Only `30` is dropped here.
    writeTree(ex.proj, {
      "CLAUDE.md": CLAUDE_MD.replace("Timeout is 30 seconds, ", ""),
      ".claude/rules/style.md": STYLE_MD,
      "ledger.tsv": ledger,
    });
    const cp = runTool("text-guard", ["checkpoint", "--run-dir", rd, "CLAUDE.md"], {
      cwd: ex.proj,
      env: ex.env,
    });
    assert.equal(cp.code, 0);
    const r = cg(ex, verifyArgs(rd));
    const out = outLines(r);
    assert.deepEqual(out.slice(0, 5), [
      "FILE: CLAUDE.md",
      "MISSING: 1",
      "  - num:30",
      line,
      out[4],
    ]);
    if (line.startsWith("UNCOVERED")) {
      assert.equal(r.code, 1, ledger);
      assert.equal(out[4], "GATE: FAIL");
      assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_MD, "rolled back");
    } else {
      assert.equal(r.code, 0, ledger);
      assert.equal(out[4], "GATE: PASS (every miss ledgered)");
    }
  }
});

Deno.test("ledger paths: ~/, absolute and linked paths match; survivors resolve the same way; CRLF", () => {
  const { ex, rd } = setup();
  symlinkSync(ex.proj, `${ex.base}/alias`);
  const rows = [
    `~/proj/CLAUDE.md\t3\t~/proj/.claude/rules/style.md\thome-relative\r\n`,
    `${ex.base}/alias/CLAUDE.md\t5\t${ex.proj}/.claude/rules/style.md\tlinked path, survivor lacks 30\r\n`,
    `${ex.proj}/./sub/../CLAUDE.md\t5\t-\tabsolute, normalised\r\n`,
  ];
  writeTree(ex.proj, { "ledger.tsv": "# crlf ledger\r\n" + rows.join("") });
  const r = cg(ex, verifyArgs(rd));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(outLines(r).slice(4, 7), [
    `LEDGERED: num:30 (row 4: 5 -> -)`,
    `LEDGERED: path:scripts/build.sh (row 2: 3 -> ~/proj/.claude/rules/style.md)`,
    "GATE: PASS (every miss ledgered)",
  ]);
});

Deno.test("ledger: verify called from a subdirectory resolves rows against the cwd", () => {
  const { ex, rd } = setup();
  writeTree(ex.proj, { "docs/ledger.tsv": `../CLAUDE.md\t3-5\t-\tall accepted\n` });
  const r = runTool(
    "context-guard",
    ["verify", "--run-dir", rd, "--ledger", "ledger.tsv", "../CLAUDE.md"],
    { cwd: `${ex.proj}/docs`, env: ex.env },
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 2",
    "  - num:30",
    "  - path:scripts/build.sh",
    "LEDGERED: num:30 (row 1: 3-5 -> -)",
    "LEDGERED: path:scripts/build.sh (row 1: 3-5 -> -)",
    "GATE: PASS (every miss ledgered)",
    "ACTION: kept",
    "FILES_FAILED: 0",
  ]);
});

Deno.test("ledger: one file ledgered + one failing → whole run rolled back, ledgered file included", () => {
  const { ex, rd } = setup({ checkpoint: false });
  // style.md loses `120`, unledgered; CLAUDE.md's misses are all ledgered.
  writeTree(ex.proj, {
    ".claude/rules/style.md": STYLE_86.replace(" Max line length 120.", ""),
    "ledger.tsv": HEADER + ROW2.replace(".claude/rules/style.md\t", "-\t") + ROW3,
  });
  const cp = runTool(
    "text-guard",
    ["checkpoint", "--run-dir", rd, "CLAUDE.md", ".claude/rules/style.md"],
    { cwd: ex.proj, env: ex.env },
  );
  assert.equal(cp.code, 0);
  const r = cg(ex, verifyArgs(rd));
  assert.equal(r.code, 1);
  assert.deepEqual(outLines(r), [
    "FILE: CLAUDE.md",
    "MISSING: 2",
    "  - num:30",
    "  - path:scripts/build.sh",
    "LEDGERED: num:30 (row 3: 5 -> -)",
    "LEDGERED: path:scripts/build.sh (row 2: 3 -> -)",
    "GATE: PASS (every miss ledgered)",
    "ACTION: kept",
    "FILE: .claude/rules/style.md",
    "MISSING: 1",
    "  - num:120",
    "UNCOVERED: num:120",
    "GATE: FAIL",
    "ACTION: kept",
    "FILES_FAILED: 1",
    ...rollbackTail(rd),
  ]);
  assert.equal(read(`${ex.proj}/CLAUDE.md`), CLAUDE_MD);
  assert.equal(read(`${ex.proj}/.claude/rules/style.md`), STYLE_MD);
});

Deno.test("ledger without misses, and verify without --ledger, print exactly as text-guard verify does", () => {
  const { ex, rd } = setup();
  writeTree(ex.proj, { "CLAUDE.md": CLAUDE_MD, ".claude/rules/style.md": STYLE_MD });
  writeTree(ex.proj, { "ledger.tsv": HEADER + ROW3 });
  const plain = cg(ex, ["verify", "--run-dir", rd, "CLAUDE.md", ".claude/rules/style.md"]);
  const ledgered = cg(ex, verifyArgs(rd));
  assert.equal(plain.code, 0);
  assert.equal(ledgered.code, 0);
  assert.equal(ledgered.stdout, plain.stdout);
  assert.deepEqual(outLines(plain), [
    "FILE: CLAUDE.md",
    "MISSING: 0",
    "GATE: PASS",
    "ACTION: kept",
    ...STYLE_PASS,
    "FILES_FAILED: 0",
  ]);
});

Deno.test("ledger with --tokens=ext: ranges and survivors judged in the extended alphabet", () => {
  const { ex, rd } = setup();
  writeTree(ex.proj, {
    "ledger.tsv": HEADER + "CLAUDE.md\t3-5\t-\teverything accepted\n",
  });
  const r = cg(ex, verifyArgs(rd, "ledger.tsv", ["--tokens=ext"]));
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const out = outLines(r);
  // The extended alphabet adds more misses (e.g. `file:build.sh`); each is ledgered by row 2.
  assert.ok(out.includes("  - file:build.sh"), out.join("\n"));
  assert.ok(out.includes("LEDGERED: file:build.sh (row 2: 3-5 -> -)"));
  assert.ok(out.includes("GATE: PASS (every miss ledgered)"));
  // A survivor judged in ext: style.md carries `file:build.sh` but not `lneg:` words.
  writeTree(ex.proj, {
    "ledger.tsv": HEADER + "CLAUDE.md\t3\t.claude/rules/style.md\tmoved\n",
  });
  const r2 = cg(ex, verifyArgs(rd, "ledger.tsv", ["--tokens=ext"]));
  const out2 = outLines(r2);
  assert.ok(out2.includes("LEDGERED: file:build.sh (row 2: 3 -> .claude/rules/style.md)"));
  assert.ok(out2.includes("UNCOVERED: num:30"));
  assert.equal(r2.code, 1);
});

Deno.test("verify --tokens=ext: `cyr:` words are characters in any locale, ledgered like any token", () => {
  const ex = exampleProject();
  writeTree(ex.proj, { "ru.md": "сожми контекст на 40%, ещё\n" });
  const snap = cg(ex, ["snapshot", "ru.md"]);
  assert.equal(snap.code, 0, snap.stderr);
  const rd = outLines(snap).find((l) => l.startsWith("RUN_DIR: "))!.slice("RUN_DIR: ".length);
  writeTree(ex.proj, { "ru.md": "40%\n", "ledger.tsv": "ru.md\t1\t-\tlossy\n" });
  for (const locale of ["C", "POSIX", "ru_RU.KOI8-R", "en_US.UTF-8"]) {
    const r = cg(
      ex,
      ["verify", "--tokens=ext", "--run-dir", rd, "--ledger", "ledger.tsv", "ru.md"],
      {
        LC_ALL: locale,
        LANG: locale,
      },
    );
    assert.equal(r.code, 0, `${locale}: ${r.stdout}${r.stderr}`);
    assert.deepEqual(outLines(r), [
      "FILE: ru.md",
      "MISSING: 4",
      "  - cyr:ещё",
      "  - cyr:контекст",
      "  - cyr:на",
      "  - cyr:сожми",
      "LEDGERED: cyr:ещё (row 1: 1 -> -)",
      "LEDGERED: cyr:контекст (row 1: 1 -> -)",
      "LEDGERED: cyr:на (row 1: 1 -> -)",
      "LEDGERED: cyr:сожми (row 1: 1 -> -)",
      "GATE: PASS (every miss ledgered)",
      "ACTION: kept",
      "FILES_FAILED: 0",
    ], locale);
  }
  const bad = cg(ex, ["verify", "--tokens=", "--run-dir", rd, "ru.md"]);
  assert.equal(bad.code, 2);
  assert.deepEqual(errLines(bad), ["❌ unknown token alphabet:  (want base or ext)"]);
});
