/**
 * The README's set-up, checked. `npm ci` must be warning-free on a fresh machine: npm warns about
 * every installed package whose install scripts `package.json`'s `allowScripts` does not cover, so
 * every such package must be listed there (approved or denied). And the README's quick start runs
 * as printed from a fresh clone (of the committed `HEAD`) with an empty HOME and nothing on `PATH`
 * but node, npm, git and coreutils: `npm ci` installs everything else, Deno included, and the first
 * command prints a table of the example project (`examples/demo`) with its files in it.
 *
 * The quick start's second line, `npx deno task test`, runs the whole suite again inside the clone;
 * that takes minutes, so it runs only with `CTXKIT_SETUP_FULL=1` (`deno task test:setup`); the
 * nested suite gets `CTXKIT_SETUP_CLONE=0`, so it does not clone itself once more.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { z } from "zod";
import { recipe } from "./_docs.ts";
import { git, lines, makeTempDir, REPO } from "./_helpers.ts";

const Manifest = z.object({
  name: z.string().optional(),
  scripts: z.record(z.string(), z.string()).optional(),
  allowScripts: z.record(z.string(), z.boolean()).optional(),
});

function readManifest(path: string): z.infer<typeof Manifest> {
  return Manifest.parse(JSON.parse(readFileSync(path, "utf8")));
}

function installedPackages(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith(".")) continue;
    if (entry.startsWith("@")) {
      for (const scoped of readdirSync(join(dir, entry))) out.push(join(dir, entry, scoped));
    } else out.push(join(dir, entry));
  }
  return out.filter((p) => existsSync(join(p, "package.json")));
}

Deno.test("npm ci: every installed package with install scripts is covered by allowScripts", () => {
  const allowed = Object.keys(readManifest(join(REPO, "package.json")).allowScripts ?? {});
  const withScripts = installedPackages(join(REPO, "node_modules"))
    .map((p) => readManifest(join(p, "package.json")))
    .filter((m) => ["preinstall", "install", "postinstall"].some((s) => m.scripts?.[s]))
    .map((m) => m.name ?? "?");
  assert.ok(withScripts.includes("deno"), "deno ships a postinstall script");
  for (const name of withScripts) {
    assert.ok(allowed.some((a) => a === name || a.startsWith(`${name}@`)), name);
  }
});

/** The rows of a table report's heaviest list (`references/context-scan.md#table-report`). */
function heaviestRows(table: string): string[] {
  const all = lines(table);
  const start = all.findIndex((l) => l.startsWith("HEAVIEST "));
  const end = all.findIndex((l, i) => i > start && l === "");
  return start < 0 ? [] : all.slice(start + 2, end);
}

/** The first program called `name` on this process's PATH, resolved, or undefined. */
function which(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    try {
      const path = Deno.realPathSync(join(dir, name));
      if (Deno.statSync(path).isFile) return path;
    } catch { /* not here */ }
  }
  return undefined;
}

/** The coreutils programs: from the package manager's file list, else a fixed list in /usr/bin. */
function coreutils(): string[] {
  try {
    const out = new Deno.Command("dpkg", { args: ["-L", "coreutils"], stdout: "piped" })
      .outputSync();
    const files = lines(new TextDecoder().decode(out.stdout)).filter((f) =>
      /\/bin\/[^/]+$/.test(f)
    );
    if (out.success && files.length > 0) return files.filter((f) => existsSync(f));
  } catch { /* no dpkg */ }
  const names =
    "basename cat chmod cp cut date dirname echo env false head id ln ls mkdir mktemp " +
    "mv printf readlink realpath rm rmdir sleep sort stat tail tee test touch tr true uname uniq wc";
  return names.split(" ").map((n) => `/usr/bin/${n}`).filter((f) => existsSync(f));
}

/** A bin dir holding node, npm, npx, git, sh and coreutils, and nothing else. */
function setupPath(): { path: string } | { missing: string[] } {
  const bin = join(makeTempDir("ctxkit-setup-path-"), "bin");
  mkdirSync(bin);
  const missing: string[] = [];
  for (const name of ["node", "npm", "npx", "git", "sh"]) {
    // npm and npx are links to their scripts: the link itself keeps their relative requires.
    const found = name === "npm" || name === "npx" ? whichLink(name) : which(name);
    if (found === undefined) missing.push(name);
    else symlinkSync(found, join(bin, name));
  }
  for (const file of coreutils()) {
    if (!existsSync(join(bin, basename(file)))) symlinkSync(file, join(bin, basename(file)));
  }
  return missing.length > 0 ? { missing } : { path: bin };
}

/** `name` on PATH without resolving links (npm's bin links point into its package). */
function whichLink(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    if (existsSync(join(dir, name))) return Deno.realPathSync(join(dir, name));
  }
  return undefined;
}

Deno.test("README quick start, from a fresh clone with only node, npm, git and coreutils on PATH", () => {
  if (Deno.env.get("CTXKIT_SETUP_CLONE") === "0") {
    console.log(
      "SKIP: CTXKIT_SETUP_CLONE=0 (this suite runs inside the quick-start check's clone)",
    );
    return;
  }
  const tools = setupPath();
  if ("missing" in tools) {
    console.log(
      `SKIP: the set-up's own prerequisites are not installed: ${tools.missing.join(", ")}`,
    );
    return;
  }
  const [setUp, test] = lines(recipe("quick-start").body);
  assert.match(setUp, /^npm ci && /, "the first line is the set-up");
  const clone = join(makeTempDir("ctxkit-clone-"), "ctxkit");
  git(REPO, "clone", "-q", REPO, clone);
  const home = makeTempDir("ctxkit-clone-home-");
  const env = {
    PATH: tools.path,
    HOME: home,
    // npm's own settings, not the command: reuse the download cache, no update check.
    npm_config_cache: join(Deno.env.get("HOME") ?? home, ".npm"),
    npm_config_update_notifier: "false",
  };
  const run = (line: string, extra: Record<string, string> = {}) => {
    const out = new Deno.Command("sh", {
      args: ["-c", line],
      cwd: clone,
      clearEnv: true,
      env: { ...env, ...extra },
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    const dec = new TextDecoder();
    return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
  };
  const first = run(setUp);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(lines(first.stderr).at(-1), "✅ EXIT:0", first.stderr);
  assert.doesNotMatch(first.stderr, /npm warn/i);
  // npm's own report goes to stdout first; the scan's table of the example project is the rest.
  const table = first.stdout.slice(first.stdout.indexOf("context-scan "));
  assert.equal(lines(table)[0], `context-scan ${clone}/examples/demo`, first.stdout);
  const rows = heaviestRows(table);
  assert.ok(rows.length > 0, table);
  for (const file of ["CLAUDE.md", "docs/architecture.md", ".claude/rules/style.md"]) {
    assert.ok(rows.some((r) => r.endsWith(`  ${file}`)), `${file} in\n${table}`);
  }
  assert.ok(lines(table).includes("SCAN ISSUES (0)"), table);
  assert.ok(existsSync(join(clone, "node_modules", ".bin", "deno")));

  if (Deno.env.get("CTXKIT_SETUP_FULL") !== "1") {
    console.log(
      `SKIP: the second line (${test.trim()}) runs the whole suite again; CTXKIT_SETUP_FULL=1`,
    );
    return;
  }
  // The suite's own tests drive the tools through bash, python3, jq… (the system's, after the
  // set-up's), and its bundle tests need the esbuild `deno bundle` fetches once into Deno's cache
  // (README): the nested run shares this one's cache rather than fetching it again.
  const denoDir = Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? home, ".cache", "deno");
  const second = run(test, {
    CTXKIT_SETUP_CLONE: "0",
    PATH: `${tools.path}:/usr/bin:/bin`,
    DENO_DIR: denoDir,
  });
  assert.equal(second.code, 0, second.stdout.slice(-4000) + second.stderr.slice(-4000));
  // deno-lint-ignore no-control-regex -- Deno's colour codes, stripped before reading its summary
  const summary = second.stdout.replace(/\x1b\[[0-9;]*m/g, "").match(/^ok \| \d+ passed .*$/m);
  assert.ok(summary !== null, second.stdout.slice(-4000));
  console.log(`the clone's suite: ${summary[0]}`);
});
