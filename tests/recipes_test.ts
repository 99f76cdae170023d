/**
 * Every recipe in the docs runs as printed (`references/migration.md#installing-ctxkit-in-a-skill`):
 * each block is read from the markdown (tests/_docs.ts), run by bash in a clean directory with only
 * the prerequisites its text names, and followed by the calls of the migration tables (phases 1, 2,
 * 4, 5, 6 and 7, and `prose status`); then the manifest's `restore_cmd` is run from `/` with
 * `PATH=/usr/bin:/bin` and must restore the run, ratchet state included. Every
 * shell block of README.md and references/*.md is marked as a recipe or says why it is not one.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { cpSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { TOOLS } from "../scripts/tools.ts";
import { bundleDir } from "./_bundles.ts";
import { recipe, recipeNames, shellBlocks } from "./_docs.ts";
import { lines, makeTempDir, REPO, runnersDenoDir, TARGET } from "./_helpers.ts";
import { spawnServe } from "./_prose_fixtures.ts";

/** Recipes run elsewhere, and by which test. */
const RUN_ELSEWHERE: Record<string, string> = {
  "quick-start": "tests/setup_test.ts (a fresh clone, npm ci, the README's commands)",
  "install-skill": "tests/install_skill_test.ts (into a plugin, then the skill's phases)",
};

/** Recipes this file runs. */
const RUN_HERE = ["clone", "vendored", "bundles", "prose-status-over-http"];

Deno.test("docs: every shell block of README.md and references/*.md is a recipe, a transcript or says why not", () => {
  const unmarked = shellBlocks().filter((b) => b.mark === undefined);
  deepStrictEqual(
    unmarked.map((b) => `${b.file}:${b.line}`),
    [],
    "mark each block <!-- recipe: <name> --> or <!-- transcript: <name> --> (and run it in a test) or <!-- not a recipe: <why> -->",
  );
});

Deno.test("docs: every console block is a transcript, run by a test (tests/_transcripts.ts)", () => {
  const untested = shellBlocks().filter((b) =>
    b.info.split(/\s/)[0] === "console" && !b.mark?.startsWith("transcript: ")
  );
  deepStrictEqual(
    untested.map((b) => `${b.file}:${b.line}`),
    [],
    "a console block shows commands with what they print: mark it <!-- transcript: <name> -->",
  );
});

Deno.test("docs: every recipe is run by a test", () => {
  const names = recipeNames();
  const unknown = names.filter((n) => !RUN_HERE.includes(n) && !(n in RUN_ELSEWHERE));
  deepStrictEqual(unknown, [], "a recipe no test runs");
  for (const n of RUN_HERE) ok(names.includes(n), `recipe ${n} is gone from the docs`);
});

/** The first cell of the table row of `file` whose ctxkit column holds `call`. */
function phaseOf(file: string, call: string): string[] {
  return readFileSync(join(REPO, file), "utf8").split("\n")
    .filter((l) => l.startsWith("|") && l.includes(call))
    .map((l) => l.split("|")[1].trim());
}

Deno.test("docs: both skill tables file state --check under phase 6 and the state write under 7", () => {
  // The context-slim skill runs the virgin-surface test in phase 6's escalation gate.
  deepStrictEqual(phaseOf("references/migration.md", '`bash "$G" state --check`'), [
    "6 virgin-surface test",
  ]);
  deepStrictEqual(phaseOf("references/context-guard.md", "`CG state --check`"), ["6"]);
  deepStrictEqual(phaseOf("references/migration.md", '`bash "$G" state --mode <m>'), [
    "7 ratchet state",
  ]);
  deepStrictEqual(phaseOf("references/context-guard.md", '`CG state --mode "<mode>"'), ["7"]);
});

const ORIGINAL = "Use pnpm 9.1 and NEVER push to main.\n";
const DRAFT = "Use pnpm 9.1; NEVER push to main.\n";

/** A clean place: a plugin root, a project (not a git repo), a HOME, a bin dir for prerequisites. */
function place() {
  const base = makeTempDir("ctxkit-recipe-");
  const dirs = {
    base,
    plugin: join(base, "plugin"),
    proj: join(base, "proj"),
    home: join(base, "home"),
    bin: join(base, "bin"),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
  writeFileSync(join(dirs.proj, "CLAUDE.md"), ORIGINAL);
  return dirs;
}

/** Deno 2 on PATH, the prerequisite of the vendored, bundle and wrapper forms. */
function denoOnPath(bin: string): void {
  symlinkSync(Deno.execPath(), join(bin, "deno"));
}

/**
 * The calls of the migration tables, with `cmd` giving each tool's command words; prints
 * `rc:<step>=<code>` after each step and `RUN_DIR=<dir>` at the end.
 */
function probe(cmd: Record<"scan" | "g" | "tg" | "prose", string>): string {
  return `
cd "$PROJ" || exit 99
${cmd.scan} --root . --global >"$HOME/p1.json"; echo "rc:scan=$?"
out=$(${cmd.g} snapshot --project CLAUDE.md); echo "rc:snapshot=$?"
RUN_DIR=$(printf '%s\\n' "$out" | sed -n 's/^RUN_DIR: //p')
printf '%s\\n' ${JSON.stringify(DRAFT.trimEnd())} > CLAUDE.md
CLAUDE_PROJECT_DIR="$PROJ" ${cmd.tg} checkpoint --run-dir "$RUN_DIR" CLAUDE.md; echo "rc:checkpoint=$?"
${cmd.g} verify --run-dir "$RUN_DIR" CLAUDE.md | tail -n 1; echo "rc:verify=\${PIPESTATUS[0]}"
${cmd.g} state --check; echo "rc:check=$?"
${cmd.scan} --root . --global >"$HOME/p6.json"; echo "rc:rescan=$?"
${cmd.g} state --mode "slim" --flags "" --before "$HOME/p1.json" --after "$HOME/p6.json"; echo "rc:state=$?"
${cmd.prose} status --local; echo "rc:prose=$?"
echo "RUN_DIR=$RUN_DIR"
`;
}

const ManifestCommand = z.object({ restore_cmd: z.string() });

/**
 * Run `script` with bash under exactly `env` (PATH included), then the recorded `restore_cmd` of
 * the run it made, from `/` with `PATH=/usr/bin:/bin`; assert what a skill branches on.
 */
function runRecipe(p: ReturnType<typeof place>, script: string, path: string): void {
  const out = new Deno.Command("bash", {
    args: ["-c", script],
    cwd: p.base,
    clearEnv: true,
    env: {
      PATH: path,
      HOME: p.home,
      CLAUDE_PLUGIN_ROOT: p.plugin,
      PROJ: p.proj,
      DENO_DIR: runnersDenoDir(),
    },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  const stdout = lines(dec.decode(out.stdout));
  const why = `${script}\n--- stdout\n${stdout.join("\n")}\n--- stderr\n${dec.decode(out.stderr)}`;
  const rc = Object.fromEntries(
    stdout.flatMap((l) => l.startsWith("rc:") ? [l.slice(3).split("=")] : []),
  );
  deepStrictEqual(rc, {
    scan: "0",
    snapshot: "0",
    checkpoint: "0",
    verify: "0",
    check: "0",
    rescan: "0",
    state: "0",
    prose: "0",
  }, why);
  const statePath = join(p.proj, ".claude", "brewtools", "context-slim", "state.json");
  ok(stdout.includes(`STATE: written ${statePath}`), why);
  ok(stdout.includes("FILES_FAILED: 0"), why);
  ok(stdout.some((l) => l.startsWith("STATE: absent ")), why);
  ok(stdout.some((l) => l.startsWith("No prose override")), why);
  const scan = JSON.parse(readFileSync(join(p.home, "p1.json"), "utf8"));
  deepStrictEqual(scan.scan_issues, [], why);
  const runDir = stdout.find((l) => l.startsWith("RUN_DIR="))!.slice("RUN_DIR=".length);
  ok(runDir !== "", why);
  strictEqual(readFileSync(join(p.proj, "CLAUDE.md"), "utf8"), DRAFT);

  const { restore_cmd } = ManifestCommand.parse(
    JSON.parse(readFileSync(join(runDir, "manifest.json"), "utf8")),
  );
  const restore = new Deno.Command("sh", {
    args: ["-c", restore_cmd],
    cwd: "/",
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: p.home },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const rwhy = `${restore_cmd}\n${dec.decode(restore.stderr)}`;
  strictEqual(restore.code, 0, rwhy);
  // The whole run comes back, the ratchet it wrote included; the label line stays the last.
  deepStrictEqual(lines(dec.decode(restore.stdout)), [
    "RESTORED: CLAUDE.md",
    `STATE: removed ${statePath}`,
    `RESTORE_VERIFIED: 0 mismatches, 0 missing from snapshot (${runDir})`,
  ], rwhy);
  strictEqual(readFileSync(join(p.proj, "CLAUDE.md"), "utf8"), ORIGINAL);
}

const VARS = { scan: "$SCAN", g: "$G", tg: "$TG", prose: "$PROSE" };

Deno.test("recipe clone: the README's set-up in $CTX, no deno on PATH", () => {
  const p = place();
  // This checkout is a clone after `npm ci`; the plugin holds it as ctxkit.
  symlinkSync(REPO, join(p.plugin, "ctxkit"));
  runRecipe(p, recipe("clone").body + probe(VARS), "/usr/bin:/bin");
});

Deno.test("recipe vendored: bin/ and lib/ alone, Deno on PATH", () => {
  const p = place();
  const ctx = join(p.plugin, "ctxkit");
  for (const dir of ["bin", "lib"]) {
    cpSync(join(REPO, dir), join(ctx, dir), {
      recursive: true,
      filter: (src) => !src.endsWith("_test.ts"),
    });
  }
  denoOnPath(p.bin);
  runRecipe(p, recipe("vendored").body + probe(VARS), `${p.bin}:/usr/bin:/bin`);
});

/** Copy the bundles under test into `dir` with `cp` (which keeps their mode), as a user would. */
function copyBundles(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const src = bundleDir();
  for (const tool of TOOLS) {
    const out = new Deno.Command("cp", { args: [join(src, `${tool}.js`), dir] }).outputSync();
    strictEqual(out.code, 0);
  }
}

Deno.test(`recipe bundles: dist/*.js through their shebangs, Deno on PATH (${TARGET})`, () => {
  const p = place();
  copyBundles(join(p.plugin, "ctxkit", "dist"));
  denoOnPath(p.bin);
  runRecipe(p, recipe("bundles").body + probe(VARS), `${p.bin}:/usr/bin:/bin`);
});

/** True when `program` is found on `PATH=/usr/bin:/bin`. */
function installed(program: string): boolean {
  return ["/usr/bin", "/bin"].some((d) => {
    try {
      return statSync(join(d, program)).isFile();
    } catch {
      return false;
    }
  });
}

Deno.test("recipe prose-status-over-http: a consumer reads the status with the token off argv", async () => {
  const missing = ["jq", "curl"].filter((p) => !installed(p));
  if (missing.length > 0) {
    console.log(`SKIP: the recipe's prerequisites are not installed: ${missing.join(", ")}`);
    return;
  }
  const root = join(makeTempDir("ctxkit-recipe-prose-"), "cellm");
  const serve = await spawnServe(["--port", "0"], { CELLM_DIR: root });
  try {
    const out = new Deno.Command("bash", {
      args: ["-c", recipe("prose-status-over-http").body],
      cwd: makeTempDir("ctxkit-recipe-cwd-"),
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin", CELLM_DIR: root },
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    const dec = new TextDecoder();
    strictEqual(out.code, 0, dec.decode(out.stderr));
    const doc = z.object({ schema: z.string(), state: z.string() }).parse(
      JSON.parse(dec.decode(out.stdout)),
    );
    deepStrictEqual(doc, { ...doc, schema: "ctxkit.prose.status/1", state: "absent" });
  } finally {
    await serve.stop("SIGTERM");
  }
});
