/**
 * The differential suite's harness (`references/context-scan.md#the-differential-suite`): a fixture
 * is built below a temp base, scanned with `--global --loaded` in-process and observed with Claude
 * Code (tests/_claude.ts); both sides are reduced to their sources — instruction files by path,
 * listing entries by name, hooks' context — and compared byte for byte.
 *
 * @module
 */
import { makeTempDir, writeTree } from "./_helpers.ts";
import { observeFixture } from "./_claude.ts";
import { createLoadingStep } from "../lib/scan/loading.ts";
import { scanRoots } from "../lib/scan/scan.ts";
import { loadingModel } from "../lib/scan/claude_model.ts";
import type { ObservedRequest } from "../lib/scan/observe/request.ts";
import type { ScanDocument } from "../lib/scan/schema.ts";

export type Files = Record<string, string | Uint8Array>;

/** One fixture: files below a temp base (`proj/` is the project, `cfg/` the config, `home/`). */
export interface Fixture {
  readonly name: string;
  readonly files: (base: string) => Files;
  /** The project folder below the base (default `proj`). */
  readonly cwd?: string;
  /** `--plugin-dir` folders below the base. */
  readonly pluginDirs?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly setup?: (base: string) => void;
  /** Run SessionStart hooks in the observation (default: off, as `--observe` runs). */
  readonly hooks?: boolean;
  /**
   * Files of the managed policy folder (`/etc/claude-code` as Claude Code sees it: an overlay in
   * the observation's own mount namespace; the model reads them from `<base>/managed`).
   */
  readonly managed?: Files;
}

/** Claude Code's project folder name, written out here independently of the model. */
export const slug = (path: string) => {
  const s = path.replace(/[^A-Za-z0-9]/g, "-");
  if (s.length <= 200) return s;
  let h = 0;
  for (const unit of path.split("")) h = ((h << 5) - h + unit.charCodeAt(0)) | 0;
  return `${s.slice(0, 200)}-${Math.abs(h).toString(36)}`;
};
export const memory = (base: string, project = "proj") =>
  `cfg/projects/${slug(`${base}/${project}`)}/memory`;
export const lines = (n: number, line: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => `${line(i)}\n`).join("");
export const skills = (n: number, length: number, at = "proj/.claude/skills") =>
  Object.fromEntries(
    Array.from({ length: n }, (_, i) => [
      `${at}/s${String(i).padStart(3, "0")}/SKILL.md`,
      `---\ndescription: ${"d".repeat(length)}\n---\nbody\n`,
    ]),
  );
export const chain = (names: string[], dir = "proj") =>
  Object.fromEntries(
    names.map((
      n,
      i,
    ) => [`${dir}/${n}.md`, `${n}\n${i + 1 < names.length ? `@${names[i + 1]}.md` : ""}\n`]),
  );
export const PNG = new Uint8Array([
  0x89,
  0x50,
  0x4e,
  0x47,
  0x0d,
  0x0a,
  0x1a,
  0x0a,
  0,
  0,
  0,
  13,
  1,
  2,
  0,
  255,
]);
export const git = (dir: string) =>
  new Deno.Command("git", { args: ["init", "-q", dir], stdout: "null", stderr: "null" })
    .outputSync();

export const plugin = (dir: string, name?: string): Files => ({
  ...(name === undefined
    ? {}
    : { [`${dir}/.claude-plugin/plugin.json`]: JSON.stringify({ name }) }),
  [`${dir}/skills/zeta/SKILL.md`]: "---\nname: zeta\ndescription: Zeta plugin skill\n---\nb\n",
  [`${dir}/skills/alpha/SKILL.md`]:
    "---\ndescription: Alpha plugin skill\nwhen_to_use: when\n---\nb\n",
  [`${dir}/skills/off/SKILL.md`]: "---\ndescription: off\ndisable-model-invocation: true\n---\nb\n",
  [`${dir}/commands/pc.md`]: "---\ndescription: plugin command\n---\nb\n",
  [`${dir}/commands/nodesc.md`]: "no description\n",
  [`${dir}/agents/pa.md`]: "---\nname: pa\ndescription: plugin agent\ntools: Read\n---\nb\n",
  [`${dir}/hooks/hooks.json`]: JSON.stringify({
    hooks: { SessionStart: [{ hooks: [{ type: "command", command: "echo from-hook" }] }] },
  }),
  [`${dir}/hooks/lib/inject.mjs`]: 'export const REMINDER_TEXT = "never sent";\n',
  [`${dir}/CLAUDE.md`]: "the plugin's own CLAUDE.md\n",
});

/** One side's sources: `memory-files` by path, listing entries by name. */
export interface Sides {
  memory: Map<string, number>;
  skills: Map<string, number>;
  agents: Map<string, number>;
  /** Claude Code's built-in skills listed by name only (over the budget). */
  builtinsCut: string[];
  /** Hooks' context: all of it as one source (`hooks`), when there is any. */
  hooks: Map<string, number>;
  /** The output style's section and reminder line, as one source. */
  style: Map<string, number>;
}

/** Empty sides. */
export function noSides(): Sides {
  return {
    memory: new Map(),
    skills: new Map(),
    agents: new Map(),
    builtinsCut: [],
    hooks: new Map(),
    style: new Map(),
  };
}

/** A listing's heading part (its label is `heading`, which a skill may be named too). */
export function isHeading(text: string): boolean {
  return text.startsWith("The following skills") || text.startsWith("Available agent types");
}

/**
 * An instruction file's key on both sides: its real path (a file reached through a link is the file
 * it reaches), with the managed policy folder Claude Code names `/etc/claude-code` read as the
 * fixture's own.
 */
function realKey(path: string, managed?: string): string {
  const named = managed !== undefined && path.startsWith(`${MANAGED_AS_SEEN}/`)
    ? `${managed}${path.slice(MANAGED_AS_SEEN.length)}`
    : path;
  try {
    return Deno.realPathSync(named);
  } catch {
    return named;
  }
}

/** Where Claude Code looks for the managed policy on Linux. */
export const MANAGED_AS_SEEN = "/etc/claude-code";

export function observedSides(request: ObservedRequest, builtin: Sides, managed?: string): Sides {
  const sides = noSides();
  for (const p of request.parts) {
    if (p.category === "memory-files" && p.path !== undefined) {
      sides.memory.set(realKey(p.path, managed), p.bytes);
    }
    // SessionStart hooks' output (it opens the system-role message; request.ts makes it `hooks`).
    if (p.category === "hooks") sides.hooks.set("hooks", (sides.hooks.get("hooks") ?? 0) + p.bytes);
    if (p.label === "output style") {
      sides.style.set("output style", (sides.style.get("output style") ?? 0) + p.bytes);
    }
    if ((p.category === "skills" || p.category === "agents") && !isHeading(p.text)) {
      const map = p.category === "skills" ? sides.skills : sides.agents;
      const own = (p.category === "skills" ? builtin.skills : builtin.agents).get(p.label);
      if (own === undefined) map.set(p.label, p.bytes);
      else if (own !== p.bytes) sides.builtinsCut.push(p.label); // a built-in the budget cut
    }
  }
  return sides;
}

export function scannedSides(doc: ScanDocument, builtinsCut: readonly string[] = []): Sides {
  const sides = noSides();
  sides.builtinsCut.push(...builtinsCut);
  for (const row of doc.files) {
    if (row.tier !== "always-on" || (row.loaded_bytes ?? 0) === 0) continue;
    if (row.category === "memory-files") sides.memory.set(realKey(row.path), row.loaded_bytes!);
    if (row.category === "system-prompt") {
      sides.style.set("output style", (sides.style.get("output style") ?? 0) + row.loaded_bytes!);
    }
    if (row.category === "skills") sides.skills.set(row.name ?? row.path, row.loaded_bytes!);
    if (row.category === "agents") sides.agents.set(row.name ?? row.path, row.loaded_bytes!);
    if (row.category === "hooks") {
      sides.hooks.set("hooks", (sides.hooks.get("hooks") ?? 0) + row.loaded_bytes!);
    }
  }
  return sides;
}

/** Every disagreement between the two sides, one line each (empty: they agree). */
export function disagreements(observed: Sides, scanned: Sides): string[] {
  const out: string[] = [];
  for (const group of ["memory", "skills", "agents", "hooks", "style"] as const) {
    const o = observed[group];
    const s = scanned[group];
    for (const [k, v] of o) {
      if (!s.has(k)) out.push(`${group} ${k}: Claude Code ${v} bytes, ctxkit none`);
      else if (v !== s.get(k)!) {
        out.push(`${group} ${k}: Claude Code ${v}, ctxkit ${s.get(k)}`);
      }
    }
    for (const [k, v] of s) {
      if (!o.has(k)) out.push(`${group} ${k}: ctxkit ${v} bytes, Claude Code none`);
    }
  }
  if (observed.builtinsCut.join() !== scanned.builtinsCut.join()) {
    out.push(
      `built-ins cut: Claude Code [${observed.builtinsCut}], ctxkit [${scanned.builtinsCut}]`,
    );
  }
  return out;
}

export interface Built {
  base: string;
  root: string;
  home: string;
  configDir: string;
  pluginDirs: string[];
  /** The fixture's managed policy folder (absent when it has none). */
  managed?: string;
  /** The overlay's upper folder holding `claude-code/` (the managed folder's parent). */
  managedUpper?: string;
}

export function build(fixture: Fixture): Built {
  const base = makeTempDir(`ctxkit-diff-`);
  for (const d of ["proj", "cfg", "home"]) Deno.mkdirSync(`${base}/${d}`, { recursive: true });
  writeTree(base, fixture.files(base));
  const root = `${base}/${fixture.cwd ?? "proj"}`;
  const managed = fixture.managed === undefined ? undefined : `${base}/managed/claude-code`;
  if (managed !== undefined) {
    Deno.mkdirSync(managed, { recursive: true });
    writeTree(managed, fixture.managed!);
  }
  fixture.setup?.(base);
  Deno.mkdirSync(root, { recursive: true });
  return {
    base,
    root,
    home: `${base}/home`,
    configDir: `${base}/cfg`,
    pluginDirs: (fixture.pluginDirs ?? []).map((p) => `${base}/${p}`),
    ...(managed === undefined ? {} : { managed, managedUpper: `${base}/managed` }),
  };
}

/**
 * The `--global --loaded` scan of a built fixture, in-process (same rules as the CLI), as sides;
 * the built-ins the model cuts come from the model itself (they have no row).
 */
export function scanned(built: Built, env: Readonly<Record<string, string>> = {}): Sides {
  const options = {
    home: built.home,
    pluginDirs: built.pluginDirs,
    budgetOverride: env.SLASH_COMMAND_TOOL_CHAR_BUDGET,
    // No fixture's model reads the machine's own managed policy.
    managed: built.managed ?? `${built.base}/no-managed-policy`,
  };
  const doc = scanRoots({ project: built.root, global: built.configDir }, {
    global: true,
    loaded: true,
  }, createLoadingStep(options)).document;
  const model = loadingModel({
    project: built.root,
    global: built.configDir,
    includeGlobal: true,
    ...options,
  });
  return scannedSides(doc, model.builtinsCut);
}

export async function observed(
  claude: string,
  built: Built,
  env: Readonly<Record<string, string>> = {},
  hooks = false,
) {
  return (await observeFixture(claude, {
    root: built.root,
    home: built.home,
    configDir: built.configDir,
    pluginDirs: built.pluginDirs,
    env,
    hooks,
    ...(built.managedUpper === undefined ? {} : { managedOverlay: built.managedUpper }),
  })).request;
}

/** Run `tasks` two at a time (the machine is shared; one observation is ~1 s). */
export async function pooled<T>(tasks: (() => Promise<T>)[], width = 2): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const i = next++;
        results[i] = await tasks[i]();
      }
    }),
  );
  return results;
}

let baseline: Promise<Sides> | undefined;

/** What an empty fixture lists: Claude Code's built-in skills and agents. */
export function builtins(claude: string): Promise<Sides> {
  baseline ??= (async () => {
    const empty = build({ name: "empty", files: () => ({}) });
    const request = await observed(claude, empty);
    return observedSides(request, noSides());
  })();
  return baseline;
}

/** One plugin of an installed-plugins layout. */
export interface InstalledSpec {
  /** The plugin's name (its id is `name@marketplace`). */
  readonly name: string;
  /** Its files, relative to its folder. */
  readonly files: Files;
  /** Its `.claude-plugin/plugin.json` (default `{name, version}`; `false`: none). */
  readonly manifest?: Record<string, unknown> | false;
  /** Fields of its marketplace entry besides `name` and `source` (or `source` itself). */
  readonly entry?: Record<string, unknown>;
  /** The install record's `installPath` (default: the cache folder the layout writes). */
  readonly installPath?: string;
  /** Extra fields of the install record (`scope`, `projectPath`). */
  readonly record?: Record<string, unknown>;
  /** No install record at all. */
  readonly notInstalled?: boolean;
}

/**
 * The files Claude Code keeps for installed plugins (observed on 2.1.328 by running
 * `claude plugin marketplace add` and `claude plugin install` offline): the marketplace checkout
 * `cfg/plugins/marketplaces/<mk>/.claude-plugin/marketplace.json`, each plugin's copy in
 * `cfg/plugins/cache/<mk>/<name>/1.0.0/`, `cfg/plugins/installed_plugins.json` (version 2) and
 * `cfg/plugins/known_marketplaces.json`. A `directory` marketplace is a folder of the base
 * (`<mk>-src/`) holding the plugins' own folders; Claude Code reads plugins from there.
 */
export function installedLayout(
  base: string,
  marketplaces: Record<string, { plugins: InstalledSpec[]; source?: "github" | "directory" }>,
): Files {
  const files: Files = {};
  const records: Record<string, unknown[]> = {};
  const known: Record<string, unknown> = {};
  for (const [mk, { plugins, source = "github" }] of Object.entries(marketplaces)) {
    const location = source === "github" ? `cfg/plugins/marketplaces/${mk}` : `${mk}-src`;
    const entries = plugins.map((p) => ({
      name: p.name,
      source: `./plugins/${p.name}`,
      ...p.entry,
    }));
    files[`${location}/.claude-plugin/marketplace.json`] = JSON.stringify({
      name: mk,
      owner: { name: "ctxkit tests" },
      plugins: entries,
    });
    for (const p of plugins) {
      const dir = source === "github"
        ? `cfg/plugins/cache/${mk}/${p.name}/1.0.0`
        : `${location}/plugins/${p.name}`;
      if (p.manifest !== false) {
        files[`${dir}/.claude-plugin/plugin.json`] = JSON.stringify(
          p.manifest ?? { name: p.name, version: "1.0.0" },
        );
      }
      for (const [rel, text] of Object.entries(p.files)) files[`${dir}/${rel}`] = text;
      if (p.notInstalled) continue;
      records[`${p.name}@${mk}`] = [{
        scope: "user",
        installPath: p.installPath ?? `${base}/${dir}`,
        version: "1.0.0",
        installedAt: "2026-01-01T00:00:00.000Z",
        lastUpdated: "2026-01-01T00:00:00.000Z",
        ...p.record,
      }];
    }
    known[mk] = {
      source: source === "github"
        ? { source: "github", repo: `ctxkit-tests/${mk}` }
        : { source: "directory", path: `${base}/${location}` },
      installLocation: `${base}/${location}`,
      lastUpdated: "2026-01-01T00:00:00.000Z",
    };
  }
  files["cfg/plugins/installed_plugins.json"] = JSON.stringify({ version: 2, plugins: records });
  files["cfg/plugins/known_marketplaces.json"] = JSON.stringify(known);
  return files;
}

/** A settings file enabling `ids` (`true`) or naming them off (`false`). */
export function enabling(
  ids: Record<string, boolean>,
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({ enabledPlugins: ids, ...extra });
}
