/**
 * The README's test command is one a newcomer can run: `deno task test` starts no suite that
 * installs the pinned Claude Code (hundreds of MB); those suites are `deno task test:observed`,
 * which `.ci/run` runs, and the install says what it downloads before it starts.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { CLAUDE_CODE_INSTALL_MB, CLAUDE_CODE_VERSION } from "../scripts/claude_code.ts";
import { makeTempDir, REPO, writeTree } from "./_helpers.ts";

const DenoJson = z.object({ tasks: z.record(z.string(), z.string()) });

function tasks(): Record<string, string> {
  return DenoJson.parse(JSON.parse(readFileSync(join(REPO, "deno.json"), "utf8"))).tasks;
}

/** A shell glob of one path (`*` within a segment) as a regular expression. */
function globRegExp(glob: string): RegExp {
  const body = glob.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join("[^/]*");
  return new RegExp(`^${body}$`);
}

/** The test files (`tests/*_test.ts`) that start the real Claude Code or install it. */
function observedFiles(): string[] {
  return readdirSync(join(REPO, "tests"))
    .filter((f) => f.endsWith("_test.ts"))
    .filter((f) => {
      const text = readFileSync(join(REPO, "tests", f), "utf8");
      return /from "\.\/_claude\.ts"|\bensureClaudeCode\b/.test(text);
    })
    .map((f) => `tests/${f}`)
    .sort();
}

Deno.test("deno task test leaves out every suite that starts Claude Code; test:observed runs each", () => {
  const t = tasks();
  const ignored = /--ignore=(\S+)/.exec(t.test)?.[1].split(",") ?? [];
  const observedArgs = t["test:observed"].split(";").at(-1)!.trim().split(/\s+/)
    .filter((a) => a.startsWith("tests/"));
  assert.ok(observedArgs.length > 0, t["test:observed"]);
  const files = observedFiles();
  assert.ok(files.includes("tests/context_scan_differential_test.ts"), files.join(", "));
  for (const file of files) {
    assert.ok(ignored.some((g) => globRegExp(g).test(file)), `deno task test runs ${file}`);
    assert.ok(
      observedArgs.some((g) => globRegExp(g).test(file)),
      `deno task test:observed leaves out ${file}`,
    );
  }
  // The observed task installs the pinned version once, before its files run in parallel.
  assert.match(
    t["test:observed"],
    /^\.\/node_modules\/\.bin\/deno run -A scripts\/claude_code\.ts /,
  );
  const ci = readFileSync(join(REPO, ".ci", "run"), "utf8");
  assert.match(ci, /^run npx deno task test:observed$/m);
});

/** Every `*_test.ts` under `dir` (relative to the checkout), recursively. */
function testFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith("_test.ts"))
    .map((f) => `${dir}/${f}`)
    .sort();
}

/** The `--ignore=` globs of a task (`deno test … --ignore=a,b,c`). */
function ignoredBy(task: string): string[] {
  return /--ignore=(\S+)/.exec(task)?.[1].split(",") ?? [];
}

function matches(globs: string[], file: string): boolean {
  return globs.some((g) => g === file || file.startsWith(`${g}/`) || globRegExp(g).test(file));
}

Deno.test("every test file runs in CI: the README's test, the observed, the bundle or the stress suite", () => {
  const t = tasks();
  const inTest = (f: string) => !matches(ignoredBy(t.test), f);
  const inBundle = (f: string) => !matches(ignoredBy(t["test:bundle"]), f);
  const inStress = (f: string) => f.startsWith("tests/stress/");
  const inObserved = (f: string) =>
    t["test:observed"].split(/\s+/).filter((a) => a.startsWith("tests/")).some((g) =>
      globRegExp(g).test(f)
    );
  const files = [...testFiles("tests"), ...testFiles("lib")];
  assert.ok(files.includes("tests/compile_test.ts"), files.join(", "));
  for (const f of files) {
    assert.ok(inTest(f) || inBundle(f) || inStress(f) || inObserved(f), `no CI suite runs ${f}`);
  }
  // Packaging (deno compile over the bundles) is the bundle suite's, not the README's command.
  assert.ok(!inTest("tests/compile_test.ts") && inBundle("tests/compile_test.ts"));
  // A file the bundle suite leaves out runs no tool: it would prove the same thing twice.
  for (const f of files.filter((f) => f.startsWith("tests/") && !inStress(f) && !inBundle(f))) {
    if (inObserved(f)) continue;
    const text = readFileSync(join(REPO, f), "utf8");
    assert.doesNotMatch(
      text,
      /import\s*\{[^}]*\b(runTool|runToolAsync|toolArgv|TARGET|selfCommandWords)\b[^}]*\}\s*from "\.\/_/,
      f,
    );
  }
});

Deno.test("scripts/claude_code.ts says what it downloads, how big and where, before it starts", () => {
  const cache = makeTempDir("ctxkit-claude-cache-");
  const bin = makeTempDir("ctxkit-npm-stand-in-");
  // An npm that records that it ran and fails, as an unreachable registry does.
  writeTree(bin, { npm: '#!/bin/sh\necho "npm ran" >&2\necho "npm error network" >&2\nexit 1\n' });
  Deno.chmodSync(join(bin, "npm"), 0o755);
  const out = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(REPO, "scripts", "claude_code.ts")],
    clearEnv: true,
    env: {
      PATH: `${bin}:/usr/bin:/bin`,
      HOME: cache,
      CTXKIT_CLAUDE_CODE_CACHE: cache,
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, stderr);
  assert.equal(
    stderr,
    `Installing Claude Code ${CLAUDE_CODE_VERSION} for the observed tests (npm, about ${CLAUDE_CODE_INSTALL_MB} MB) into ${cache}/${CLAUDE_CODE_VERSION}, once: later runs reuse it\n` +
      `npm install @anthropic-ai/claude-code@${CLAUDE_CODE_VERSION} failed: npm error network\n`,
  );
});
