/**
 * `context-scan --observe` end to end (`references/context-scan.md#observe`): the real, pinned
 * Claude Code run by the CLI inside its own fresh network namespace (the default), or — for the
 * unsandboxed path — with the whole context-scan run wrapped in a namespace the test makes
 * (`unshare` + `ip link set lo up`). Stand-in `claude` scripts cover the failure paths (deadline,
 * crash, too old, missing, a grandchild that must not survive). Every fixture is built here; real
 * public repositories are read from `CTXKIT_REAL_REPOS` when it names a folder (skipped when
 * unset). Skips, with the reason, where no namespace can be made or Claude Code cannot be
 * installed.
 */
import assert from "node:assert/strict";
import { baseEnv, git, makeTempDir, snapshot, toolArgv, writeTree } from "./_helpers.ts";
import { namespaceAvailable, observedClaude } from "./_claude.ts";
import { scan, type ScanRun } from "./context_scan_fixtures.ts";
import { pluginsOf } from "./_real_repos.ts";
import { CLAUDE_CODE_VERSION } from "../scripts/claude_code.ts";
import { findOnPath, MIN_CLAUDE_VERSION, runsAsRoot } from "../lib/scan/observe/run.ts";
import { utf8Bytes } from "../lib/scan/observe/request.ts";
import { CONTEXT_CATEGORIES } from "../lib/scan/categories.ts";
import type { ScanObserved, ScanObservedSource } from "../lib/scan/schema.ts";

/** Claude Code's memory slug of `root`. */
function claudeSlug(root: string): string {
  return root.replace(/[^A-Za-z0-9]/g, "-");
}

/** A fixture with every kind of source and listing entry (`references/context-scan.md#observed`). */
function richFixture() {
  const base = makeTempDir("ctxkit-observe-");
  const root = `${base}/proj`;
  const config = `${base}/cfg`;
  const plugin = `${base}/plug`;
  const home = `${base}/home`;
  const tmp = `${base}/tmp`;
  Deno.mkdirSync(home);
  Deno.mkdirSync(tmp);
  writeTree(config, {
    "CLAUDE.md": "global text\n",
    "rules/g.md": "global rule\n",
    "skills/gskill/SKILL.md": "---\nname: gskill\ndescription: Global skill\n---\nbody\n",
    "commands/gcmd.md": "---\ndescription: Global command\n---\nx\n",
    "agents/gagent.md": "---\nname: gagent\ndescription: Global agent\n---\nx\n",
    [`projects/${claudeSlug(root)}/memory/MEMORY.md`]: "memory index line\n",
  });
  writeTree(root, {
    "CLAUDE.md": "# Proj\n<!-- hidden block -->\nsee @extra.md\n",
    "extra.md": "imported text\n",
    ".claude/CLAUDE.md": "dot claude\n",
    "CLAUDE.local.md": "local text\n",
    ".claude/rules/r.md": "rule text\n",
    ".claude/rules/scoped.md": "---\npaths: src/**\n---\nscoped\n",
    ".claude/skills/alpha/SKILL.md":
      "---\nname: alpha\ndescription: Alpha does things\n---\nbody\n",
    ".claude/commands/deploy.md": "---\ndescription: Deploy it\n---\nx\n",
    ".claude/commands/ops/release.md": "---\ndescription: Release it\n---\nx\n",
    ".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews code\n---\nx\n",
  });
  writeTree(plugin, {
    ".claude-plugin/plugin.json": '{"name":"plug","version":"1.0.0"}',
    "skills/pskill/SKILL.md": "---\nname: pskill\ndescription: Plugin skill\n---\nbody\n",
    "commands/pcmd.md": "---\ndescription: Plugin command\n---\nx\n",
    "agents/pagent.md": "---\nname: pagent\ndescription: Plugin agent\n---\nx\n",
  });
  return { base, root, config, plugin, home, tmp };
}

/** The user's own sources (not built-in) as `[kind, name, path, bytes]`. */
function own(observed: ScanObserved): [string, string, string | null, number][] {
  return observed.sources
    .filter((s) => !s.built_in)
    .map((s) => [s.kind, s.name, s.path, s.bytes]);
}

function assertAddsUp(observed: ScanObserved): void {
  const sum = CONTEXT_CATEGORIES.reduce((n, c) => n + observed.categories[c.key].bytes, 0);
  assert.equal(observed.total.bytes, sum);
  assert.equal(observed.total.tokens, Math.floor(sum / 4));
  assert.deepEqual(Object.keys(observed.categories), CONTEXT_CATEGORIES.map((c) => c.key));
}

function observedOf(r: ScanRun): ScanObserved {
  assert.equal(r.stderr, "✅ EXIT:0\n", r.stderr);
  assert.equal(r.code, 0);
  assert.ok(r.doc !== undefined, "the document parses with ScanDocumentSchema");
  assert.equal(r.doc.measurement.actual_loading_observed, true);
  assert.ok(r.doc.observed !== undefined);
  return r.doc.observed;
}

Deno.test("--observe: every kind of source with its real path and exact bytes; nothing written to the real config, HOME or project; no temp dir left", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const f = richFixture();
  // A git repository: Claude Code attaches its git status (environment), and must write nothing
  // into .git (GIT_OPTIONAL_LOCKS=0: no index refresh).
  git(f.root, "init", "-q");
  git(f.root, "add", "CLAUDE.md");
  git(f.root, "commit", "-qm", "fixture");
  writeTree(f.root, { "CLAUDE.md": "# Proj\n<!-- hidden block -->\nsee @extra.md\n" }); // dirty, same bytes
  const before = [snapshot(f.config), snapshot(f.root), snapshot(f.plugin), snapshot(f.home)];
  // Deno keeps its compiled code in DENO_DIR (else ~/.cache/deno): the runner's own, not HOME.
  const denoDir = Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME")}/.cache/deno`;
  const r = scan(
    ["--root", f.root, "--observe", "--claude", claude, "--plugin-dir", f.plugin],
    { env: { HOME: f.home, CLAUDE_CONFIG_DIR: f.config, TMPDIR: f.tmp, DENO_DIR: denoDir } },
  );
  const observed = observedOf(r);
  assert.equal(observed.claude_code_version, CLAUDE_CODE_VERSION);
  assert.equal(observed.sandboxed, true);
  assert.deepEqual(observed.layout_checked_on, ["2.1.328", CLAUDE_CODE_VERSION]);
  assert.deepEqual(observed.warnings, []);
  assertAddsUp(observed);
  const b = (s: string) => utf8Bytes(s);
  const listing = (line: string) => b(`${line}\n`);
  const { root, config: g, plugin: p } = f;
  assert.deepEqual(own(observed), [
    // Instruction files in Claude Code's order, as it sent them (trailing newline trimmed, the
    // HTML comment line dropped); the path-scoped rule is not sent.
    ["instruction", `${g}/CLAUDE.md`, `${g}/CLAUDE.md`, b("global text")],
    ["rule", `${g}/rules/g.md`, `${g}/rules/g.md`, b("global rule")],
    ["instruction", `${root}/CLAUDE.md`, `${root}/CLAUDE.md`, b("# Proj\nsee @extra.md")],
    ["import", `${root}/extra.md`, `${root}/extra.md`, b("imported text")],
    ["instruction", `${root}/.claude/CLAUDE.md`, `${root}/.claude/CLAUDE.md`, b("dot claude")],
    ["rule", `${root}/.claude/rules/r.md`, `${root}/.claude/rules/r.md`, b("rule text")],
    ["instruction", `${root}/CLAUDE.local.md`, `${root}/CLAUDE.local.md`, b("local text")],
    [
      "memory-index",
      `${g}/projects/${claudeSlug(root)}/memory/MEMORY.md`,
      `${g}/projects/${claudeSlug(root)}/memory/MEMORY.md`,
      b("memory index line"),
    ],
    // Agents, then skills and commands, each entry as its listing line.
    [
      "agent",
      "gagent",
      `${g}/agents/gagent.md`,
      listing("- gagent: Global agent (Tools: All tools)"),
    ],
    [
      "agent",
      "plug:pagent",
      `${p}/agents/pagent.md`,
      listing("- plug:pagent: Plugin agent (Tools: All tools)"),
    ],
    [
      "agent",
      "reviewer",
      `${root}/.claude/agents/reviewer.md`,
      listing("- reviewer: Reviews code (Tools: All tools)"),
    ],
    ["skill", "gskill", `${g}/skills/gskill/SKILL.md`, listing("- gskill: Global skill")],
    [
      "skill",
      "alpha",
      `${root}/.claude/skills/alpha/SKILL.md`,
      listing("- alpha: Alpha does things"),
    ],
    ["command", "deploy", `${root}/.claude/commands/deploy.md`, listing("- deploy: Deploy it")],
    ["command", "gcmd", `${g}/commands/gcmd.md`, listing("- gcmd: Global command")],
    [
      "command",
      "ops:release",
      `${root}/.claude/commands/ops/release.md`,
      listing("- ops:release: Release it"),
    ],
    ["command", "plug:pcmd", `${p}/commands/pcmd.md`, listing("- plug:pcmd: Plugin command")],
    ["skill", "plug:pskill", `${p}/skills/pskill/SKILL.md`, listing("- plug:pskill: Plugin skill")],
  ]);
  const memory = observed.sources.find((s) => s.kind === "memory-index") as ScanObservedSource;
  assert.equal(memory.cut, false);
  assert.equal(memory.file_bytes, b("memory index line\n"));
  assert.equal(memory.origin, "user's auto-memory, persists across conversations");
  // Built-in entries have no path; Claude Code's own skills and agents are there.
  const builtIn = observed.sources.filter((s) => s.built_in);
  assert.ok(builtIn.length > 0 && builtIn.every((s) => s.path === null));
  assert.ok(builtIn.some((s) => s.kind === "agent" && s.name === "general-purpose"));
  // Nothing written where the user's files are; the private copy is gone.
  assert.deepEqual(
    [snapshot(f.config), snapshot(f.root), snapshot(f.plugin), snapshot(f.home)],
    before,
  );
  assert.deepEqual([...Deno.readDirSync(f.tmp)], []);
  // The rest of the document is the plain scan's, byte for byte.
  const plain = scan(["--root", f.root], { env: { HOME: f.home, CLAUDE_CONFIG_DIR: f.config } });
  const { observed: _, measurement, ...rest } = r.doc!;
  const { measurement: plainMeasurement, ...plainRest } = plain.doc!;
  assert.deepEqual(rest, plainRest);
  assert.deepEqual({ ...measurement, actual_loading_observed: false }, plainMeasurement);
});

Deno.test("--observe-hooks: SessionStart output is the hooks group (2.1.328 puts it at the head of the system message); without it no hook runs; a MEMORY.md over 200 lines is cut", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const f = richFixture();
  const marker = `${f.base}/hook-ran`;
  const hookJson =
    '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"JSON-CTX"}}';
  writeTree(f.config, {
    "settings.json": JSON.stringify({
      hooks: {
        SessionStart: [{
          hooks: [
            { type: "command", command: `touch ${marker}; echo HOOK-TEXT` },
            { type: "command", command: `echo '${hookJson}'` },
          ],
        }],
      },
    }),
    [`projects/${claudeSlug(f.root)}/memory/MEMORY.md`]: Array.from(
      { length: 300 },
      (_, i) => `line ${i + 1}\n`,
    ).join(""),
  });
  const env = { HOME: f.home, CLAUDE_CONFIG_DIR: f.config, TMPDIR: f.tmp };
  const quiet = observedOf(scan(["--root", f.root, "--observe", "--claude", claude], { env }));
  assert.equal(quiet.categories.hooks.bytes, 0);
  assert.equal(quiet.sources.filter((s) => s.kind === "hook").length, 0);
  assert.throws(() => Deno.statSync(marker), Deno.errors.NotFound);

  const hooked = observedOf(
    scan(["--root", f.root, "--observe", "--observe-hooks", "--claude", claude], { env }),
  );
  Deno.statSync(marker); // the hook ran
  const hooks = hooked.sources.filter((s) => s.kind === "hook").map((s) => [s.name, s.bytes]);
  const first = "SessionStart:startup hook success: HOOK-TEXT\n\n";
  const second = "SessionStart hook additional context: JSON-CTX\n\n";
  assert.deepEqual(hooks, [
    ["SessionStart:startup hook success", utf8Bytes(first)],
    ["SessionStart hook additional context", utf8Bytes(second)],
  ]);
  assert.equal(hooked.categories.hooks.bytes, utf8Bytes(first + second));
  assert.deepEqual(hooked.warnings, []);
  assertAddsUp(hooked);
  const memory = hooked.sources.find((s) => s.kind === "memory-index") as ScanObservedSource;
  assert.equal(memory.cut, true);
  assert.ok(memory.bytes < (memory.file_bytes ?? 0));
  assert.deepEqual([...Deno.readDirSync(f.tmp)], []);
});

Deno.test("--observe --format table: the /context groups; --budget applies to the observed total", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const f = richFixture();
  const env = { HOME: f.home, CLAUDE_CONFIG_DIR: f.config, TMPDIR: f.tmp, COLUMNS: "100" };
  const r = scan(
    ["--root", f.root, "--observe", "--claude", claude, "--format", "table", "--budget", "100"],
    { env },
  );
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^BUDGET: exceeded observed [0-9]{1,3}(,[0-9]{3})* > 100 tokens \(top: System tools [0-9,]+, System prompt [0-9,]+, Skills [0-9,]+\)\n❌ FAILED EXIT:1\n$/,
  );
  const lines = r.stdout.split("\n");
  const head = lines.indexOf(
    `OBSERVED START-UP CONTEXT (Claude Code ${CLAUDE_CODE_VERSION}, sandboxed; tokens = bytes/4)`,
  );
  assert.ok(head > 0, r.stdout);
  assert.deepEqual(
    lines.slice(head + 1, head + 1 + CONTEXT_CATEGORIES.length).map((l) => l.slice(2, 18).trim()),
    CONTEXT_CATEGORIES.map((c) => c.title),
  );
  assert.match(lines[head + 1 + CONTEXT_CATEGORIES.length], /^ {2}total +[0-9,]+$/);
});

// Stand-ins: a `claude` that is not Claude Code, run by the CLI in its own namespace all the same.

function standIn(dir: string, body: string, version = "2.1.328 (Claude Code)"): string {
  const path = `${dir}/claude`;
  Deno.writeTextFileSync(
    path,
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo '${version}'; exit 0; fi\n${body}\n`,
  );
  Deno.chmodSync(path, 0o755);
  return path;
}

function standInRun(args: string[], tmp: string, extra: Record<string, string> = {}): ScanRun {
  const home = makeTempDir("ctxkit-observe-home-");
  return scan(args, {
    env: { HOME: home, CLAUDE_CONFIG_DIR: `${home}/cfg`, TMPDIR: tmp, ...extra },
  });
}

function assertObserveError(r: ScanRun, line: string, tmp: string): void {
  assert.equal(r.stderr, `${line}\n❌ FAILED EXIT:2\n`);
  assert.equal(r.stdout, "");
  assert.equal(r.code, 2);
  assert.deepEqual([...Deno.readDirSync(tmp)], [], "the private config copy is removed");
}

Deno.test("--observe errors: never posts (the deadline), crash, too old, missing binary, none on PATH — one line, exit 2", async () => {
  if (!(await namespaceAvailable())) return;
  const dir = makeTempDir("ctxkit-standin-");
  const root = makeTempDir("ctxkit-observe-root-");
  const tmp = makeTempDir("ctxkit-observe-tmp-");
  const silent = standIn(makeTempDir("ctxkit-standin-"), "exec sleep 1000");
  assertObserveError(
    standInRun(["--root", root, "--observe", "--claude", silent, "--observe-timeout", "1"], tmp),
    `❌ claude posted nothing within 1 s: ${silent}`,
    tmp,
  );
  const crash = standIn(makeTempDir("ctxkit-standin-"), "echo boom >&2; exit 3");
  assertObserveError(
    standInRun(["--root", root, "--observe", "--claude", crash], tmp),
    "❌ claude exited 3 before posting a request: boom",
    tmp,
  );
  const old = standIn(makeTempDir("ctxkit-standin-"), "exit 0", "2.0.0 (Claude Code)");
  assertObserveError(
    standInRun(["--root", root, "--observe", "--claude", old], tmp),
    `❌ claude 2.0.0 is too old for --observe (needs ${MIN_CLAUDE_VERSION} or newer): ${old}`,
    tmp,
  );
  assertObserveError(
    standInRun(["--root", root, "--observe", "--claude", `${dir}/nothing/claude`], tmp),
    `❌ claude not found: ${dir}/nothing/claude`,
    tmp,
  );
  // No claude on PATH (PATH holds unshare and ip, not claude).
  const bin = makeTempDir("ctxkit-observe-bin-");
  for (const tool of ["env", "unshare", "ip", "sleep", "sh"]) {
    Deno.symlinkSync(findOnPath(tool, Deno.env.get("PATH")) as string, `${bin}/${tool}`);
  }
  assertObserveError(
    standInRun(["--root", root, "--observe"], tmp, { PATH: bin }),
    "❌ claude not found on PATH (install Claude Code or give --claude PATH)",
    tmp,
  );
});

/** The processes whose command line holds `marker`. */
function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^[0-9]+$/.test(e.name)) continue;
    try {
      const cmdline = Deno.readTextFileSync(`/proc/${e.name}/cmdline`);
      if (cmdline.includes(marker)) found.push(`${e.name}: ${cmdline.replaceAll("\0", " ")}`);
    } catch { /* gone meanwhile */ }
  }
  return found;
}

Deno.test("--observe: no child outlives the command — a stand-in's long-sleeping grandchild is gone when context-scan returns", async () => {
  if (!(await namespaceAvailable())) return;
  const marker = `ctxkit-grandchild-${crypto.randomUUID()}`;
  const dir = makeTempDir("ctxkit-standin-");
  const claude = standIn(dir, `sh -c 'sleep 1000; echo ${marker}' &\nexec sleep 1000`);
  const root = makeTempDir("ctxkit-observe-root-");
  const tmp = makeTempDir("ctxkit-observe-tmp-");
  const r = standInRun(
    ["--root", root, "--observe", "--claude", claude, "--observe-timeout", "2"],
    tmp,
  );
  assertObserveError(r, `❌ claude posted nothing within 2 s: ${claude}`, tmp);
  assert.deepEqual(processesWith(marker), []);
  // Nor does the recorder or the observation child (they carry the child mode's argument).
  assert.deepEqual(processesWith(claude), []);
});

/**
 * Run context-scan (and so `claude`) inside a network namespace the test makes, with `PATH`
 * holding no `unshare`: context-scan cannot make its own, so it takes the unsandboxed path — yet
 * nothing can leave the machine.
 */
async function scanInTestNamespace(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const path = Deno.env.get("PATH");
  const unshare = findOnPath("unshare", path) as string;
  const ip = findOnPath("ip", path) as string;
  const bin = makeTempDir("ctxkit-observe-bin-");
  for (const tool of ["sleep", "sh", "touch", "echo"]) {
    const found = findOnPath(tool, path);
    if (found !== undefined) Deno.symlinkSync(found, `${bin}/${tool}`);
  }
  const own = runsAsRoot() ? ["--net"] : ["--user", "--map-root-user", "--net"];
  const out = await new Deno.Command(unshare, {
    args: [
      ...own,
      "--",
      "/bin/sh",
      "-c",
      `${ip} link set lo up && exec "$@"`,
      "sh",
      ...toolArgv("context-scan"),
      ...args,
    ],
    env: { ...baseEnv(), ...env, PATH: bin },
    clearEnv: true,
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("--observe without a namespace: refused when settings could redirect the request, unless --observe-unsandboxed; runs unsandboxed otherwise", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const f = richFixture();
  const env = { HOME: f.home, CLAUDE_CONFIG_DIR: f.config, TMPDIR: f.tmp };
  // No redirecting setting: the real Claude Code runs unsandboxed (inside the test's namespace).
  const plain = await scanInTestNamespace(["--root", f.root, "--observe", "--claude", claude], env);
  assert.equal(plain.stderr, "✅ EXIT:0\n");
  const observed = JSON.parse(plain.stdout).observed as ScanObserved;
  assert.equal(observed.sandboxed, false);
  assert.equal(observed.claude_code_version, CLAUDE_CODE_VERSION);
  assert.ok(observed.sources.some((s) => s.name === "alpha" && s.kind === "skill"));

  const ran = `${f.base}/stand-in-ran`;
  const standin = standIn(
    makeTempDir("ctxkit-standin-"),
    `touch ${ran}; echo ran unsandboxed >&2; exit 3`,
  );
  const refused = (file: string, why: string) =>
    `❌ no network namespace can be made here and ${file} ${why}: refusing to run claude unsandboxed (--observe-unsandboxed to run it anyway)\n❌ FAILED EXIT:2\n`;
  writeTree(f.config, { "settings.json": '{"env":{"ANTHROPIC_BASE_URL":"http://127.0.0.1:9"}}' });
  const viaEnv = await scanInTestNamespace(
    ["--root", f.root, "--observe", "--claude", standin],
    env,
  );
  assert.equal(viaEnv.stderr, refused(`${f.config}/settings.json`, "sets env ANTHROPIC_BASE_URL"));
  assert.equal(viaEnv.code, 2);
  assert.equal(viaEnv.stdout, "");
  writeTree(f.config, { "settings.json": '{"env":{"HTTPS_PROXY":"http://proxy:3128"}}' });
  assert.equal(
    (await scanInTestNamespace(["--root", f.root, "--observe", "--claude", standin], env)).stderr,
    refused(`${f.config}/settings.json`, "sets env HTTPS_PROXY"),
  );
  writeTree(f.config, { "settings.json": "{}" });
  writeTree(f.root, { ".claude/settings.json": '{"apiKeyHelper":"echo key"}' });
  assert.equal(
    (await scanInTestNamespace(["--root", f.root, "--observe", "--claude", standin], env)).stderr,
    refused(`${f.root}/.claude/settings.json`, "sets apiKeyHelper"),
  );
  writeTree(f.root, { ".claude/settings.json": "{not json" });
  assert.equal(
    (await scanInTestNamespace(["--root", f.root, "--observe", "--claude", standin], env)).stderr,
    refused(`${f.root}/.claude/settings.json`, "is not valid JSON"),
  );
  assert.throws(() => Deno.statSync(ran), Deno.errors.NotFound, "claude never ran");
  // --observe-unsandboxed runs it all the same.
  const forced = await scanInTestNamespace(
    ["--root", f.root, "--observe", "--observe-unsandboxed", "--claude", standin],
    env,
  );
  assert.equal(
    forced.stderr,
    "❌ claude exited 3 before posting a request: ran unsandboxed\n❌ FAILED EXIT:2\n",
  );
  Deno.statSync(ran);
  assert.deepEqual([...Deno.readDirSync(f.tmp)], []);
});

Deno.test("--observe on real public plugin/skill repositories (CTXKIT_REAL_REPOS)", async () => {
  const folder = Deno.env.get("CTXKIT_REAL_REPOS");
  if (folder === undefined || folder === "") {
    return console.log(
      "SKIP: CTXKIT_REAL_REPOS is unset (a folder holding at least two fetched public plugin/skill repositories, one per subfolder)",
    );
  }
  const repos = [...Deno.readDirSync(folder)].filter((e) => e.isDirectory).map((e) =>
    `${folder}/${e.name}`
  ).sort();
  assert.ok(
    repos.length >= 2,
    `CTXKIT_REAL_REPOS holds ${repos.length} repositories, not 2 or more`,
  );
  const claude = await observedClaude();
  if (claude === undefined) return;
  for (const repo of repos) {
    const root = makeTempDir("ctxkit-observe-real-");
    const home = makeTempDir("ctxkit-observe-home-");
    const tmp = makeTempDir("ctxkit-observe-tmp-");
    const exists = (path: string) => {
      try {
        Deno.statSync(path);
        return true;
      } catch {
        return false;
      }
    };
    const isPlugin = exists(`${repo}/.claude-plugin`) || exists(`${repo}/skills`);
    // A plugin, marketplace or skills repository (`.claude-plugin/` or a top-level `skills/`) is
    // loaded with --plugin-dir (each plugin its catalog lists) from an empty project; anything else
    // is the project.
    const args = isPlugin
      ? [
        "--root",
        root,
        "--observe",
        "--claude",
        claude,
        ...pluginsOf(repo).flatMap((d) => ["--plugin-dir", d]),
      ]
      : ["--root", repo, "--observe", "--claude", claude];
    const r = scan(args, {
      env: { HOME: home, CLAUDE_CONFIG_DIR: `${home}/.claude`, TMPDIR: tmp },
    });
    const observed = observedOf(r);
    assert.equal(observed.sandboxed, true);
    assert.equal(observed.categories.unattributed.bytes, 0, `${repo}: ${observed.warnings}`);
    assertAddsUp(observed);
    // Every entry listed from the repository names a file inside it.
    const fromRepo = observed.sources.filter((s) =>
      s.path !== null && s.path.startsWith(`${repo}/`)
    );
    assert.ok(fromRepo.length > 0, `${repo}: no source from the repository`);
    for (const s of fromRepo) Deno.statSync(s.path as string);
    assert.deepEqual([...Deno.readDirSync(tmp)], []);
  }
});

Deno.test("--observe interrupted (SIGTERM): one error line, exit 2, the private copy removed, no child left", async () => {
  if (!(await namespaceAvailable())) return;
  const marker = `ctxkit-interrupted-${crypto.randomUUID()}`;
  const claude = standIn(makeTempDir("ctxkit-standin-"), `exec sh -c 'sleep 1000; :' ${marker}`);
  const root = makeTempDir("ctxkit-observe-root-");
  const tmp = makeTempDir("ctxkit-observe-tmp-");
  const home = makeTempDir("ctxkit-observe-home-");
  const [program, ...args] = toolArgv("context-scan");
  const child = new Deno.Command(program, {
    args: [...args, "--root", root, "--observe", "--claude", claude],
    env: { ...baseEnv(), HOME: home, TMPDIR: tmp },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Wait on the condition, not a clock: the stand-in is running (or context-scan ended early).
  let ended = false;
  child.status.then(() => (ended = true));
  while (!ended && processesWith(marker).length === 0) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(ended, false, "context-scan ended before the stand-in ran");
  child.kill("SIGTERM");
  const out = await child.output();
  const dec = new TextDecoder();
  assert.equal(dec.decode(out.stderr), "❌ interrupted: claude was stopped\n❌ FAILED EXIT:2\n");
  assert.equal(dec.decode(out.stdout), "");
  assert.equal(out.code, 2);
  assert.deepEqual([...Deno.readDirSync(tmp)], []);
  assert.deepEqual(processesWith(marker), []);
});
