/**
 * `deno task install-skill <plugin-dir>` (`references/migration.md#installing-ctxkit-in-one-command`):
 * installed into a released-style plugin (a skill that calls `scripts/context-guard.sh` etc. and
 * never checkpoints) and into a newest-style one (it checkpoints every owned write), each skill's
 * phases run end to end through the wrappers — snapshot, a lossy edit, verify (exit 1, files back),
 * rollback, restore — on a `PATH` without `deno` but with npm, and on one with neither; and, where a
 * checkout of the released plugin is provided, its own guard suite passes 51/51.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { type InstallOptions, installSkill, versionedBundle } from "../scripts/install_skill.ts";
import { calledScripts, planInstall, runsCheckpoint } from "../scripts/_install_plan.ts";
import { mergedHooksJson } from "../scripts/_install_prose.ts";
import { WRAPPER_MARK } from "../scripts/_install_wrapper.ts";
import { bundleDir } from "./_bundles.ts";
import { docBlocks, recipe } from "./_docs.ts";
import { git, lines, makeTempDir, REPO, runnersDenoDir, TARGET, writeTree } from "./_helpers.ts";

const ORIGINAL = "# Rules\n\nUse pnpm 9.1 and NEVER push to main; see docs/release.md.\n";
const LOSSY = "# Rules\n\nUse pnpm and push carefully.\n";

/** A released-style SKILL.md: calls the bash scripts, never `checkpoint` (brewtools 6.1.x). */
const RELEASED_SLIM = `---
name: context-slim
---
# Context Slim
bash "\${CLAUDE_PLUGIN_ROOT}/skills/context-slim/scripts/context-scan.sh" --root . --global; rc=$?
bash "\${CLAUDE_PLUGIN_ROOT}/skills/context-slim/scripts/context-guard.sh" snapshot --project <file>...; rc=$?
bash "$G" verify --run-dir <PROJECT_RUN_DIR> <project file>...; rc=$?
bash "$G" rollback --run-dir <PROJECT_RUN_DIR> --run-dir <GLOBAL_RUN_DIR>
`;
const RELEASED_OPTIMIZE = `---
name: text-optimize
---
bash "$CLAUDE_PLUGIN_ROOT/skills/text-optimize/scripts/text-guard.sh" snapshot "<file>"
bash "$CLAUDE_PLUGIN_ROOT/skills/text-optimize/scripts/text-guard.sh" verify --run-dir "$RUN_DIR" "<file>"
`;
/** A newest-style SKILL.md: the optimizer checkpoints every owned write. */
const NEWEST_SLIM = RELEASED_SLIM + `
CLAUDE_PROJECT_DIR="<LAYER_ROOT>" bash "\${CLAUDE_PLUGIN_ROOT}/skills/text-optimize/scripts/text-guard.sh" checkpoint --run-dir "<LAYER_RUN_DIR>" "<file>"
`;
/** Every (skill, tool) a layout installed with `--prose` gets. */
const INSTALLED = [
  ["context-slim", "context-scan"],
  ["context-slim", "context-guard"],
  ["text-optimize", "text-guard"],
  ["prose", "prose"],
] as const;
const BASH_STUB = "#!/usr/bin/env bash\necho 'the original bash script'\nexit 0\n";

/** A plugin folder laid out as the released (or newest) brewtools is, with a user's hooks.json. */
function pluginLayout(newest: boolean): string {
  const plugin = join(makeTempDir("ctxkit-plugin-"), "brewtools");
  writeTree(plugin, {
    ".claude-plugin/plugin.json": '{"name": "brewtools", "version": "6.1.4"}\n',
    "skills/context-slim/SKILL.md": newest ? NEWEST_SLIM : RELEASED_SLIM,
    "skills/context-slim/scripts/context-scan.sh": BASH_STUB,
    "skills/context-slim/scripts/context-guard.sh": BASH_STUB,
    "skills/text-optimize/SKILL.md": RELEASED_OPTIMIZE,
    "skills/text-optimize/scripts/text-guard.sh": BASH_STUB,
    "skills/text-optimize/scripts/test-optimize.sh": BASH_STUB,
    "hooks/hooks.json": JSON.stringify({
      hooks: {
        UserPromptSubmit: [{
          hooks: [{ type: "command", command: "node", args: ["x.mjs"], timeout: 3 }],
        }],
      },
    }),
  });
  return plugin;
}

/** Install with the bundles under test (a fresh build would take as long as the suite's). */
function install(plugin: string, options: Partial<InstallOptions> = {}): string[] {
  const out: string[] = [];
  installSkill({ plugin, bundles: bundleDir(), print: (l) => out.push(l), ...options });
  return out;
}

let npmCache: string | undefined | null;

/** The npm cache of whoever runs the tests (so `npx deno@<pin>` downloads at most once), or null. */
function sharedNpmCache(): string | null {
  if (npmCache !== undefined) return npmCache;
  const r = new Deno.Command("npm", { args: ["config", "get", "cache"], stdout: "piped" })
    .outputSync();
  npmCache = r.success ? new TextDecoder().decode(r.stdout).trim() : null;
  return npmCache;
}

/** True when npm is installed where a user's `/usr/bin:/bin` finds it (else say why, skip). */
function npxOnSystemPath(): boolean {
  const found = ["/usr/bin/npx", "/bin/npx"].some((p) => existsSync(p));
  if (!found) console.log("SKIP: npx is not in /usr/bin or /bin: the no-deno leg cannot run");
  if (found && ["/usr/bin/deno", "/bin/deno"].some((p) => existsSync(p))) {
    console.log("SKIP: deno is installed in /usr/bin or /bin: no PATH without deno to test");
    return false;
  }
  return found && sharedNpmCache() !== null;
}

/** Run `script` with bash in `cwd` under exactly `env`. */
function bash(script: string, cwd: string, env: Record<string, string>) {
  const out = new Deno.Command("bash", {
    args: ["-c", script],
    cwd,
    clearEnv: true,
    env,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A user's project (a git repo, CLAUDE.md committed) and a home. */
function userProject(): { proj: string; home: string } {
  const base = makeTempDir("ctxkit-user-");
  const proj = join(base, "proj");
  writeTree(proj, { "CLAUDE.md": ORIGINAL, "AGENTS.md": ORIGINAL });
  git(proj, "init", "-q");
  git(proj, "add", "-A");
  git(proj, "commit", "-qm", "init");
  const home = join(base, "home");
  mkdirSync(home);
  return { proj, home };
}

/** The environment of a user's shell without deno: `/usr/bin:/bin` (npm there), temp HOME. */
function npmOnlyEnv(plugin: string, home: string, proj: string): Record<string, string> {
  return {
    PATH: "/usr/bin:/bin",
    HOME: home,
    CLAUDE_PLUGIN_ROOT: plugin,
    PROJ: proj,
    npm_config_cache: sharedNpmCache()!,
    GIT_CONFIG_NOSYSTEM: "1",
  };
}

/** `rc:<step>=<code>` lines of a phase script. */
function codes(stdout: string): Record<string, string> {
  return Object.fromEntries(
    lines(stdout).flatMap((l) => l.startsWith("rc:") ? [l.slice(3).split("=")] : []),
  );
}

const RUN_DIR = `RD=$(printf '%s\\n' "$out" | sed -n 's/^RUN_DIR: //p')`;

Deno.test("install-skill: the plan follows the plugin's files (released: no checkpoint; newest: checkpoint)", () => {
  deepStrictEqual(calledScripts(RELEASED_SLIM, "context-slim"), [
    ["context-slim", "context-scan"],
    ["context-slim", "context-guard"],
  ]);
  ok(!runsCheckpoint(RELEASED_SLIM));
  ok(runsCheckpoint(NEWEST_SLIM));
  const skills = new Map([
    ["context-slim", ["context-scan.sh", "context-guard.sh"]],
    ["text-optimize", ["text-guard.sh", "test-optimize.sh"]],
    ["other", ["run.sh"]],
  ]);
  const markdown = (slim: string) => [
    { path: "skills/context-slim/SKILL.md", text: slim },
    { path: "skills/text-optimize/SKILL.md", text: RELEASED_OPTIMIZE },
  ];
  deepStrictEqual(planInstall({ skills, markdown: markdown(RELEASED_SLIM) }), {
    skills: [
      { name: "context-slim", tools: ["context-scan", "context-guard"], checkpoints: false },
      { name: "text-optimize", tools: ["text-guard"], checkpoints: false },
    ],
  });
  deepStrictEqual(planInstall({ skills, markdown: markdown(NEWEST_SLIM) }, { prose: true }), {
    skills: [
      { name: "context-slim", tools: ["context-scan", "context-guard"], checkpoints: true },
      { name: "prose", tools: ["prose"], checkpoints: false },
      { name: "text-optimize", tools: ["text-guard"], checkpoints: false },
    ],
    proseSkill: "prose",
  });
});

Deno.test("install-skill: bundles 0755 with the version, wrappers in place of the bash scripts, prose's command and hooks", () => {
  const plugin = pluginLayout(false);
  const out = install(plugin, { prose: true });
  ok(
    out.includes("SKILL: context-slim (never checkpoints; guard runs: snapshot-trust)"),
    out.join("\n"),
  );
  ok(
    out.includes(
      "WROTE: skills/context-slim/scripts/context-guard.sh (wrapper, replacing the bash script)",
    ),
  );
  ok(out.at(-1)!.startsWith("USERS NEED: sh, and one of: Deno 2 on PATH, Node.js with npm"));
  const version = JSON.parse(readFileSync(join(REPO, "deno.json"), "utf8")).version;
  for (const [skill, tool] of INSTALLED) {
    const dir = join(plugin, "skills", skill, "scripts");
    strictEqual(statSync(join(dir, `${tool}.js`)).mode & 0o777, 0o755);
    strictEqual(statSync(join(dir, `${tool}.sh`)).mode & 0o777, 0o755);
    const bundle = readFileSync(join(dir, `${tool}.js`), "utf8");
    strictEqual(
      bundle.split("\n")[1],
      `// ctxkit ${version} ${tool} (installed by deno task install-skill)`,
    );
    const wrapper = readFileSync(join(dir, `${tool}.sh`), "utf8");
    strictEqual(wrapper.split("\n")[1], WRAPPER_MARK);
    strictEqual(
      wrapper.includes("CTXKIT_GUARD_TRUST=snapshot"),
      tool === "context-guard" || tool === "text-guard",
      tool,
    );
  }
  // The skill's other scripts stay; re-installing changes nothing and says it is the installer's.
  strictEqual(
    readFileSync(join(plugin, "skills/text-optimize/scripts/test-optimize.sh"), "utf8"),
    BASH_STUB,
  );
  const again = install(plugin, { prose: true });
  ok(
    again.includes("WROTE: skills/context-slim/scripts/context-guard.sh (wrapper)"),
    again.join("\n"),
  );
  strictEqual(
    versionedBundle(versionedBundle("#!x\nbody\n", "prose", "1"), "prose", "1"),
    "#!x\n// ctxkit 1 prose (installed by deno task install-skill)\nbody\n",
  );

  const command = readFileSync(join(plugin, "commands/prose.md"), "utf8");
  ok(command.includes('bash "${CLAUDE_PLUGIN_ROOT}/skills/prose/scripts/prose.sh" $ARGUMENTS'));
  const hooks = JSON.parse(readFileSync(join(plugin, "hooks/hooks.json"), "utf8"));
  // The user's hook stays first; prose's three come once, each with a timeout and the plugin root.
  strictEqual(hooks.hooks.UserPromptSubmit[0].hooks[0].command, "node");
  strictEqual(hooks.hooks.UserPromptSubmit.length, 2);
  for (const event of ["UserPromptSubmit", "Stop", "SessionEnd"]) {
    const h = hooks.hooks[event].at(-1).hooks[0];
    strictEqual(h.timeout, 30, event);
    ok(
      h.command.startsWith('bash "${CLAUDE_PLUGIN_ROOT}/skills/prose/scripts/prose.sh" '),
      h.command,
    );
    ok(h.command.endsWith(">/dev/null 2>&1 || true"), h.command);
  }
  strictEqual(
    mergedHooksJson(readFileSync(join(plugin, "hooks/hooks.json"), "utf8"), "prose"),
    readFileSync(join(plugin, "hooks/hooks.json"), "utf8"),
  );
});

Deno.test("install-skill: a dry run writes nothing", () => {
  const plugin = pluginLayout(false);
  const before = readFileSync(join(plugin, "skills/context-slim/scripts/context-guard.sh"), "utf8");
  const out = install(plugin, { dryRun: true });
  ok(
    out.includes(
      "WOULD WRITE: skills/context-slim/scripts/context-guard.js (bundle, ctxkit 0.1.0)",
    ),
    out.join("\n"),
  );
  strictEqual(
    readFileSync(join(plugin, "skills/context-slim/scripts/context-guard.sh"), "utf8"),
    before,
  );
  ok(!existsSync(join(plugin, "skills/context-slim/scripts/context-guard.js")));
});

/** The phases of the released skills through the wrappers: no checkpoint anywhere. */
const RELEASED_PHASES = `
S="$CLAUDE_PLUGIN_ROOT/skills/context-slim/scripts"
T="$CLAUDE_PLUGIN_ROOT/skills/text-optimize/scripts"
cd "$PROJ" || exit 99
bash "$S/context-scan.sh" --root . >"$HOME/p1.json"; echo "rc:scan=$?"
out=$(bash "$S/context-guard.sh" snapshot --project CLAUDE.md AGENTS.md); echo "rc:snapshot=$?"
${RUN_DIR}
printf '%s' ${JSON.stringify(LOSSY)} > CLAUDE.md
bash "$S/context-guard.sh" verify --run-dir "$RD" CLAUDE.md AGENTS.md; echo "rc:verify=$?"
cmp -s CLAUDE.md "$RD/orig/CLAUDE.md"; echo "rc:back-after-verify=$?"
printf '%s' ${JSON.stringify(LOSSY)} > AGENTS.md
bash "$S/context-guard.sh" rollback --run-dir "$RD"; echo "rc:rollback=$?"
cmp -s AGENTS.md "$RD/orig/AGENTS.md"; echo "rc:back-after-rollback=$?"
printf 'obliterated\\n' > CLAUDE.md
bash "$S/context-guard.sh" restore last; echo "rc:restore=$?"
cmp -s CLAUDE.md "$RD/orig/CLAUDE.md"; echo "rc:back-after-restore=$?"
find "$RD/displaced" -type f | sort | sed "s|^$RD/||"
out=$(bash "$T/text-guard.sh" snapshot CLAUDE.md); echo "rc:tg-snapshot=$?"
${RUN_DIR}
printf '%s' ${JSON.stringify(LOSSY)} > CLAUDE.md
bash "$T/text-guard.sh" verify --run-dir "$RD" CLAUDE.md; echo "rc:tg-verify=$?"
cmp -s CLAUDE.md "$RD/orig/CLAUDE.md"; echo "rc:tg-back=$?"
`;

/** The phases of the newest skill: every owned write checkpointed; a refusal, then the way back. */
const NEWEST_PHASES = `
S="$CLAUDE_PLUGIN_ROOT/skills/context-slim/scripts"
T="$CLAUDE_PLUGIN_ROOT/skills/text-optimize/scripts"
cd "$PROJ" || exit 99
out=$(bash "$S/context-guard.sh" snapshot --project CLAUDE.md AGENTS.md); echo "rc:snapshot=$?"
${RUN_DIR}
printf '%s' ${JSON.stringify(LOSSY)} > CLAUDE.md
CLAUDE_PROJECT_DIR="$PROJ" bash "$T/text-guard.sh" checkpoint --run-dir "$RD" CLAUDE.md; echo "rc:checkpoint=$?"
bash "$S/context-guard.sh" verify --run-dir "$RD" CLAUDE.md AGENTS.md; echo "rc:verify=$?"
cmp -s CLAUDE.md "$RD/orig/CLAUDE.md"; echo "rc:back-after-verify=$?"
printf '%s' ${JSON.stringify(LOSSY)} > AGENTS.md
CLAUDE_PROJECT_DIR="$PROJ" bash "$T/text-guard.sh" checkpoint --run-dir "$RD" AGENTS.md; echo "rc:checkpoint2=$?"
bash "$S/context-guard.sh" rollback --run-dir "$RD"; echo "rc:rollback=$?"
cmp -s AGENTS.md "$RD/orig/AGENTS.md"; echo "rc:back-after-rollback=$?"
printf 'the user edited this\\n' > CLAUDE.md
bash "$S/context-guard.sh" restore last 2>"$HOME/refused.txt"; echo "rc:restore=$?"
cmp -s CLAUDE.md "$RD/orig/CLAUDE.md"; echo "rc:back-after-restore=$?"
bash "$S/context-guard.sh" restore --run-dir "$RD" --force "$PROJ/CLAUDE.md"; echo "rc:force=$?"
cmp -s CLAUDE.md "$RD/orig/CLAUDE.md"; echo "rc:back-after-force=$?"
find "$RD/displaced" -type f | sort | sed "s|^$RD/||"
`;

function assertReleasedRun(r: ReturnType<typeof bash>) {
  const why = `${r.stdout}\n--- stderr\n${r.stderr}`;
  deepStrictEqual(codes(r.stdout), {
    scan: "0",
    snapshot: "0",
    verify: "1",
    "back-after-verify": "0",
    rollback: "0",
    "back-after-rollback": "0",
    restore: "0",
    "back-after-restore": "0",
    "tg-snapshot": "0",
    "tg-verify": "1",
    "tg-back": "0",
  }, why);
  // What each way back replaced is kept, in order.
  deepStrictEqual(lines(r.stdout).filter((l) => l.startsWith("displaced/")), [
    "displaced/1/CLAUDE.md",
    "displaced/2/AGENTS.md",
    "displaced/3/CLAUDE.md",
  ], why);
  ok(lines(r.stdout).includes("ACTION: restored"), why);
}

function assertNewestRun(r: ReturnType<typeof bash>, home: string) {
  const why = `${r.stdout}\n--- stderr\n${r.stderr}`;
  deepStrictEqual(codes(r.stdout), {
    snapshot: "0",
    checkpoint: "0",
    verify: "1",
    "back-after-verify": "0",
    checkpoint2: "0",
    rollback: "0",
    "back-after-rollback": "0",
    restore: "1",
    "back-after-restore": "1",
    force: "0",
    "back-after-force": "0",
  }, why);
  deepStrictEqual(lines(r.stdout).filter((l) => l.startsWith("displaced/")), [
    "displaced/1/CLAUDE.md",
  ], why);
  const refused = readFileSync(join(home, "refused.txt"), "utf8");
  ok(
    refused.includes("RESTORE_REFUSED: CLAUDE.md (current bytes lack matching draft ownership)"),
    refused,
  );
  ok(refused.includes(" restore --run-dir "), refused);
}

Deno.test(`install-skill: the released layout's phases through the wrappers, deno absent, npm present (${TARGET})`, () => {
  if (!npxOnSystemPath()) return;
  const plugin = pluginLayout(false);
  install(plugin);
  const { proj, home } = userProject();
  assertReleasedRun(bash(RELEASED_PHASES, proj, npmOnlyEnv(plugin, home, proj)));
});

Deno.test(`install-skill: the newest layout's phases through the wrappers, deno absent, npm present (${TARGET})`, () => {
  if (!npxOnSystemPath()) return;
  const plugin = pluginLayout(true);
  const out = install(plugin);
  ok(out.includes("SKILL: context-slim (checkpoints its writes; guard runs: draft ownership)"));
  ok(
    !readFileSync(join(plugin, "skills/context-slim/scripts/context-guard.sh"), "utf8").includes(
      "CTXKIT_GUARD_TRUST",
    ),
  );
  const { proj, home } = userProject();
  assertNewestRun(bash(NEWEST_PHASES, proj, npmOnlyEnv(plugin, home, proj)), home);
});

Deno.test("install-skill: with neither deno nor npm each wrapper says what to install, exit 127", () => {
  const plugin = pluginLayout(false);
  install(plugin, { prose: true });
  const empty = makeTempDir("ctxkit-empty-path-");
  for (const [skill, tool] of INSTALLED) {
    const r = new Deno.Command("/bin/sh", {
      args: [join(plugin, "skills", skill, "scripts", `${tool}.sh`), "list"],
      clearEnv: true,
      env: { PATH: empty, HOME: empty },
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    const dec = new TextDecoder();
    strictEqual(r.code, 127, tool);
    strictEqual(dec.decode(r.stdout), "", tool);
    deepStrictEqual(lines(dec.decode(r.stderr)), [
      `❌ ${tool} needs a runtime: install Deno 2 (https://deno.com) or Node.js with npm (npx then runs deno@2.9.6)`,
      "❌ FAILED EXIT:127",
    ]);
  }
});

Deno.test("install-skill: a compiled binary beside the wrapper runs first", () => {
  const plugin = pluginLayout(false);
  install(plugin);
  const dir = join(plugin, "skills/context-slim/scripts");
  writeFileSync(
    join(dir, "context-guard"),
    '#!/bin/sh\necho "binary: $* (as $CTXKIT_INVOKED_AS)"\n',
  );
  chmodSync(join(dir, "context-guard"), 0o755);
  const r = bash(`bash "${dir}/context-guard.sh" list --json`, dir, { PATH: "/usr/bin:/bin" });
  // The wrapper names itself to the tool: its --help and --version say how the skill runs it.
  strictEqual(r.stdout, `binary: list --json (as ${dir}/context-guard.sh)\n`, r.stderr);
});

Deno.test("install-skill: the recipe, as printed, then the skill's phases with deno on PATH", () => {
  const base = makeTempDir("ctxkit-recipe-install-");
  const plugin = join(base, "plugin");
  cpSync(pluginLayout(false), plugin, { recursive: true });
  const bin = join(base, "bin");
  mkdirSync(bin);
  Deno.symlinkSync(Deno.execPath(), join(bin, "deno"));
  const r = bash(recipe("install-skill").body, base, {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: join(base, "home"),
    CTX: REPO,
    PLUGIN: plugin,
    DENO_DIR: runnersDenoDir(),
    npm_config_cache: sharedNpmCache() ?? join(base, "npm"),
  });
  strictEqual(r.code, 0, r.stdout + r.stderr);
  ok(
    r.stdout.includes("SKILL: context-slim (never checkpoints; guard runs: snapshot-trust)"),
    r.stdout,
  );
  const { proj, home } = userProject();
  const env = { PATH: `${bin}:/usr/bin:/bin`, HOME: home, CLAUDE_PLUGIN_ROOT: plugin, PROJ: proj };
  assertReleasedRun(bash(RELEASED_PHASES, proj, env));
  ok(readdirSync(join(plugin, "skills/context-slim/scripts")).includes("context-guard.js"));
});

const REAL = Deno.env.get("CTXKIT_REAL_REPOS");
const BREWCODE = REAL === undefined ? undefined : join(REAL, "kochetkov-ma+claude-brewcode");

Deno.test("install-skill: the released brewtools plugin's own guard suite passes 51/51 against the installed ctxkit", () => {
  if (BREWCODE === undefined || !existsSync(join(BREWCODE, ".git"))) {
    console.log(
      "SKIP: set CTXKIT_REAL_REPOS to a folder holding a checkout of kochetkov-ma/claude-brewcode " +
        "(kochetkov-ma+claude-brewcode) to run the released plugin's tests/suite-guard.mjs",
    );
    return;
  }
  if (!["/usr/bin/node", "/bin/node"].some((p) => existsSync(p))) {
    console.log("SKIP: node is not installed: suite-guard.mjs is a node script");
    return;
  }
  for (const tag of ["v6.1.0", "v6.1.4"]) {
    const base = makeTempDir("ctxkit-brewcode-");
    const archive = new Deno.Command("sh", {
      args: [
        "-c",
        `git -C "$1" archive "$2" brewtools | tar -x -C "$3"`,
        "sh",
        BREWCODE,
        tag,
        base,
      ],
    }).outputSync();
    strictEqual(archive.code, 0, new TextDecoder().decode(archive.stderr));
    const plugin = join(base, "brewtools");
    const out = install(plugin);
    ok(
      out.includes("SKILL: text-optimize (never checkpoints; guard runs: snapshot-trust)"),
      out.join("\n"),
    );
    const bin = join(base, "bin");
    mkdirSync(bin);
    Deno.symlinkSync(Deno.execPath(), join(bin, "deno"));
    const r = bash("node tests/suite-guard.mjs", join(plugin, "skills/text-optimize"), {
      PATH: `${bin}:/usr/bin:/bin`,
      HOME: join(base, "home"),
      GIT_CONFIG_NOSYSTEM: "1",
    });
    strictEqual(r.code, 0, r.stdout + r.stderr);
    strictEqual(lines(r.stdout).at(-1), "  51 passed, 0 failed", r.stdout);
  }
});

Deno.test("the library: prose.md's consumer block runs as printed with the documented import map", () => {
  const block = docBlocks("references/prose.md").find((b) =>
    b.info === "ts" && b.body.includes('from "ctxkit/mod.ts"')
  );
  ok(block !== undefined, "prose.md's consumer block");
  const base = makeTempDir("ctxkit-library-");
  for (const part of ["lib", "mod.ts"]) {
    cpSync(join(REPO, part), join(base, "ctxkit", part), {
      recursive: true,
      filter: (src) => !src.endsWith("_test.ts"),
    });
  }
  const map = readFileSync(join(REPO, "references/migration.md"), "utf8")
    .match(/\{ "imports": \{ "ctxkit\/": "\.\/ctxkit\/" \} \}/)?.[0];
  ok(map !== undefined, "migration.md's import map");
  writeFileSync(join(base, "deno.json"), map + "\n");
  writeFileSync(join(base, "main.ts"), block!.body + 'console.log("level", level);\n');
  const cellm = join(base, "cellm");
  const r = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-write", "--allow-env", "main.ts"],
    cwd: base,
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: base, CELLM_DIR: cellm, DENO_NO_UPDATE_CHECK: "1" },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const dec = new TextDecoder();
  strictEqual(r.code, 0, dec.decode(r.stderr));
  strictEqual(dec.decode(r.stdout), "level off\n");
});

Deno.test("prose's git hooks: after the plugin moved, a commit says the block flag may be on (never silent)", () => {
  const plugin = pluginLayout(false);
  install(plugin, { prose: true });
  const base = makeTempDir("ctxkit-hooks-");
  const repo = join(base, "repo");
  mkdirSync(repo);
  git(repo, "init", "-q");
  const bin = join(base, "bin");
  mkdirSync(bin);
  Deno.symlinkSync(Deno.execPath(), join(bin, "deno"));
  const env = {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: join(base, "home"),
    CELLM_DIR: join(base, "cellm"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.invalid",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.invalid",
  };
  const wrapper = join(plugin, "skills/prose/scripts/prose.sh");
  const installed = bash(`bash "${wrapper}" install-hooks`, repo, env);
  strictEqual(installed.code, 0, installed.stderr);
  const on = bash(`bash "${wrapper}" on block`, repo, env);
  strictEqual(on.code, 0, on.stderr);
  // The plugin moves (an update installs it under a new version folder): the hook's program is gone.
  Deno.renameSync(plugin, `${plugin}-moved`);
  const commit = bash("git commit -q --allow-empty -m x", repo, env);
  strictEqual(commit.code, 0, commit.stderr);
  ok(
    commit.stderr.includes("❌ ctxkit prose: block-end did not run ("),
    `the hook said nothing: ${commit.stderr}`,
  );
  ok(commit.stderr.includes("a block flag may still be on"), commit.stderr);
});
