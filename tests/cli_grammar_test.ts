/**
 * The one option grammar of the four tools (`references/cli.md`), as a user meets it: each option
 * form and each error case, for each tool, run from source (the source suite) and from the bundles
 * (the bundle suite; under `CTXKIT_TEST_TARGET=binary`, from the binaries) in child processes.
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import {
  binaryPath,
  git,
  lines,
  makeTempDir,
  REPO,
  runCommand,
  type RunOptions,
  type RunResult,
  TARGET,
  type Tool,
} from "./_helpers.ts";
import { bundleDir } from "./_bundles.ts";
import { checkoutCommit } from "../lib/_cli/version.ts";
import { standInBundle } from "../scripts/compile.ts";

type Form = "source" | "bundle" | "binary";

/**
 * The form this run checks: the sources in the source suite, the bundles in the bundle suite
 * (`deno task test:bundle`, which `.ci/run` runs too), the binaries under the binary target — each
 * form once, never a second time in another suite.
 */
const FORMS: readonly Form[] = TARGET === "binary"
  ? ["binary"]
  : TARGET === "bundle"
  ? ["bundle"]
  : ["source"];

/** The program path of `tool` in `form` (a binary: its file). */
function programPath(form: Form, tool: Tool): string {
  if (form === "source") return join(REPO, "bin", `${tool}.ts`);
  if (form === "bundle") return join(bundleDir(), `${tool}.js`);
  return binaryPath(tool);
}

/**
 * The form `tool` in `form` says it runs as, and the name it gives itself from a directory outside
 * the checkout: a stand-in for a binary (`deno task compile:stand-in`) runs its bundle.
 */
function shown(form: Form, tool: Tool): { form: Form; program: string } {
  if (form !== "binary") return { form, program: programPath(form, tool) };
  const bundle = standInBundle(binaryPath(tool));
  return bundle === undefined
    ? { form, program: basename(binaryPath(tool)) }
    : { form: "bundle", program: bundle };
}

function argvOf(form: Form, tool: Tool): string[] {
  const program = programPath(form, tool);
  if (form === "binary") return [program];
  const config = form === "source" ? ["--config", join(REPO, "deno.json")] : ["--no-config"];
  return [Deno.execPath(), "run", "-A", ...config, program];
}

/** Run `tool` in `form` with `args` in a clean environment (a temp HOME, no CLAUDE_* variables). */
function run(form: Form, tool: Tool, args: string[], options: RunOptions = {}): RunResult {
  return runCommand([...argvOf(form, tool), ...args], options);
}

/** A usage error: exactly `line` on stderr before the exit line, nothing on stdout, exit 2. */
function assertUsageError(r: RunResult, ...expected: string[]): void {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.deepEqual(lines(r.stderr), [...expected, "❌ FAILED EXIT:2"]);
}

/** Success with `stdout` exactly (when given) and the exit line alone on stderr. */
function assertOk(r: RunResult, stdout?: string): void {
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "✅ EXIT:0\n");
  if (stdout !== undefined) assert.equal(r.stdout, stdout);
}

/** A project with a committed CLAUDE.md, its HOME beside it. */
function project(): { proj: string; home: string; env: Record<string, string> } {
  const base = makeTempDir("ctxkit-grammar-proj-");
  const proj = join(base, "proj");
  const home = join(base, "home");
  mkdirSync(proj);
  mkdirSync(home);
  writeFileSync(join(proj, "CLAUDE.md"), "# Project\n\nNEVER delete FOO_BAR.\n");
  git(proj, "init", "-q");
  git(proj, "add", "CLAUDE.md");
  git(proj, "commit", "-qm", "init");
  return { proj, home, env: { HOME: home, CLAUDE_PROJECT_DIR: proj } };
}

const VERSION_LINE = /^(\S+) 0\.1\.0 \(commit ([0-9a-f]{40}(?:-dirty)?|unknown); (\w+) (.+)\)$/;

for (const form of FORMS) {
  // --version and --help name the tool, its commit and the form it runs as ------------------------

  Deno.test(`[${form}] every tool: --version prints the version, the commit and the form; exit 0`, () => {
    for (const tool of ["context-scan", "context-guard", "text-guard", "prose"] as const) {
      const r = run(form, tool, ["--version"]);
      assertOk(r);
      const m = VERSION_LINE.exec(r.stdout.trimEnd());
      assert.ok(m, r.stdout);
      assert.equal(m[1], tool);
      assert.equal(m[3], shown(form, tool).form);
      assert.equal(m[4], shown(form, tool).program);
      if (form !== "binary") {
        // Sources read the checkout; the bundles are built from it by the same run.
        assert.equal(m[2], checkoutCommit(join(REPO, "bin", `${tool}.ts`)) ?? "unknown");
      }
      assert.equal(lines(r.stdout).length, 1);
    }
  });

  Deno.test(`[${form}] every tool: --help names the program as it is run (relative below the cwd, a wrapper's name)`, () => {
    for (const tool of ["context-scan", "context-guard", "text-guard", "prose"] as const) {
      const { program } = shown(form, tool);
      const binary = !program.startsWith("/");
      const below = binary ? program : `${basename(dirname(program))}/${basename(program)}`;
      const cwd = binary ? undefined : dirname(dirname(program));
      const help = run(form, tool, ["--help"], { cwd });
      assertOk(help);
      assert.ok(help.stdout.includes(` ${below} `), `${tool}: ${help.stdout}`);
      const wrapped = run(form, tool, ["--help"], {
        env: { CTXKIT_INVOKED_AS: `skills/x/scripts/${tool}.sh` },
      });
      assertOk(wrapped);
      assert.ok(wrapped.stdout.includes(` skills/x/scripts/${tool}.sh `), wrapped.stdout);
      const version = run(form, tool, ["--version"], { env: { CTXKIT_INVOKED_AS: "w" } });
      assert.match(version.stdout, /; wrapper w\)\n$/);
    }
  });

  // context-scan -------------------------------------------------------------------------------

  Deno.test(`[${form}] context-scan: --opt=value is --opt value; a positional is called one; near misses`, () => {
    const { proj, home } = project();
    const spaced = run(form, "context-scan", ["--root", proj, "--tier", "always-on"], {
      env: { HOME: home },
    });
    assertOk(spaced);
    const joined = run(form, "context-scan", [`--root=${proj}`, "--tier=always-on"], {
      env: { HOME: home },
    });
    assertOk(joined, spaced.stdout);
    assertUsageError(run(form, "context-scan", [proj]), `❌ unexpected argument: ${proj}`);
    assertUsageError(run(form, "context-scan", ["--", "x"]), "❌ unexpected argument: x");
    assertUsageError(
      run(form, "context-scan", ["--roo", proj]),
      "❌ unknown option: --roo; did you mean --root?",
    );
    assertUsageError(
      run(form, "context-scan", ["--lodaed"]),
      "❌ unknown option: --lodaed; did you mean --loaded?",
    );
    assertUsageError(run(form, "context-scan", ["--bogus"]), "❌ unknown option: --bogus");
    assertUsageError(run(form, "context-scan", ["--loaded=1"]), "❌ --loaded takes no value");
    assertUsageError(run(form, "context-scan", ["--tier"]), "❌ --tier needs a value");
    assertUsageError(run(form, "context-scan", ["--root="]), "❌ --root needs a value");
    assertUsageError(run(form, "context-scan", ["--tier=x"]), "❌ unknown tier: x");
  });

  // context-guard ------------------------------------------------------------------------------

  Deno.test(`[${form}] context-guard: no arguments → the help on stderr, exit 2; a near-miss command`, () => {
    const none = run(form, "context-guard", []);
    assert.equal(none.code, 2);
    assert.equal(none.stdout, "");
    assert.match(none.stderr, /^context-guard - snapshot \/ verify/);
    assert.ok(none.stderr.endsWith("(nothing written)\n❌ FAILED EXIT:2\n"), none.stderr);
    assertUsageError(
      run(form, "context-guard", ["snapshoot", "CLAUDE.md"]),
      "❌ unknown command: snapshoot; did you mean snapshot?",
    );
    assertUsageError(run(form, "context-guard", ["frobnicate"]), "❌ unknown command: frobnicate");
  });

  Deno.test(`[${form}] context-guard: --run-dir=D and --tokens ext both forms; options a subcommand lacks`, () => {
    const p = project();
    const runDir = join(p.home, "rd");
    const snap = run(form, "context-guard", ["snapshot", `--run-dir=${runDir}`, "CLAUDE.md"], {
      cwd: p.proj,
      env: p.env,
    });
    assert.equal(snap.code, 0, snap.stderr);
    assert.ok(snap.stdout.includes(`RUN_DIR: ${runDir}\n`), snap.stdout);
    for (const tokens of [["--tokens", "ext"], ["--tokens=ext"]]) {
      const verify = run(
        form,
        "context-guard",
        ["verify", ...tokens, "--run-dir", runDir, "CLAUDE.md"],
        { cwd: p.proj, env: p.env },
      );
      assert.equal(verify.code, 0, verify.stderr);
      assert.ok(verify.stdout.includes("GATE: PASS"), verify.stdout);
    }
    const cases: [string[], string][] = [
      [["rollback", "--global"], "❌ --global does not apply to rollback"],
      [
        ["snapshot", "--alow-dirty", "CLAUDE.md"],
        "❌ unknown option: --alow-dirty; did you mean --allow-dirty?",
      ],
      [["snapshot", "--allow-dirty=yes", "CLAUDE.md"], "❌ --allow-dirty takes no value"],
      [["state", "--check", "extra"], "❌ unexpected argument: extra"],
      [["list", "extra"], "❌ unexpected argument: extra"],
      [
        ["verify", "--tokens", "full", "CLAUDE.md"],
        "❌ unknown token alphabet: full (want base or ext)",
      ],
    ];
    for (const [args, line] of cases) {
      assertUsageError(run(form, "context-guard", args, { cwd: p.proj, env: p.env }), line);
    }
  });

  Deno.test(`[${form}] context-guard: state --before missing.json names the missing file, not a missing option`, () => {
    const p = project();
    writeFileSync(join(p.proj, "b.json"), "{}");
    const state = (...args: string[]) =>
      run(form, "context-guard", ["state", "--mode", "slim", ...args], { cwd: p.proj, env: p.env });
    assertUsageError(
      state("--before", "missing.json", "--after", "b.json"),
      "❌ cannot read --before missing.json: No such file or directory",
    );
    assertUsageError(
      state("--before=b.json", "--after=.claude"),
      "❌ cannot read --after .claude: No such file or directory",
    );
    mkdirSync(join(p.proj, "dir"));
    assertUsageError(
      state("--before", "dir", "--after", "b.json"),
      "❌ cannot read --before dir: not a regular file",
    );
    assertUsageError(state("--after", "b.json"), "❌ state needs --before <context-scan JSON>");
  });

  Deno.test(`[${form}] context-guard: restore <ts> that names no run says so while list shows the runs`, () => {
    const p = project();
    const snap = run(form, "context-guard", ["snapshot", "CLAUDE.md"], { cwd: p.proj, env: p.env });
    assert.equal(snap.code, 0, snap.stderr);
    const list = run(form, "context-guard", ["list"], { cwd: p.proj, env: p.env });
    assert.equal(list.code, 0);
    assert.equal(lines(list.stdout).length, 3, list.stdout);
    const backups = join(p.home, ".claude", "backups");
    assertUsageError(
      run(form, "context-guard", ["restore", "2099"], { cwd: p.proj, env: p.env }),
      `❌ no run matches 2099 under ${backups}`,
    );
    assertUsageError(
      run(form, "context-guard", ["restore", "--project", "2099"], { cwd: p.proj, env: p.env }),
      `❌ no run matches 2099 under ${backups}`,
    );
    assertUsageError(
      run(form, "context-guard", ["verify", "2099", "CLAUDE.md"], { cwd: p.proj, env: p.env }),
      `❌ no run matches 2099 under ${backups}`,
    );
  });

  Deno.test(`[${form}] context-guard: --help says the project root is the git top level; --help after a subcommand`, () => {
    const help = run(form, "context-guard", ["--help"]);
    assertOk(help);
    assert.ok(
      help.stdout.includes(
        "project = $CLAUDE_PROJECT_DIR, else the git work tree's top level, else",
      ),
      help.stdout,
    );
    assertOk(run(form, "context-guard", ["snapshot", "--help"]), help.stdout);
    assertOk(run(form, "context-guard", ["state", "--version"]));
  });

  // text-guard ---------------------------------------------------------------------------------

  Deno.test(`[${form}] text-guard: usage on stderr, --opt=value, positionals, near misses`, () => {
    const none = run(form, "text-guard", []);
    assert.equal(none.code, 2);
    assert.equal(none.stdout, "");
    assert.match(none.stderr, /^text-guard - preservation guard/);
    const cwd = makeTempDir("ctxkit-grammar-tg-");
    const cases: [string[], string][] = [
      [["status", "--run-dir=d"], "❌ no snapshot dir: d/orig"],
      [["verify", "--tokens", "ext", "--run-dir", "d", "a"], "❌ no snapshot dir: d/orig"],
      [["status", "--run-dir", "d", "x"], "❌ unexpected argument: x"],
      [["status", "--all"], "❌ unknown option: --all"],
      [["checkpiont", "a"], "❌ unknown command: checkpiont; did you mean checkpoint?"],
      [["snapshot", "--no-restore", "a"], "❌ --no-restore does not apply to snapshot"],
      [["restore", "--run-dri", "d", "a"], "❌ unknown option: --run-dri; did you mean --run-dir?"],
    ];
    for (const [args, line] of cases) {
      assertUsageError(run(form, "text-guard", args, { cwd }), line);
    }
  });

  // prose --------------------------------------------------------------------------------------

  Deno.test(`[${form}] prose: --opt=value, positionals, near misses, serve's usage line names the program`, () => {
    const cellm = makeTempDir("ctxkit-grammar-cellm-");
    const env = { CELLM_DIR: cellm, CTXKIT_NOW_MS: "1700000000000" };
    const spaced = run(form, "prose", ["on", "--level", "full", "--local"], { env });
    const joined = run(form, "prose", ["on", "--level=full", "--local"], { env });
    assert.equal(spaced.code, 0, spaced.stderr);
    assert.equal(joined.code, 0, joined.stderr);
    assert.equal(lines(joined.stdout)[1], lines(spaced.stdout)[1]);
    const usage = (args: string[], ...expected: string[]) =>
      assertUsageError(run(form, "prose", args, { env }), ...expected);
    usage(
      ["status", "--jsn"],
      "PROSE-ERROR: code=usage unknown option: --jsn; did you mean --json?",
    );
    usage(["stauts"], "PROSE-ERROR: code=usage unknown command: stauts; did you mean status?");
    usage(["status", "x"], "PROSE-ERROR: code=usage unexpected argument: x");
    usage(["consume", "--json"], "PROSE-ERROR: code=usage --json does not apply to consume");
    usage(["status", "--json=1"], "PROSE-ERROR: code=usage --json takes no value");
    const { program } = shown(form, "prose");
    usage(
      ["serve", "--bind", "0.0.0.0"],
      "PROSE-ERROR: code=usage unknown option: --bind",
      `usage: ${program} serve [--port N] [--db PATH]`,
    );
  });
}
