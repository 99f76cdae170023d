/**
 * Argument fuzzing of the four CLIs (reliability suite): seeded random argument vectors built from
 * each tool's own words plus random strings, each run in a child process. Every run must end by
 * itself with a defined exit code, the matching exit-contract line last on stderr, and no stack
 * trace. Random values never start with `/` and never contain `..` (the runs stay inside their temp
 * cwd and temp HOME), and `prose serve` is left out: it is the one command meant to run until killed.
 *
 * @module
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { lines, makeTempDir, type Tool } from "../_helpers.ts";
import { runKillable } from "./_harness.ts";

const WORDS: Record<Tool, { words: string[]; codes: number[] }> = {
  "context-scan": {
    words: [
      "--root",
      "--global",
      "--tier",
      "--json",
      "--help",
      "-h",
      "help",
      "always-on",
      "all",
      "--tier=all",
      "--version",
      "--",
    ],
    codes: [0, 2],
  },
  "context-guard": {
    words: [
      "snapshot",
      "verify",
      "verify-deleted",
      "rollback",
      "restore",
      "state",
      "list",
      "help",
      "--project",
      "--global",
      "--run-dir",
      "--allow-dirty",
      "--ledger",
      "--tokens=base",
      "--tokens=ext",
      "--tokens=",
      "--tokens",
      "ext",
      "--run-dir=",
      "--version",
      "--survivor",
      "--check",
      "--mode",
      "--before",
      "--after",
      "--flags",
      "--root",
      "--out",
      "--json",
      "--quiet",
      "--force",
      "--dry-run",
      "last",
      "CLAUDE.md",
      "-",
      "--",
    ],
    codes: [0, 1, 2, 3],
  },
  "text-guard": {
    words: [
      "snapshot",
      "verify",
      "restore",
      "checkpoint",
      "status",
      "--run-dir",
      "--allow-dirty",
      "--no-restore",
      "--tokens=ext",
      "--tokens",
      "--run-dir=d",
      "--version",
      "--json",
      "--quiet",
      "--force",
      "CLAUDE.md",
      "-h",
    ],
    codes: [0, 1, 2, 3],
  },
  "prose": {
    words: [
      "--local",
      "on",
      "off",
      "level",
      "status",
      "consume",
      "block-end",
      "session-end",
      "match",
      "install-hooks",
      "sync",
      "--json",
      "--level",
      "--for",
      "--source",
      "--text",
      "--hook-input",
      "--activate",
      "--repo",
      "--dry-run",
      "--remove",
      "3",
      "turns",
      "block",
      "session",
      "explicit",
      "minimal",
      "full",
      "90s",
      "auto-clarity",
      "--level=full",
      "--version",
      "help",
      "--",
    ],
    codes: [0, 1, 2],
  },
};

/** Seeded argument vectors for `tool` (never `serve`, no absolute or `..` values). */
export function argVectors(tool: Tool, count: number, seed: number): string[][] {
  const safe = fc.string({ unit: "binary", maxLength: 10 }).filter((s) =>
    !s.includes("\0") && !s.includes("..") && !s.startsWith("/") && s !== "serve"
  );
  const arg = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...WORDS[tool].words) },
    { weight: 1, arbitrary: safe },
  );
  return fc.sample(fc.array(arg, { maxLength: 7 }), { seed, numRuns: count });
}

/** Run every vector and check the exit contract; returns how many runs ended with each code. */
export async function fuzzCli(
  tool: Tool,
  count: number,
  seed: number,
): Promise<Map<number, number>> {
  const byCode = new Map<number, number>();
  for (const args of argVectors(tool, count, seed)) {
    const cwd = makeTempDir("ctxkit-argfuzz-");
    const env = { CELLM_DIR: `${cwd}/cellm`, CTXKIT_NOW_MS: "1800000000000" };
    const r = await runKillable(tool, args, { cwd, env, killAfterMs: 60_000 });
    const what = `${tool} ${JSON.stringify(args)}`;
    assert.equal(r.signal, null, `${what} hung (killed after 60 s)`);
    assert.ok(WORDS[tool].codes.includes(r.code!), `${what} → exit ${r.code}: ${r.stderr}`);
    const last = lines(r.stderr).at(-1);
    assert.equal(last, r.code === 0 ? "✅ EXIT:0" : `❌ FAILED EXIT:${r.code}`, what);
    assert.ok(!/Uncaught|^\s+at /m.test(r.stderr), `${what}: stack trace\n${r.stderr}`);
    byCode.set(r.code!, (byCode.get(r.code!) ?? 0) + 1);
  }
  return byCode;
}

/** The tools, in a fixed order. */
export const TOOLS: Tool[] = ["context-scan", "context-guard", "text-guard", "prose"];
