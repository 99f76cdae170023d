/**
 * The differential suite of the per-tier model (`references/context-scan.md#tier-rules`): every
 * fixture is scanned with `--global --loaded` (in-process) and driven through the pinned Claude
 * Code by the scripted local model `--observe-tiers` uses (inside a fresh network namespace,
 * tests/_claude.ts) — every skill and command invoked once, every agent spawned once, one path read
 * for each on-access source — and every row's model figure must equal the observed bytes exactly:
 * `loaded_bytes` of per-invocation and per-spawn rows, `on_access_bytes` of on-access rows. No
 * tolerance, and no source may be sent that the model does not expect (nor twice).
 *
 * `CTXKIT_TIERS_ONLY=a,b` runs only the named fixtures; `CTXKIT_TIERS_CLAUDE_VERSION=2.1.332`
 * observes another installed version. Skips, with the reason, where no namespace can be made or
 * Claude Code cannot be installed (fails instead under `CTXKIT_REQUIRE_OBSERVED=1`).
 */
import assert from "node:assert/strict";
import { ensureClaudeCode } from "../scripts/claude_code.ts";
import { makeTempDir, snapshot, writeTree } from "./_helpers.ts";
import { scan } from "./context_scan_fixtures.ts";
import { pooled } from "./_diff.ts";
import { A, type Files, type Fixture, FIXTURES, R, S, type Seen } from "./_tiers_fixtures.ts";
import { pluginsOf, realRepos } from "./_real_repos.ts";
import { namespaceSkipReason, observeFixture, skipObserved } from "./_claude.ts";
import { createLoadingStep } from "../lib/scan/loading.ts";
import { scanRoots } from "../lib/scan/scan.ts";
import { invocationText, readResult } from "../lib/scan/model/invocation.ts";
import { pluginName } from "../lib/scan/model/plugins.ts";
import { observedTierModel, observedTiers, tierPlan } from "../lib/scan/observe/tiers.ts";
import { mainRequest, skillText } from "../lib/scan/observe/turns.ts";
import type { ObservePlan } from "../lib/scan/observe/script.ts";
import type { ScanRow } from "../lib/scan/schema.ts";
import { TIER_RULES } from "../lib/scan/tier_rules.ts";
import { rulesAndFixtures } from "./_rules.ts";
import { userPromptSession } from "./_user_prompts.ts";

interface Built {
  base: string;
  root: string;
  home: string;
  configDir: string;
  pluginDirs: string[];
}

function build(files: Fixture["files"], pluginDirs: readonly string[] = []): Built {
  const base = makeTempDir("ctxkit-tiers-");
  for (const d of ["proj", "cfg", "home"]) Deno.mkdirSync(`${base}/${d}`, { recursive: true });
  writeTree(base, typeof files === "function" ? files(base) : files);
  return {
    base,
    root: `${base}/proj`,
    home: `${base}/home`,
    configDir: `${base}/cfg`,
    pluginDirs: pluginDirs.map((p) => `${base}/${p}`),
  };
}

function scannedRows(built: Built): ScanRow[] {
  return scanRoots({ project: built.root, global: built.configDir }, {
    global: true,
    loaded: true,
  }, createLoadingStep({ home: built.home, pluginDirs: built.pluginDirs })).document.files;
}

async function observe(
  claude: string,
  built: Built,
  plan: ObservePlan,
  hooks = false,
  timeoutMs?: number,
) {
  return (await observeFixture(claude, {
    root: built.root,
    home: built.home,
    configDir: built.configDir,
    pluginDirs: built.pluginDirs,
    plan,
    hooks,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  })).observation;
}

/**
 * A built fixture scanned (`--global --loaded`) and observed through the script `--observe-tiers`
 * runs: the rows, and `observed.tiers`.
 */
async function scannedAndObserved(
  claude: string,
  built: Built,
  hooks = false,
  timeoutMs?: number,
): Promise<Seen> {
  const rows = scannedRows(built);
  const model = observedTierModel({
    root: built.root,
    global: built.configDir,
    pluginDirs: built.pluginDirs,
    home: built.home,
  });
  const planned = tierPlan(model);
  const seen = await observe(claude, built, planned.plan, hooks, timeoutMs);
  return { rows, tiers: observedTiers(planned, model, seen.session!) };
}

/** Every disagreement between the rows' figures and the observation, one line each. */
function disagreements(seen: Seen): string[] {
  const out: string[] = [];
  const row = (tier: ScanRow["tier"], path: string) =>
    seen.rows.find((r) => r.tier === tier && r.path === path);
  for (const i of seen.tiers.invocations) {
    if (i.status !== "observed") out.push(`${i.kind} ${i.name}: ${i.status}`);
    const r = row("per-invocation", i.path);
    if (r?.loaded_bytes !== i.bytes) {
      out.push(`${i.kind} ${i.name}: Claude Code ${i.bytes} bytes, row ${r?.loaded_bytes}`);
    }
  }
  for (const s of seen.tiers.spawns) {
    if (s.status !== "observed") out.push(`agent ${s.name}: ${s.status}`);
    const r = row("per-spawn", s.path);
    if (r?.loaded_bytes !== s.bytes) {
      out.push(`agent ${s.name}: Claude Code ${s.bytes} bytes, row ${r?.loaded_bytes}`);
    }
    for (const p of s.preloaded) {
      if (p.model_bytes !== p.bytes) {
        out.push(
          `agent ${s.name} preloads ${p.name}: Claude Code ${p.bytes}, model ${p.model_bytes}`,
        );
      }
    }
  }
  for (const a of seen.tiers.accesses) {
    const r = row("always-on", a.path);
    const expected = r?.on_access_bytes ?? null;
    const status = (expected ?? 0) > 0 ? "observed" : "not-sent";
    if (a.bytes !== expected || a.status !== status) {
      out.push(`access ${a.path}: Claude Code ${a.bytes} (${a.status}), row ${expected}`);
    }
  }
  out.push(...seen.tiers.warnings);
  out.push(...unobserved(seen));
  return out;
}

/**
 * Rows whose model figure says Claude Code sends something per invocation, per spawn or on access
 * but that the session never observed: each would escape the comparison.
 */
function unobserved(seen: Seen): string[] {
  const compared = new Set([
    ...seen.tiers.invocations.map((i) => `per-invocation ${i.path}`),
    ...seen.tiers.spawns.map((s) => `per-spawn ${s.path}`),
    ...seen.tiers.accesses.map((a) => `always-on ${a.path}`),
  ]);
  const sent = (r: ScanRow) =>
    r.tier === "always-on"
      ? (r.on_access_bytes ?? 0) > 0
      : (r.loaded_bytes ?? 0) > 0 && ["invoked-skill", "invoked-command", "selected-agent"]
        .includes(r.loading);
  // What only the user's /name invokes is observed by its own session (userInvoked).
  const userOnly = (r: ScanRow) => r.limits?.includes("user-invoked-only") === true;
  return seen.rows.filter((r) => sent(r) && !userOnly(r) && !compared.has(`${r.tier} ${r.path}`))
    .map((r) => `${r.path}: row ${r.loaded_bytes || r.on_access_bytes} bytes, never observed`);
}

const COMMAND_MESSAGE = /^<command-message>([^<]*)<\/command-message>/;

/**
 * The rows only the user's `/name` invokes (`user-invoked-only`), each invoked once by a user
 * message of one session: every one whose text Claude Code did not send as the row's
 * `loaded_bytes` says, one line each. `names` gives each row's `/name` (by path).
 */
async function userInvoked(
  claude: string,
  built: Built,
  rows: readonly ScanRow[],
): Promise<{ compared: number; problems: string[] }> {
  // A skill by its folder, a command by its file (none nested here); a plugin's prefixed.
  const names = (r: ScanRow) => {
    const own = r.path.endsWith("/SKILL.md")
      ? r.path.split("/").at(-2)!
      : r.path.slice(r.path.lastIndexOf("/") + 1, -".md".length);
    const plugin = built.pluginDirs.find((d) => r.path.startsWith(`${d}/`));
    return plugin === undefined ? own : `${pluginName(plugin)}:${own}`;
  };
  const chosen = rows.filter((r) =>
    r.tier === "per-invocation" && r.limits?.includes("user-invoked-only") === true
  );
  assert.equal(new Set(chosen.map(names)).size, chosen.length, "one /name per row");
  if (chosen.length === 0) return { compared: 0, problems: [] };
  const session = await userPromptSession(claude, built, chosen.map((r) => `/${names(r)}`));
  // Each prompt's `<command-message>name</command-message>` block, then its text block.
  const sent = new Map<string, string>();
  const body = JSON.parse(session.last) as { messages: { role: string; content: unknown }[] };
  for (const m of body.messages) {
    if (m.role !== "user" || !Array.isArray(m.content)) continue;
    const texts = (m.content as { type: string; text?: string }[]).filter((b) => b.type === "text");
    texts.forEach((b, i) => {
      const name = COMMAND_MESSAGE.exec(b.text ?? "")?.[1];
      const next = texts[i + 1]?.text;
      if (name === undefined || next === undefined) return;
      // Merging messages, Claude Code ends a block that is not its message's last with a \n.
      const own = i + 1 < texts.length - 1 && next.endsWith("\n") ? next.slice(0, -1) : next;
      sent.set(name, skillText(own)?.text ?? own);
    });
  }
  const problems: string[] = [];
  for (const r of chosen) {
    const text = sent.get(names(r));
    const bytes = text === undefined ? undefined : new TextEncoder().encode(text).length;
    if (bytes !== r.loaded_bytes) {
      problems.push(`/${names(r)}: Claude Code ${bytes ?? "nothing"}, row ${r.loaded_bytes}`);
    }
  }
  return { compared: chosen.length, problems };
}

/** The `claude` to observe with: the pinned one, or `CTXKIT_TIERS_CLAUDE_VERSION`'s. */
async function tiersClaude(): Promise<string | undefined> {
  const noNamespace = await namespaceSkipReason();
  if (noNamespace !== undefined) return skipObserved(noNamespace);
  const version = Deno.env.get("CTXKIT_TIERS_CLAUDE_VERSION");
  const got = await ensureClaudeCode(...(version === undefined || version === "" ? [] : [version]));
  if ("skip" in got) return skipObserved(got.skip);
  return got.claude;
}

Deno.test("tiers: every tier rule names fixtures that exist, and every fixture observes a rule", () => {
  const names = [
    ...FIXTURES.map((f) => f.name),
    "skill-arguments",
    "skill-references",
    "hook-events",
    "user-invoked-only",
  ];
  assert.deepEqual(rulesAndFixtures(TIER_RULES, names), []);
});

Deno.test(`tiers: ${FIXTURES.length} fixtures, every row's figure is what Claude Code sends, byte for byte`, async () => {
  const claude = await tiersClaude();
  if (claude === undefined) return;
  const only = Deno.env.get("CTXKIT_TIERS_ONLY")?.split(",");
  const chosen = FIXTURES.filter((f) => only === undefined || only.includes(f.name));
  const results = await pooled(chosen.map((fixture) => async () => {
    const built = build(fixture.files, fixture.pluginDirs);
    const { rows, tiers } = await scannedAndObserved(claude, built, fixture.hooks);
    const problems = disagreements({ rows, tiers });
    try {
      fixture.check?.({ rows, tiers });
    } catch (e) {
      problems.push(`check: ${e instanceof Error ? e.message : e}`);
    }
    const sources = tiers.invocations.length + tiers.spawns.length + tiers.accesses.length;
    return {
      name: fixture.name,
      sources,
      problems: problems.map((p) => p.replaceAll(built.base, "")),
    };
  }));
  const compared = results.reduce((n, r) => n + r.sources, 0);
  console.log(`${compared} sources compared across ${results.length} fixtures`);
  const failures = results.filter((r) => r.problems.length > 0);
  assert.deepEqual(
    failures.map((r) => `${r.name}:\n  ${r.problems.join("\n  ")}`),
    [],
    `${failures.length} of ${results.length} fixtures disagree`,
  );
  assert.deepEqual(results.filter((r) => r.sources === 0).map((r) => r.name), []);
});

Deno.test("tiers: skill-arguments — with arguments, the text is the model's for the same arguments", async () => {
  const claude = await tiersClaude();
  if (claude === undefined) return;
  const files: Files = {
    [`${S}/args/SKILL.md`]:
      "---\ndescription: args\narguments: [alpha, beta]\n---\nA $ARGUMENTS 0 $0 2 $2 i $ARGUMENTS[1] n $alpha $beta esc \\$0\n",
    [`${S}/append/SKILL.md`]: "---\ndescription: append\n---\nNo placeholder\n",
    [`${S}/quoted/SKILL.md`]: "---\ndescription: quoted\n---\nfirst=$0 second=$1\n",
  };
  const calls: [string, string][] = [["args", 'x y "z w"'], ["append", "p q"], [
    "quoted",
    "'one two' three",
  ]];
  const built = build(files);
  const plan: ObservePlan = {
    turns: [calls.map(([skill, args], i) => ({
      id: `toolu_ctxkit_${String(i).padStart(3, "0")}`,
      name: "Skill" as const,
      input: { skill, args },
    }))],
  };
  const seen = await observe(claude, built, plan);
  const last = seen.session!.main.at(-1)!;
  const request = mainRequest(JSON.parse(last.body));
  for (const [skill, args] of calls) {
    const dir = `${built.root}/.claude/skills/${skill}`;
    const expected = invocationText(Deno.readTextFileSync(`${dir}/SKILL.md`), {
      skillDir: dir,
      projectDir: built.root,
    }, args).text;
    assert.deepEqual(request.skills.get(dir), [expected], skill);
  }
});

Deno.test("tiers: user-invoked-only — the user's /name sends what the row says", async () => {
  const claude = await tiersClaude();
  if (claude === undefined) return;
  const off = "disable-model-invocation: true";
  const built = build({
    [`${S}/uo-plain/SKILL.md`]:
      `---\ndescription: plain\n${off}\n---\n\nIn \${CLAUDE_SKILL_DIR} with [$ARGUMENTS]\n\n\n`,
    [`${S}/uo-yes/SKILL.md`]: "---\ndescription: yes\ndisable-model-invocation: YES\n---\nYes body",
    [`${S}/uo-named/SKILL.md`]: `---\nname: other\ndescription: named\n${off}\n---\nNamed\n`,
    [`${S}/listed/SKILL.md`]: "---\ndescription: listed\n---\nListed\n",
    "proj/.claude/commands/uo-cmd.md": `---\ndescription: command\n${off}\n---\nCommand body\n`,
    "cfg/skills/uo-global/SKILL.md":
      `---\ndescription: global\n${off}\n---\nGlobal \${CLAUDE_SKILL_DIR}\n`,
    "plug/.claude-plugin/plugin.json": '{"name":"up"}',
    "plug/skills/uo-plugin/SKILL.md":
      `---\ndescription: plugin\n${off}\n---\nRoot \${CLAUDE_PLUGIN_ROOT} data \${CLAUDE_PLUGIN_DATA}\n`,
  }, ["plug"]);
  const { compared, problems } = await userInvoked(claude, built, scannedRows(built));
  assert.deepEqual(problems, []);
  assert.equal(compared, 6, "every user-only skill (not the listed one) was invoked");
});

Deno.test("tiers: skill-references — a skill's other files as the Read tool returns them whole", async () => {
  const claude = await tiersClaude();
  if (claude === undefined) return;
  const texts: Record<string, string> = {
    "lines.md": "line1\nline2\n",
    "no-newline.md": "no trailing",
    "crlf.md": "a\r\nb\r\n",
    "blank.md": "\n\n\n",
    "long.md": Array.from({ length: 2105 }, (_, i) => `L${i}\n`).join(""),
    "wide.md": `${"x".repeat(3000)}\nshort\n`,
    "unicode.md": "tab\there ünï\n",
  };
  const files: Files = { [`${S}/r/SKILL.md`]: "---\ndescription: r\n---\nbody\n" };
  for (const [name, text] of Object.entries(texts)) files[`${S}/r/references/${name}`] = text;
  const built = build(files);
  const names = Object.keys(texts);
  const plan: ObservePlan = {
    turns: [names.map((name, i) => ({
      id: `toolu_ctxkit_${String(i).padStart(3, "0")}`,
      name: "Read" as const,
      input: { file_path: `${built.root}/.claude/skills/r/references/${name}` },
    }))],
  };
  const seen = await observe(claude, built, plan);
  const request = mainRequest(JSON.parse(seen.session!.main.at(-1)!.body));
  const rows = scannedRows(built);
  names.forEach((name, i) => {
    const result = request.results.get(`toolu_ctxkit_${String(i).padStart(3, "0")}`);
    assert.equal(result?.text, readResult(texts[name]), name);
    const row = rows.find((r) => r.path.endsWith(`/references/${name}`));
    assert.equal(row?.loaded_bytes, new TextEncoder().encode(result!.text).length, name);
  });
});

Deno.test("tiers: hook-events — start-up, every prompt, every tool call, as the hook rows say", async () => {
  const claude = await tiersClaude();
  if (claude === undefined) return;
  const hook = (command: string) => ({ hooks: [{ type: "command", command }] });
  // PostToolUse's plain output goes to the transcript only; its additionalContext is sent.
  const context = JSON.stringify({
    hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "marker-tool-call" },
  });
  const built = build({
    "proj/.keep": "",
    "plug/.claude-plugin/plugin.json": '{"name":"hp"}',
    "plug/hooks/hooks.json": JSON.stringify({
      hooks: {
        SessionStart: [hook("echo marker-session-start")],
        UserPromptSubmit: [hook("echo marker-prompt")],
        PostToolUse: [hook(`echo '${context}'`)],
      },
    }),
  }, ["plug"]);
  const rows = scannedRows(built);
  const row = rows.find((r) => r.path.endsWith("hooks/hooks.json"));
  assert.deepEqual(row?.fires, ["start-up", "every-prompt", "every-tool-call"]);
  const plan: ObservePlan = {
    turns: [[{
      id: "toolu_ctxkit_000",
      name: "Read",
      input: { file_path: `${built.root}/.keep` },
    }]],
  };
  const seen = await observe(claude, built, plan, true);
  const count = (text: string, marker: string) => text.split(marker).length - 1;
  const first = seen.body;
  const after = seen.session!.main.at(-1)!.body;
  assert.equal(count(first, "marker-session-start"), 1, "SessionStart: once, at start-up");
  assert.equal(count(first, "marker-prompt"), 1, "UserPromptSubmit: with the prompt");
  assert.equal(count(first, "marker-tool-call"), 0, "PostToolUse: not before a tool call");
  assert.equal(count(after, "marker-session-start"), 1, "SessionStart: not again");
  assert.equal(count(after, "marker-tool-call"), 1, "PostToolUse: after the tool call");
});

Deno.test("tiers: the CLI's --observe-tiers — observed.tiers beside the model, the table's view, nothing written", async () => {
  const claude = await tiersClaude();
  if (claude === undefined) return;
  const built = build({
    "proj/CLAUDE.md": "top\n",
    [`${S}/demo/SKILL.md`]: "---\ndescription: demo\n---\n\nRun in ${CLAUDE_SKILL_DIR}.\n",
    [`${A}/helper.md`]:
      "---\nname: helper\ndescription: helps\ntools: Read, Skill\nskills: demo\n---\nHelp.\n",
    [`${R}/sub.md`]: "---\npaths: sub/**\n---\nRule for sub\n",
    "proj/.claude/commands/c1.md": "---\ndescription: c\n---\nCommand\n",
    "proj/sub/CLAUDE.md": "Sub\n",
    "cfg/rules/user.md": "---\npaths: sub/**\n---\nUser rule\n",
    // Observed through the private config copy: its folder is named as the real global root.
    "cfg/skills/global/SKILL.md": "---\ndescription: global\n---\nIn ${CLAUDE_SKILL_DIR}.\n",
  });
  const tmp = `${built.base}/tmp`;
  Deno.mkdirSync(tmp);
  // (HOME gets the re-run child's Deno cache, as any `deno run` does: not compared.)
  const before = [snapshot(built.root), snapshot(built.configDir)];
  const env = { HOME: built.home, CLAUDE_CONFIG_DIR: built.configDir, TMPDIR: tmp, COLUMNS: "100" };
  const args = [
    "--root",
    built.root,
    "--loaded",
    "--observe",
    "--observe-tiers",
    "--claude",
    claude,
  ];
  const json = scan(args, { env });
  assert.equal(json.stderr, "✅ EXIT:0\n", json.stderr);
  const tiers = json.doc?.observed?.tiers;
  assert.ok(tiers !== undefined, "observed.tiers is in the document");
  const figures = [...tiers.invocations, ...tiers.spawns, ...tiers.accesses].map((t) => [
    t.path.slice(built.base.length),
    t.status,
    t.bytes === t.model_bytes,
  ]);
  assert.deepEqual(figures, [
    ["/cfg/skills/global/SKILL.md", "observed", true],
    ["/proj/.claude/skills/demo/SKILL.md", "observed", true],
    ["/proj/.claude/commands/c1.md", "observed", true],
    ["/proj/.claude/agents/helper.md", "observed", true],
    ["/cfg/rules/user.md", "observed", true],
    ["/proj/.claude/rules/sub.md", "observed", true],
    ["/proj/sub/CLAUDE.md", "observed", true],
  ]);
  assert.deepEqual(tiers.warnings, []);
  assert.ok((tiers.spawns[0].request?.total.bytes ?? 0) > 0);
  assert.equal(tiers.spawns[0].preloaded[0]?.bytes, tiers.spawns[0].preloaded[0]?.model_bytes);
  const table = scan([...args, "--format", "table"], { env });
  assert.equal(table.code, 0);
  const lines = table.stdout.split("\n");
  const at = lines.findIndex((l) => l.startsWith("WHEN IT LOADS"));
  assert.ok(at > 0, table.stdout);
  const tokens = (path: string) => {
    const line = lines.slice(at).find((l) => l.endsWith(path) || l.includes(`${path}  (request`));
    return line?.trim().split(/\s+/).slice(0, 2);
  };
  const demo = tiers.invocations[1];
  assert.deepEqual(tokens(".claude/skills/demo/SKILL.md"), [
    String(demo.tokens),
    String(demo.tokens),
  ]);
  assert.match(lines.slice(at).join("\n"), /\.claude\/agents\/helper\.md {2}\(request [0-9,]+\)/);
  assert.deepEqual([snapshot(built.root), snapshot(built.configDir)], before);
  assert.deepEqual([...Deno.readDirSync(tmp)], []);
});

Deno.test("tiers: real public repositories as plugins — every skill, command, agent as the model says", async () => {
  const repos = realRepos();
  if (typeof repos === "string") {
    console.log(`SKIP: ${repos}`);
    return;
  }
  const claude = await tiersClaude();
  if (claude === undefined) return;
  const problems: string[] = [];
  for (const repo of repos) {
    const built = build({ "proj/.keep": "" });
    built.pluginDirs.push(...pluginsOf(repo));
    // A marketplace of 91 plugins (wshobson/agents) is one long session.
    const { rows, tiers } = await scannedAndObserved(claude, built, false, 1_800_000);
    // An agent whose tools are all an MCP server's is refused without that server (as in a real
    // session without it): reported, not a disagreement.
    const noTools = tiers.warnings.filter((w) => w.includes("would be spawned with zero tools"));
    const unspawnable = new Set(noTools.map((w) => w.slice(0, w.indexOf(": refused: "))));
    const found = disagreements({ rows, tiers }).filter((p) =>
      !noTools.includes(p) && ![...unspawnable].some((a) => p.startsWith(`agent ${a}: `))
    );
    const byUser = await userInvoked(claude, built, rows);
    found.push(...byUser.problems);
    const name = repo.slice(repo.lastIndexOf("/") + 1);
    console.log(
      `${name}: ${tiers.invocations.length} invocations, ${byUser.compared} by the user's /name, ${tiers.spawns.length} spawns (${unspawnable.size} refused for want of MCP tools), ${found.length} disagreements`,
    );
    problems.push(...found.map((p) => `${name}: ${p}`));
  }
  assert.deepEqual(problems, []);
});
