/**
 * CLI tests of `context-guard state` (`references/context-guard.md#ratchet-state`): `--check`, the
 * document, its inputs' rejections and writing.
 */
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import {
  lines,
  makeSharedTempDir,
  makeTempDir,
  runTool,
  runToolAsUser,
  skipWithoutUnprivilegedUser,
  writeTree,
} from "./_helpers.ts";
import { StateDocumentSchema } from "../lib/guard/state/document.ts";

const STATE_REL = ".claude/brewtools/context-slim/state.json";

/** A complete context-scan document with the given `[path, tokens]` rows. */
function scanDoc(rows: [string, number][], grand?: number): string {
  const total = rows.reduce((n, [, t]) => n + t, 0);
  const tier = { files: rows.length, bytes: total * 4, tokens: total };
  return JSON.stringify(
    {
      roots: { project: "/p", global: null },
      tier_filter: "all",
      token_model: "chars/4",
      measurement: {
        scope: "potential-inventory",
        token_proxy: "bytes/4",
        actual_loading_observed: false,
      },
      files: rows.map(([path, tokens]) => ({
        path,
        root: "project",
        tier: "always-on",
        kind: "file",
        bytes: tokens * 4,
        tokens,
        estimated: false,
        loading: "startup-instruction",
      })),
      scan_issues: [],
      totals: {
        "always-on": tier,
        "per-spawn": { files: 0, bytes: 0, tokens: 0 },
        "per-invocation": { files: 0, bytes: 0, tokens: 0 },
        grand: grand === undefined ? tier : { ...tier, tokens: grand },
      },
    },
    null,
    2,
  ) + "\n";
}

interface Fixture {
  proj: string;
  before: string;
  after: string;
}

function fixture(before: [string, number][], after: [string, number][]): Fixture {
  const proj = makeTempDir("ctxkit-state-");
  writeTree(proj, { "scan/before.json": scanDoc(before), "scan/after.json": scanDoc(after) });
  return { proj, before: join(proj, "scan/before.json"), after: join(proj, "scan/after.json") };
}

const env = (proj: string, extra: Record<string, string> = {}) => ({
  CLAUDE_PROJECT_DIR: proj,
  TZ: "UTC",
  ...extra,
});

function state(proj: string, args: string[], extra: Record<string, string> = {}) {
  return runTool("context-guard", ["state", ...args], { cwd: proj, env: env(proj, extra) });
}

Deno.test("state --check: absent then present, default path", () => {
  const f = fixture([["CLAUDE.md", 10]], [["CLAUDE.md", 8]]);
  const path = join(f.proj, STATE_REL);
  let r = state(f.proj, ["--check"]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `STATE: absent ${path}\n`);
  assert.deepEqual(lines(r.stderr), ["✅ EXIT:0"]);
  r = state(f.proj, ["--mode", "slim", "--before", f.before, "--after", f.after]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `STATE: written ${path}\n`);
  r = state(f.proj, ["--check"]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `STATE: present ${path}\n`);
});

Deno.test("state --check: --root and --out, other options ignored, nothing read", () => {
  const f = fixture([], []);
  const other = makeTempDir("ctxkit-state-root-");
  let r = state(f.proj, ["--check", "--root", other, "--mode", "x", "--before", "/nope"]);
  assert.equal(r.code, 0);
  assert.equal(r.stdout, `STATE: absent ${other}/${STATE_REL}\n`);
  writeTree(other, { [STATE_REL]: "not even json" });
  r = state(f.proj, ["--root", other, "--check"]);
  assert.equal(r.stdout, `STATE: present ${other}/${STATE_REL}\n`);
  // --out wins over --root; a directory is not a regular file.
  r = state(f.proj, ["--check", "--root", other, "--out", "rel/out.json"]);
  assert.equal(r.stdout, "STATE: absent rel/out.json\n");
  mkdirSync(join(f.proj, "rel/out.json"), { recursive: true });
  r = state(f.proj, ["--check", "--out", "rel/out.json"]);
  assert.equal(r.stdout, "STATE: absent rel/out.json\n");
  writeTree(f.proj, { "o.json": "{}" });
  r = state(f.proj, ["--check", "--out", "o.json"]);
  assert.equal(r.stdout, "STATE: present o.json\n");
  // Empty --root / --out fall back to the default.
  r = state(f.proj, ["--check", "--root", "", "--out", ""]);
  assert.equal(r.stdout, `STATE: absent ${join(f.proj, STATE_REL)}\n`);
});

Deno.test("state write: key order, layout, sorted union, per-path sums, 27.14", () => {
  const f = fixture(
    [["CLAUDE.md", 300], [".claude/rules/b.md", 150], ["CLAUDE.md", 200], ["gone.md", 50]],
    [["CLAUDE.md", 310], [".claude/rules/b.md", 150], ["new.md", 50]],
  );
  writeTree(f.proj, {
    "ledger.tsv": "# path\tline-range\tsurvivor\treason\r\n" +
      "CLAUDE.md\t3\t.claude/rules/b.md\tbuild step kept\r\n" +
      "\r\n" +
      "CLAUDE.md\t5\t-\tlossy: the timeout is the default\r\n" +
      "short.md\r\n" +
      "x.md\t1-2\n",
  });
  const t0 = Date.now();
  const r = state(f.proj, [
    "--mode",
    "slim",
    "--flags",
    "--global --target=50%",
    "--before",
    f.before,
    "--after",
    f.after,
    "--ledger",
    "ledger.tsv",
  ]);
  const t1 = Date.now();
  assert.equal(r.code, 0, r.stderr);
  const path = join(f.proj, STATE_REL);
  assert.equal(r.stdout, `STATE: written ${path}\n`);
  assert.deepEqual(lines(r.stderr), ["✅ EXIT:0"]);
  const text = readFileSync(path, "utf8");
  const ts = /"timestamp": "([^"]+)"/.exec(text)![1];
  assert.match(ts, /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00$/);
  const when = Date.parse(ts);
  assert.ok(when >= Math.floor(t0 / 1000) * 1000 && when <= t1, ts);
  assert.equal(
    text,
    `{
  "schema": 1,
  "timestamp": "${ts}",
  "mode": "slim",
  "flags": "--global --target=50%",
  "totals": {
    "before_tokens": 700,
    "after_tokens": 510
  },
  "achieved_ratio_pct": 27.14,
  "files": [
    {
      "path": ".claude/rules/b.md",
      "before_tokens": 150,
      "after_tokens": 150
    },
    {
      "path": "CLAUDE.md",
      "before_tokens": 500,
      "after_tokens": 310
    },
    {
      "path": "gone.md",
      "before_tokens": 50,
      "after_tokens": 0
    },
    {
      "path": "new.md",
      "before_tokens": 0,
      "after_tokens": 50
    }
  ],
  "drops": [
    {
      "path": "CLAUDE.md",
      "lines": "3",
      "survivor": ".claude/rules/b.md",
      "reason": "build step kept"
    },
    {
      "path": "CLAUDE.md",
      "lines": "5",
      "survivor": "-",
      "reason": "lossy: the timeout is the default"
    },
    {
      "path": "short.md",
      "lines": "",
      "survivor": "",
      "reason": ""
    },
    {
      "path": "x.md",
      "lines": "1-2",
      "survivor": "",
      "reason": ""
    }
  ]
}
`,
  );
  assert.ok(StateDocumentSchema.safeParse(JSON.parse(text)).success);
  // Atomic write: no temp file left beside it.
  assert.deepEqual(readdirSync(join(f.proj, ".claude/brewtools/context-slim")), ["state.json"]);
});

Deno.test("state write: ratio forms 0.0, -0.0, 0.12 (0.125), 0.38 (0.375), 100.0", () => {
  const cases: [number, number, string][] = [
    [0, 0, "0.0"],
    [0, 7, "0.0"],
    [100000, 100001, "-0.0"],
    [800, 799, "0.12"],
    [800, 797, "0.38"],
    [8, 9, "-12.5"],
    [7, 0, "100.0"],
    [3, 2, "33.33"],
  ];
  for (const [before, after, want] of cases) {
    const f = fixture(before === 0 ? [] : [["a.md", before]], after === 0 ? [] : [["a.md", after]]);
    const r = state(f.proj, ["--mode", "m", "--before", f.before, "--after", f.after]);
    assert.equal(r.code, 0, r.stderr);
    const text = readFileSync(join(f.proj, STATE_REL), "utf8");
    assert.ok(
      text.includes(`\n  "achieved_ratio_pct": ${want},\n`),
      `${before}->${after}: ${text}`,
    );
    if (before === 0 && after === 0) {
      assert.ok(text.includes(`  "flags": "",\n`));
      assert.ok(text.endsWith(`  "files": [],\n  "drops": []\n}\n`));
    }
  }
});

Deno.test("state write: --out creates parents, --root moves the default, non-ASCII raw", () => {
  const f = fixture([["é/ü.md", 4]], [["é/ü.md", 3]]);
  let r = state(f.proj, [
    "--mode",
    "m",
    "--before",
    f.before,
    "--after",
    f.after,
    "--out",
    "a/b/s.json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "STATE: written a/b/s.json\n");
  assert.ok(readFileSync(join(f.proj, "a/b/s.json"), "utf8").includes(`"path": "é/ü.md"`));
  const other = makeTempDir("ctxkit-state-root-");
  r = state(f.proj, ["--root", other, "--mode", "m", "--before", f.before, "--after", f.after]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `STATE: written ${other}/${STATE_REL}\n`);
  assert.ok(existsSync(join(other, STATE_REL)));
  assert.ok(!existsSync(join(f.proj, STATE_REL)));
});

Deno.test("state write: timestamp carries the local numeric offset", () => {
  const f = fixture([], []);
  const r = state(f.proj, ["--mode", "m", "--before", f.before, "--after", f.after], {
    TZ: "Asia/Kolkata",
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(readFileSync(join(f.proj, STATE_REL), "utf8"), /"timestamp": "[0-9T:-]+\+05:30"/);
});

Deno.test("state write: usage errors in order, exit 2, nothing written", () => {
  const f = fixture([], []);
  const path = join(f.proj, STATE_REL);
  const cases: [string[], string][] = [
    [["--before", f.before], "❌ state needs --mode"],
    [["--mode", "", "--before", f.before], "❌ state needs --mode"],
    [["--mode", "m", "--after", f.after], "❌ state needs --before <context-scan JSON>"],
    [
      ["--mode", "m", "--before", f.proj, "--after", f.after],
      `❌ cannot read --before ${f.proj}: not a regular file`,
    ],
    [
      ["--mode", "m", "--before", "missing.json", "--after", f.after],
      "❌ cannot read --before missing.json: No such file or directory",
    ],
    [["--mode", "m", "--before", f.before], "❌ state needs --after <context-scan JSON>"],
    [
      ["--mode", "m", "--before", f.before, "--after", f.after, "--ledger", "nope.tsv"],
      "❌ no such ledger file: nope.tsv",
    ],
    [["--mode"], "❌ --mode needs a value"],
    [["--mode", "m", "--before"], "❌ --before needs a value"],
    [["--mode", "m", "--after"], "❌ --after needs a value"],
    [["--flags"], "❌ --flags needs a value"],
    [["--ledger"], "❌ --ledger needs a value"],
    [["--root"], "❌ --root needs a value"],
    [["--out"], "❌ --out needs a value"],
    [["--check", "--bogus"], "❌ unknown option: --bogus"],
    [["extra"], "❌ unexpected argument: extra"],
    [["--mode=slim"], "❌ state needs --before <context-scan JSON>"],
  ];
  for (const [args, message] of cases) {
    const r = state(f.proj, args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(r.stdout, "");
    assert.deepEqual(lines(r.stderr), [message, "❌ FAILED EXIT:2"], args.join(" "));
  }
  // An empty --ledger means no ledger.
  const r = state(f.proj, [
    "--mode",
    "m",
    "--before",
    f.before,
    "--after",
    f.after,
    "--ledger",
    "",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(readFileSync(path, "utf8").endsWith(`"drops": []\n}\n`));
});

Deno.test("state write: each scan rejection reason, before then after, nothing written", () => {
  const f = fixture([["a.md", 5]], [["a.md", 4]]);
  const good = readFileSync(f.before, "utf8");
  const parsed = JSON.parse(good);
  const variant = (mutate: (doc: Record<string, unknown>) => void): string => {
    const doc = structuredClone(parsed);
    mutate(doc);
    return JSON.stringify(doc);
  };
  const incomplete = "incomplete scanner inventory: scan_issues must be present and empty";
  const cases: [string, string][] = [
    ["{not json", "invalid JSON: "],
    ["", "invalid JSON: "],
    ["[1]", incomplete],
    [variant((d) => delete d.scan_issues), incomplete],
    [variant((d) => (d.scan_issues = {})), incomplete],
    [
      variant((d) => (d.scan_issues = [{
        root: "project",
        path: "x",
        kind: "discovery-incomplete",
        exit_status: 1,
        detail: "d",
      }])),
      incomplete,
    ],
    [variant((d) => (d.files = {})), "invalid scanner file inventory"],
    [variant((d) => (d.files = ["a.md"])), "invalid scanner file path"],
    [
      variant((d) => ((d.files as Record<string, unknown>[])[0].path = "")),
      "invalid scanner file path",
    ],
    [
      variant((d) => delete (d.files as Record<string, unknown>[])[0].path),
      "invalid scanner file path",
    ],
    [good.replace(`"tokens": 5,`, `"tokens": 5.0,`), "invalid scanner token count"],
    [good.replace(`"tokens": 5,`, `"tokens": 5e0,`), "invalid scanner token count"],
    [good.replace(`"tokens": 5,`, `"tokens": true,`), "invalid scanner token count"],
    [good.replace(`"tokens": 5,`, `"tokens": -5,`), "invalid scanner token count"],
    [good.replace(`"tokens": 5,`, `"tokens": 9007199254740992,`), "invalid scanner token count"],
    [
      variant((d) => delete (d.totals as Record<string, unknown>).grand),
      "missing totals.grand.tokens",
    ],
    [variant((d) => delete d.totals), "missing totals.grand.tokens"],
    [
      variant((d) => ((d.totals as { grand: { tokens: number } }).grand.tokens = 6)),
      "scanner token totals do not match its inventory",
    ],
    [
      variant((d) => ((d.totals as { grand: { tokens: unknown } }).grand.tokens = "5")),
      "scanner token totals do not match its inventory",
    ],
  ];
  for (const [text, reason] of cases) {
    writeFileSync(join(f.proj, "bad.json"), text);
    for (
      const [before, after, named] of [["bad.json", f.after, "bad.json"], [
        f.before,
        "bad.json",
        "bad.json",
      ]]
    ) {
      const r = state(f.proj, ["--mode", "m", "--before", before, "--after", after]);
      assert.equal(r.code, 2, `${text}: ${r.stderr}`);
      assert.equal(r.stdout, "");
      const err = lines(r.stderr);
      assert.equal(err.length, 2, r.stderr);
      assert.ok(err[0].startsWith(`State rejected: ${named}: ${reason}`), `${err[0]} / ${reason}`);
      if (!reason.endsWith(": ")) assert.equal(err[0], `State rejected: ${named}: ${reason}`);
      assert.equal(err[1], "❌ FAILED EXIT:2");
      assert.ok(!existsSync(join(f.proj, ".claude")), "nothing written");
    }
  }
  // The before scan is judged first when both are bad.
  writeFileSync(join(f.proj, "bad2.json"), "[]");
  const r = state(f.proj, ["--mode", "m", "--before", "bad2.json", "--after", "bad.json"]);
  assert.equal(lines(r.stderr)[0], `State rejected: bad2.json: ${incomplete}`);
});

Deno.test("state write: a previous state survives a rejection; an existing one is replaced", () => {
  const f = fixture([["a.md", 5]], [["a.md", 4]]);
  const path = join(f.proj, STATE_REL);
  writeTree(f.proj, { [STATE_REL]: "previous\n" });
  writeFileSync(join(f.proj, "bad.json"), "{}");
  let r = state(f.proj, ["--mode", "m", "--before", "bad.json", "--after", f.after]);
  assert.equal(r.code, 2);
  assert.equal(readFileSync(path, "utf8"), "previous\n");
  r = state(f.proj, ["--mode", "m", "--before", f.before, "--after", f.after]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(readFileSync(path, "utf8").includes(`"achieved_ratio_pct": 20.0,`));
});

Deno.test("state write: unwritable destination → cannot write state file, exit 2", () => {
  const f = fixture([], []);
  writeTree(f.proj, { "blocker": "a file where a directory must go\n" });
  let r = state(f.proj, [
    "--mode",
    "m",
    "--before",
    f.before,
    "--after",
    f.after,
    "--out",
    "blocker/s.json",
  ]);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(lines(r.stderr)[0], /^❌ cannot write state file: blocker\/s\.json \(.+\)$/);
  // A symbolic link at the state path is refused, its target untouched.
  writeTree(f.proj, { "target.json": "keep\n" });
  symlinkSync(join(f.proj, "target.json"), join(f.proj, "link.json"));
  r = state(f.proj, [
    "--mode",
    "m",
    "--before",
    f.before,
    "--after",
    f.after,
    "--out",
    "link.json",
  ]);
  assert.equal(r.code, 2);
  assert.match(lines(r.stderr)[0], /^❌ cannot write state file: link\.json \(.+\)$/);
  assert.equal(readFileSync(join(f.proj, "target.json"), "utf8"), "keep\n");
  assert.ok(statSync(join(f.proj, "target.json")).isFile());
});

Deno.test("state: HOME unset without CLAUDE_CONFIG_DIR dies", () => {
  const f = fixture([], []);
  const r = runTool("context-guard", ["state", "--check"], {
    cwd: f.proj,
    env: { CLAUDE_PROJECT_DIR: f.proj, HOME: undefined },
  });
  assert.equal(r.code, 2);
  assert.deepEqual(lines(r.stderr), ["❌ HOME is not set", "❌ FAILED EXIT:2"]);
});

Deno.test("state write: an unreadable scan is rejected as invalid JSON, nothing written", () => {
  if (skipWithoutUnprivilegedUser()) return;
  const proj = makeSharedTempDir("ctxkit-state-");
  writeTree(proj, { "before.json": scanDoc([["a.md", 1]]), "after.json": scanDoc([["a.md", 1]]) });
  chmodSync(join(proj, "before.json"), 0o000);
  chmodSync(proj, 0o777);
  const r = runToolAsUser(
    "context-guard",
    ["state", "--mode", "m", "--before", "before.json", "--after", "after.json"],
    { cwd: proj, env: { CLAUDE_PROJECT_DIR: proj } },
  );
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.equal(r.stdout, "");
  assert.match(
    lines(r.stderr)[0],
    /^State rejected: before\.json: invalid JSON: .*(EACCES|[Pp]ermission denied)/,
  );
  assert.ok(!existsSync(join(proj, ".claude")));
});
