/**
 * The differential suite of `--loaded` (`references/context-scan.md#the-differential-suite`): every
 * fixture the tests build is scanned with `--global --loaded` and observed with the pinned Claude
 * Code (inside a fresh network namespace, tests/_claude.ts); every instruction source, every skill,
 * command and agent listing entry, the hooks' context and the output style must agree byte for
 * byte, and no source may appear on one side only. Claude Code's own built-in skills and agents
 * are what an empty fixture lists; they are subtracted (and the model's built-in listing figure is
 * checked against them).
 *
 * Real public repositories are checked too — as a project, as `--plugin-dir` and as installed
 * plugins — when `CTXKIT_REAL_REPOS` names a folder holding them as `<owner>+<name>` (fetched there
 * beforehand; never committed). Skips, with the reason, where no namespace can be made or Claude
 * Code cannot be installed.
 */
import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "./_helpers.ts";
import { observedClaude, observedVersion } from "./_claude.ts";
import {
  build,
  type Built,
  builtins,
  disagreements,
  type Fixture,
  isHeading,
  observed,
  observedSides,
  pooled,
  scanned,
} from "./_diff.ts";
import { TEXT_FIXTURES } from "./_diff_fixtures_text.ts";
import { LISTING_FIXTURES } from "./_diff_fixtures_listing.ts";
import { SETUP_FIXTURES } from "./_diff_fixtures_setups.ts";
import { LISTING_BUDGET, LOADING_RULES } from "../lib/scan/loading_rules.ts";
import { catalogOf, pluginsOf, realRepos } from "./_real_repos.ts";
import { rulesAndFixtures } from "./_rules.ts";

const FIXTURES: Fixture[] = [...TEXT_FIXTURES, ...LISTING_FIXTURES, ...SETUP_FIXTURES];

Deno.test("differential: every rule names fixtures that exist, and every fixture observes a rule", () => {
  assert.deepEqual(rulesAndFixtures(LOADING_RULES, FIXTURES.map((f) => f.name)), []);
});

Deno.test("differential: an empty fixture lists only Claude Code's built-ins, as the model counts them", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const empty = await builtins(claude);
  assert.equal(empty.memory.size, 0);
  const { builtin } = LISTING_BUDGET;
  assert.equal(empty.skills.size, builtin.entries + builtin.competing.length);
  const request = await observed(claude, build({ name: "empty", files: () => ({}) }));
  const entries = request.parts.filter((p) => p.category === "skills" && !isHeading(p.text));
  // The last ones compete for the budget; the others stay whole.
  const competing = entries.slice(entries.length - builtin.competing.length);
  assert.deepEqual(
    competing.map((p) => ({ name: p.label, chars: p.text.length - 1 })),
    builtin.competing,
  );
  const fixed = entries.slice(0, entries.length - builtin.competing.length);
  assert.equal(fixed.reduce((n, p) => n + p.text.length - 1, 0), builtin.chars);
  const none = scanned(build({ name: "empty", files: () => ({}) }));
  assert.deepEqual([none.memory.size, none.skills.size, none.agents.size], [0, 0, 0]);
});

Deno.test(`differential: ${FIXTURES.length} fixtures agree with the pinned Claude Code, source by source`, async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  assert.ok(FIXTURES.length >= 40, "at least 40 fixtures");
  const builtin = await builtins(claude);
  // CTXKIT_DIFF_ONLY=a,b runs only those fixtures (while working on a rule).
  const only = Deno.env.get("CTXKIT_DIFF_ONLY")?.split(",");
  const chosen = FIXTURES.filter((f) => only === undefined || only.includes(f.name));
  const results = await pooled(chosen.map((fixture) => async () => {
    const built = build(fixture);
    const s = scanned(built, fixture.env);
    const request = await observed(claude, built, fixture.env, fixture.hooks);
    const o = observedSides(request, builtin, built.managed);
    if (!fixture.hooks) s.hooks.clear(); // the observation ran no hook, as --observe by default
    const size = o.memory.size + o.skills.size + o.agents.size + o.hooks.size + o.style.size;
    return {
      name: fixture.name,
      size,
      problems: disagreements(o, s).map((l) => l.replaceAll(built.base, "")),
    };
  }));
  const sources = results.reduce((n, r) => n + r.size, 0);
  console.log(`${sources} sources compared byte for byte (Claude Code ${observedVersion()})`);
  // One line per fixture that disagrees (the drift task reads them: `scripts/drift.ts`).
  for (const r of results) if (r.problems.length > 0) console.log(`DRIFT: ${r.name}`);
  const failures = results.filter((r) => r.problems.length > 0);
  assert.deepEqual(
    failures.map((r) => `${r.name}:\n  ${r.problems.join("\n  ")}`),
    [],
    `${failures.length} of ${results.length} fixtures disagree`,
  );
  // Every fixture but the ones about what does not load compares at least one source.
  const empty = results.filter((r) => r.size === 0).map((r) => r.name);
  assert.deepEqual(empty, ["subdirectory", "plugin-as-project"].filter((n) => empty.includes(n)));
});

/** `from` copied to `to` without its `.git`. */
function copyTree(from: string, to: string): void {
  Deno.mkdirSync(to, { recursive: true });
  const out = new Deno.Command("cp", { args: ["-R", `${from}/.`, to], stderr: "piped" })
    .outputSync();
  if (!out.success) throw new Error(`cp ${from}: ${new TextDecoder().decode(out.stderr)}`);
  try {
    Deno.removeSync(`${to}/.git`, { recursive: true });
  } catch { /* none */ }
}

/**
 * A config folder below `dir` where every plugin of `repo`'s marketplace is installed and enabled,
 * as `claude plugin marketplace add <owner>/<name>` and `claude plugin install` leave it (the
 * marketplace checkout, a cache copy per plugin, the two lists, `enabledPlugins`); the config folder.
 */
function installAll(repo: string, dir: string): string {
  const cfg = `${dir}/cfg`;
  const catalog = JSON.parse(
    (() => {
      try {
        return Deno.readTextFileSync(`${repo}/.claude-plugin/marketplace.json`);
      } catch {
        return '{"name":"none","plugins":[]}';
      }
    })(),
  ) as { name: string };
  const market = `${cfg}/plugins/marketplaces/${catalog.name}`;
  copyTree(repo, market);
  const records: Record<string, unknown> = {};
  const enabled: Record<string, boolean> = {};
  for (const p of catalogOf(repo)) {
    const version = p.version ?? "1.0.0";
    const path = `${cfg}/plugins/cache/${catalog.name}/${p.name}/${version}`;
    copyTree(new URL(p.source, `file://${repo}/`).pathname.replace(/\/$/, ""), path);
    const id = `${p.name}@${catalog.name}`;
    records[id] = [{
      scope: "user",
      installPath: path,
      version,
      installedAt: "2026-01-01T00:00:00.000Z",
      lastUpdated: "2026-01-01T00:00:00.000Z",
    }];
    enabled[id] = true;
  }
  const owner = repo.slice(repo.lastIndexOf("/") + 1).replace("+", "/");
  writeTree(cfg, {
    "plugins/installed_plugins.json": JSON.stringify({ version: 2, plugins: records }),
    "plugins/known_marketplaces.json": JSON.stringify({
      [catalog.name]: {
        source: { source: "github", repo: owner },
        installLocation: market,
        lastUpdated: "2026-01-01T00:00:00.000Z",
      },
    }),
    "settings.json": JSON.stringify({ enabledPlugins: enabled }),
  });
  return cfg;
}

Deno.test("differential: real public repositories, as a project, as --plugin-dir and as installed plugins", async () => {
  const repos = realRepos();
  if (typeof repos === "string") {
    console.log(`SKIP: ${repos}`);
    return;
  }
  const claude = await observedClaude();
  if (claude === undefined) return;
  const builtin = await builtins(claude);
  const problems: string[] = [];
  for (const repo of repos) {
    const base = makeTempDir("ctxkit-real-");
    for (const d of ["proj", "cfg", "home"]) Deno.mkdirSync(`${base}/${d}`);
    const asProject: Built = {
      base,
      root: repo,
      home: `${base}/home`,
      configDir: `${base}/cfg`,
      pluginDirs: [],
    };
    const asPlugin: Built = { ...asProject, root: `${base}/proj`, pluginDirs: pluginsOf(repo) };
    const asInstalled: Built = {
      ...asProject,
      root: `${base}/proj`,
      configDir: installAll(repo, `${base}/installed`),
    };
    for (
      const [how, built] of [
        ["project", asProject],
        ["plugin", asPlugin],
        ["installed plugin", asInstalled],
      ] as const
    ) {
      const o = observedSides(await observed(claude, built), builtin);
      const s = scanned(built);
      s.hooks.clear(); // observed without hooks: a plugin's hook output is not compared
      for (const line of disagreements(o, s)) problems.push(`${repo} as ${how}: ${line}`);
      console.log(
        `${
          repo.slice(repo.lastIndexOf("/") + 1)
        } as ${how}: ${o.memory.size} instruction sources, ${o.skills.size} skill and command entries, ${o.agents.size} agents compared`,
      );
    }
  }
  assert.deepEqual(problems, []);
});
