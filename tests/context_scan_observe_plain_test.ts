/**
 * `--observe` sees what a plain run sees (`references/context-scan.md#what-an-observation-touches`):
 * for the setups where its private config copy used to differ — a project opened through a link,
 * `--root` below the git root, a git worktree (auto-memory under the slug Claude Code uses), a global
 * file outside the copied folders (a global CLAUDE.md's import), an absolute `claudeMdExcludes` of
 * the global root, HOME opened as the project — every instruction source `--observe` reports equals,
 * path and bytes, what the same Claude Code sends in a plain run (the fixture's own config folder,
 * no copy), and every source is attributed. Skips, with the reason, where no namespace can be made
 * or Claude Code cannot be installed.
 */
import assert from "node:assert/strict";
import { git, makeTempDir, writeTree } from "./_helpers.ts";
import { observedClaude, observeFixture } from "./_claude.ts";
import { scan } from "./context_scan_fixtures.ts";

const slug = (path: string) => path.replace(/[^A-Za-z0-9]/g, "-");

/** One setup: where claude runs, the config folder, HOME. */
interface Setup {
  readonly name: string;
  readonly root: string;
  readonly config: string;
  readonly home: string;
}

function commitAll(dir: string): void {
  git(dir, "init", "-q");
  git(dir, "add", "-A");
  git(dir, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x");
}

function setups(): Setup[] {
  const out: Setup[] = [];
  const make = (name: string, build: (b: string) => Omit<Setup, "name">) => {
    const base = makeTempDir(`ctxkit-plain-${name}-`);
    out.push({ name, ...build(base) });
  };
  make("link-root", (b) => {
    writeTree(b, {
      "real/proj/CLAUDE.md": "through a link\n",
      [`cfg/projects/${slug(`${b}/real/proj`)}/memory/MEMORY.md`]: "the physical slug's memory\n",
      "home/.keep": "",
    });
    Deno.symlinkSync(`${b}/real/proj`, `${b}/link`);
    return { root: `${b}/link`, config: `${b}/cfg`, home: `${b}/home` };
  });
  make("below-git-root", (b) => {
    writeTree(b, {
      "repo/CLAUDE.md": "repo top\n",
      "repo/sub/CLAUDE.md": "sub\n",
      [`cfg/projects/${slug(`${b}/repo`)}/memory/MEMORY.md`]: "the git root's memory\n",
      "home/.keep": "",
    });
    commitAll(`${b}/repo`);
    return { root: `${b}/repo/sub`, config: `${b}/cfg`, home: `${b}/home` };
  });
  make("worktree", (b) => {
    writeTree(b, {
      "main/CLAUDE.md": "main\n",
      [`cfg/projects/${slug(`${b}/main`)}/memory/MEMORY.md`]: "the main checkout's memory\n",
      "home/.keep": "",
    });
    commitAll(`${b}/main`);
    git(`${b}/main`, "worktree", "add", "-q", `${b}/wt`);
    return { root: `${b}/wt`, config: `${b}/cfg`, home: `${b}/home` };
  });
  make("global-import", (b) => {
    writeTree(b, {
      "cfg/CLAUDE.md": "global\n@notes/extra.md\n",
      "cfg/notes/extra.md": "a global import outside the copied folders\n",
      "proj/CLAUDE.md": "project\n",
      "home/.keep": "",
    });
    return { root: `${b}/proj`, config: `${b}/cfg`, home: `${b}/home` };
  });
  make("absolute-exclude", (b) => {
    writeTree(b, {
      "cfg/CLAUDE.md": "excluded by its absolute path\n",
      "cfg/rules/kept.md": "kept\n",
      "cfg/settings.json": JSON.stringify({ claudeMdExcludes: [`${b}/cfg/CLAUDE.md`] }),
      "proj/CLAUDE.md": "project\n",
      "home/.keep": "",
    });
    return { root: `${b}/proj`, config: `${b}/cfg`, home: `${b}/home` };
  });
  make("home-as-project", (b) => {
    writeTree(b, {
      "home/.claude/CLAUDE.md": "the user's CLAUDE.md\n",
      "home/.claude/rules/r.md": "the user's rule\n",
      "home/CLAUDE.md": "HOME's own CLAUDE.md\n",
    });
    return { root: `${b}/home`, config: `${b}/home/.claude`, home: `${b}/home` };
  });
  return out;
}

Deno.test("--observe sees what a plain run sees: link roots, --root below the git root, worktrees, global imports, absolute claudeMdExcludes, HOME as the project", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const problems: string[] = [];
  for (const s of setups()) {
    const plain = await observeFixture(claude, {
      root: s.root,
      home: s.home,
      configDir: s.config,
    });
    const expected = plain.request.parts
      .filter((p) => p.category === "memory-files" && p.path !== undefined)
      .map((p) => `${Deno.realPathSync(p.path!)} ${p.bytes}`).sort();
    const tmp = makeTempDir("ctxkit-plain-tmp-");
    const r = scan(["--root", s.root, "--observe", "--claude", claude], {
      env: { HOME: s.home, CLAUDE_CONFIG_DIR: s.config, TMPDIR: tmp },
    });
    const observed = r.doc?.observed;
    if (observed === undefined) {
      problems.push(`${s.name}: no observation (exit ${r.code}): ${r.stderr.trim()}`);
      continue;
    }
    const got = observed.sources.filter((x) => x.category === "memory-files")
      .map((x) => `${Deno.realPathSync(x.path!)} ${x.bytes}`).sort();
    if (got.join("\n") !== expected.join("\n")) {
      problems.push(
        `${s.name}:\n  plain:   ${expected.join("\n           ")}\n  observe: ${
          got.join("\n           ")
        }`,
      );
    }
    if (expected.length === 0) problems.push(`${s.name}: the plain run sent no instruction file`);
    for (const w of observed.warnings) problems.push(`${s.name}: warning ${w}`);
  }
  assert.deepEqual(problems, []);
});
