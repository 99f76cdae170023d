/**
 * A `CLAUDE.md` linked to `AGENTS.md` (wshobson/agents' layout) told truthfully by the guard
 * (`references/context-guard.md#physical-resolution`, `#document`): snapshotting the link names
 * the real file to snapshot instead, and `state` counts the one physical file once.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { countOnce } from "../lib/guard/state/document.ts";
import { git, makeTempDir, runTool, writeTree } from "./_helpers.ts";
import { errLines } from "./_guard_fixtures.ts";

const AGENTS = "# Agents\n\n" + "Use pnpm 9.1 and NEVER push to main. ".repeat(40) + "\n";
const SLIM = "# Agents\n\nUse pnpm 9.1 and NEVER push to main.\n";

function linkedProject() {
  const base = makeTempDir("ctxkit-linked-");
  const proj = `${base}/proj`;
  writeTree(proj, { "AGENTS.md": AGENTS });
  symlinkSync("AGENTS.md", `${proj}/CLAUDE.md`);
  git(proj, "init", "-q");
  git(proj, "add", "-A");
  git(proj, "commit", "-qm", "init");
  return { base, proj, env: { HOME: `${base}/home`, CLAUDE_PROJECT_DIR: proj } };
}

Deno.test("links: snapshotting CLAUDE.md -> AGENTS.md names the real file to snapshot", () => {
  const p = linkedProject();
  const r = runTool("context-guard", ["snapshot", "CLAUDE.md"], { cwd: p.proj, env: p.env });
  strictEqual(r.code, 2);
  deepStrictEqual(errLines(r), [
    `❌ symbolic-link target: CLAUDE.md - name the intended real file explicitly: ${p.proj}/AGENTS.md`,
    "❌ snapshot failed (text-guard exit 2)",
  ]);
  const real = runTool("context-guard", ["snapshot", `${p.proj}/AGENTS.md`], {
    cwd: p.proj,
    env: p.env,
  });
  strictEqual(real.code, 0, real.stderr);
});

Deno.test("links: state counts one physical file once (the scan lists it under both names)", () => {
  const p = linkedProject();
  const scan = (out: string) => {
    const r = runTool("context-scan", ["--root", "."], { cwd: p.proj, env: p.env });
    strictEqual(r.code, 0, r.stderr);
    writeFileSync(out, r.stdout);
    return JSON.parse(r.stdout);
  };
  const before = scan(`${p.base}/p1.json`);
  // The potential inventory lists the file under both names: the state must not count it twice.
  deepStrictEqual(
    before.files.map((f: { path: string }) => f.path).sort(),
    [`${p.proj}/AGENTS.md`, `${p.proj}/CLAUDE.md`],
  );
  writeFileSync(`${p.proj}/AGENTS.md`, SLIM);
  scan(`${p.base}/p6.json`);
  const r = runTool("context-guard", [
    "state",
    "--mode",
    "slim",
    "--before",
    `${p.base}/p1.json`,
    "--after",
    `${p.base}/p6.json`,
  ], { cwd: p.proj, env: p.env });
  strictEqual(r.code, 0, r.stderr);
  const state = JSON.parse(
    readFileSync(`${p.proj}/.claude/brewtools/context-slim/state.json`, "utf8"),
  );
  const b = Math.floor(new TextEncoder().encode(AGENTS).length / 4);
  const a = Math.floor(new TextEncoder().encode(SLIM).length / 4);
  deepStrictEqual(state.files, [{
    path: `${p.proj}/AGENTS.md`,
    before_tokens: b,
    after_tokens: a,
  }]);
  deepStrictEqual(state.totals, { before_tokens: b, after_tokens: a });
  strictEqual(state.achieved_ratio_pct, Math.round(((b - a) * 10000) / b) / 100);
});

Deno.test("countOnce: names of one file keep the real name's rows; other scans are unchanged", () => {
  const doc = {
    scan_issues: [],
    files: [
      { path: "/p/CLAUDE.md", tokens: 350 },
      { path: "/p/AGENTS.md", tokens: 350 },
      { path: "/p/a.md", tokens: 1 },
      { path: "/p/a.md", tokens: 2 },
    ],
    totals: { grand: { tokens: 703 } },
  };
  const physical = (path: string) => path === "/p/CLAUDE.md" ? "/p/AGENTS.md" : path;
  deepStrictEqual(countOnce(doc, physical), {
    scan_issues: [],
    files: [{ path: "/p/AGENTS.md", tokens: 350 }, { path: "/p/a.md", tokens: 1 }, {
      path: "/p/a.md",
      tokens: 2,
    }],
    totals: { grand: { tokens: 353 } },
  });
  strictEqual(countOnce(doc, (path) => path), doc);
  // Neither name is the file itself (both links): the first name's rows stay.
  const both = (path: string) => path.endsWith("a.md") ? path : "/real/X.md";
  deepStrictEqual(countOnce(doc, both).files.map((f) => f.path), [
    "/p/CLAUDE.md",
    "/p/a.md",
    "/p/a.md",
  ]);
});
