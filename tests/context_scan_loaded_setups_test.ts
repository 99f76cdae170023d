/**
 * `--loaded` on the setups users really have (`references/context-scan.md#what---loaded-adds`): a
 * `CLAUDE.md` linked to `AGENTS.md` counted on the file Claude Code reads through the link, a
 * plugin's skill, reference and agent bodies in the per-invocation and per-spawn tiers, installed
 * plugins reported with `--global`, `claudeMdExcludes`, and a project opened through a link. Runs
 * the tool as a child process (sources, or the bundle with CTXKIT_TEST_TARGET=bundle).
 */
import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "./_helpers.ts";
import { scan, type ScanRun } from "./context_scan_fixtures.ts";
import type { ScanDocument } from "../lib/scan/schema.ts";

const OK = "✅ EXIT:0\n";

function clean(r: ScanRun): ScanDocument {
  assert.equal(r.stderr, OK, r.stderr);
  assert.ok(r.doc, "stdout is a valid scan document");
  return r.doc;
}

Deno.test("--loaded: CLAUDE.md linked to AGENTS.md counts on AGENTS.md, the file Claude Code reads; the link row says where it leads", () => {
  const base = makeTempDir("ctxkit-linked-agents-");
  writeTree(base, { "proj/AGENTS.md": "# Agents\nUse pnpm.\n" });
  Deno.symlinkSync("AGENTS.md", `${base}/proj/CLAUDE.md`);
  const env = { HOME: `${base}/home`, CLAUDE_CONFIG_DIR: `${base}/cfg` };
  const doc = clean(scan(["--root", "proj", "--loaded"], { cwd: base, env }));
  const rows = doc.files.filter((f) => f.tier === "always-on").map((f) => ({
    path: f.path.slice(base.length + 1),
    loading: f.loading,
    loaded: f.loaded_bytes,
    limits: f.limits,
    resolves_to: f.resolves_to?.slice(base.length + 1),
  }));
  assert.deepEqual(rows, [
    // Claude Code names the link; it is not counted twice, and says which file it reaches.
    {
      path: "proj/CLAUDE.md",
      loading: "startup-instruction",
      loaded: 0,
      limits: ["loaded-elsewhere"],
      resolves_to: "proj/AGENTS.md",
    },
    // The file read through the link: loaded at start-up, never "unused".
    {
      path: "proj/AGENTS.md",
      loading: "startup-instruction",
      loaded: 18,
      limits: [],
      resolves_to: undefined,
    },
  ]);
  assert.equal(doc.categories?.["memory-files"].bytes, 18);
});

Deno.test("--plugin-dir: a plugin's skill bodies, their references and its agent bodies count per invocation and per spawn, as the project's own do", () => {
  const base = makeTempDir("ctxkit-plugin-whole-");
  writeTree(base, {
    "proj/.keep": "",
    "plug/.claude-plugin/plugin.json": '{"name": "plug"}',
    "plug/skills/alpha/SKILL.md": "---\ndescription: Alpha\n---\nthe body\n",
    "plug/skills/alpha/references/api.md": "reference text\n",
    "plug/agents/pa.md": "---\nname: pa\ndescription: Plugin agent\n---\nthe agent body\n",
  });
  const env = { HOME: `${base}/home`, CLAUDE_CONFIG_DIR: `${base}/cfg` };
  const doc = clean(
    scan(["--root", "proj", "--loaded", "--plugin-dir", "plug"], { cwd: base, env }),
  );
  assert.deepEqual(
    doc.files.filter((f) => f.root === "plugin")
      .map((f) => [f.path.slice(base.length + 1), f.tier, f.loading, f.bytes, f.loaded_bytes]),
    // What an invocation, a read of the reference and a spawn send (references/context-scan.md#tier-rules):
    // the body "the body\n", the Read result "1\treference text\n2\t", the trimmed agent body.
    [
      ["plug/skills/alpha/SKILL.md", "per-invocation", "invoked-skill", 36, 9],
      ["plug/skills/alpha/SKILL.md", "always-on", "skill-listing", 20, 20],
      ["plug/skills/alpha/references/api.md", "per-invocation", "on-demand", 15, 19],
      ["plug/agents/pa.md", "per-spawn", "selected-agent", 58, 14],
      ["plug/agents/pa.md", "always-on", "agent-listing", 43, 43],
    ],
  );
  assert.equal(doc.totals["per-invocation"].bytes, 36 + 15);
  assert.equal(doc.totals["per-spawn"].bytes, 58);
});

/** A global root with one installed, enabled plugin (as `claude plugin install` leaves it). */
function installedPlugin(base: string): void {
  const cache = `${base}/cfg/plugins/cache/mk/ip/1.0.0`;
  writeTree(base, {
    "proj/.keep": "",
    "cfg/plugins/marketplaces/mk/.claude-plugin/marketplace.json": JSON.stringify({
      name: "mk",
      owner: { name: "t" },
      plugins: [{ name: "ip", source: "./plugins/ip" }],
    }),
    "cfg/plugins/known_marketplaces.json": JSON.stringify({
      mk: {
        source: { source: "github", repo: "t/mk" },
        installLocation: `${base}/cfg/plugins/marketplaces/mk`,
      },
    }),
    "cfg/plugins/installed_plugins.json": JSON.stringify({
      version: 2,
      plugins: { "ip@mk": [{ scope: "user", installPath: cache, version: "1.0.0" }] },
    }),
    "cfg/settings.json": JSON.stringify({ enabledPlugins: { "ip@mk": true } }),
    "cfg/plugins/cache/mk/ip/1.0.0/.claude-plugin/plugin.json": '{"name": "ip"}',
    "cfg/plugins/cache/mk/ip/1.0.0/skills/s/SKILL.md": "---\ndescription: Installed\n---\nb\n",
  });
}

Deno.test("--loaded: an installed plugin is counted like a --plugin-dir, its rows reported with --global", () => {
  const base = makeTempDir("ctxkit-installed-");
  installedPlugin(base);
  const env = { HOME: `${base}/home`, CLAUDE_CONFIG_DIR: `${base}/cfg` };
  const without = clean(scan(["--root", "proj", "--loaded"], { cwd: base, env }));
  assert.deepEqual(without.files.filter((f) => f.root === "plugin"), []);
  const withGlobal = clean(scan(["--root", "proj", "--loaded", "--global"], { cwd: base, env }));
  assert.deepEqual(
    withGlobal.files.filter((f) => f.root === "plugin")
      .map((f) => [f.path.slice(base.length + 1), f.tier, f.name, f.loaded_bytes]),
    [
      ["cfg/plugins/cache/mk/ip/1.0.0/skills/s/SKILL.md", "per-invocation", undefined, 2],
      ["cfg/plugins/cache/mk/ip/1.0.0/skills/s/SKILL.md", "always-on", "ip:s", 18],
    ],
  );
});

Deno.test("--loaded: claudeMdExcludes keeps a CLAUDE.md out (limit excluded); a project opened through a link keeps its rows' names and loads the physical parent's files", () => {
  const base = makeTempDir("ctxkit-excludes-");
  writeTree(base, {
    "real/CLAUDE.md": "the physical parent\n",
    "real/proj/CLAUDE.md": "excluded\n",
    "real/proj/CLAUDE.local.md": "kept\n",
    "real/proj/.claude/settings.json": JSON.stringify({ claudeMdExcludes: ["**/proj/CLAUDE.md"] }),
  });
  Deno.mkdirSync(`${base}/elsewhere`);
  Deno.symlinkSync(`${base}/real/proj`, `${base}/elsewhere/link`);
  const env = { HOME: `${base}/home`, CLAUDE_CONFIG_DIR: `${base}/cfg` };
  const doc = clean(scan(["--root", "elsewhere/link", "--loaded"], { cwd: base, env }));
  assert.deepEqual(
    doc.files.filter((f) => f.tier === "always-on")
      .map((f) => [f.path.slice(base.length + 1), f.loaded_bytes, ...(f.limits ?? [])]),
    [
      ["elsewhere/link/CLAUDE.md", 0, "excluded"],
      ["elsewhere/link/CLAUDE.local.md", 4],
      ["real/CLAUDE.md", 19],
    ],
  );
});
