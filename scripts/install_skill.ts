/**
 * `npx deno task install-skill <plugin-dir>`: install ctxkit into a Claude Code plugin's skills in
 * one command (`references/migration.md#installing-ctxkit-in-one-command`).
 *
 * For every skill folder that holds (or whose Markdown calls) `scripts/<tool>.sh` of context-scan,
 * context-guard, text-guard or prose, it writes the bundle `scripts/<tool>.js` (mode 0755, ctxkit's
 * version on its second line) and replaces the bash script with a wrapper `scripts/<tool>.sh` that
 * finds a runtime (`scripts/_install_wrapper.ts`). A skill that never checkpoints its writes gets
 * snapshot-trust guards (`references/context-guard.md#snapshot-trust`). For prose it also writes
 * the `/prose` command file and adds its hooks to the plugin's `hooks/hooks.json`.
 *
 *   deno task install-skill <plugin-dir> [--prose] [--trust auto|snapshot|ownership]
 *                                        [--bundles DIR] [--binaries DIR] [--dry-run]
 *
 * @module
 */

import { join, relative } from "node:path";
import * as z from "zod/mini";
import { writeFileAtomic } from "../lib/_fs/write.ts";
import { bundleTool } from "./_bundle_file.ts";
import { mergedHooksJson, proseCommandFile } from "./_install_prose.ts";
import { type InstallPlan, planInstall, type PluginFiles } from "./_install_plan.ts";
import { shebangFlags, WRAPPER_MARK, wrapperScript } from "./_install_wrapper.ts";
import type { Tool } from "./tools.ts";

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** How a skill's guards take their runs: from its Markdown, or as told. */
export type TrustChoice = "auto" | "snapshot" | "ownership";

/** Inputs of {@linkcode installSkill}. */
export interface InstallOptions {
  /** The plugin folder (holding `skills/`). */
  plugin: string;
  /** Install prose even when no skill calls `prose.sh`. */
  prose?: boolean;
  /** `auto` (default): snapshot-trust for a skill that never runs `checkpoint`. */
  trust?: TrustChoice;
  /** A folder holding `<tool>.js` bundles to install (default: bundled from this checkout). */
  bundles?: string;
  /** A folder holding compiled binaries `<tool>`, copied beside the wrappers when present. */
  binaries?: string;
  /** Print what would be written; write nothing. */
  dryRun?: boolean;
  /** Where lines go (default: stdout). */
  print?: (line: string) => void;
}

const VersionSchema = z.looseObject({ version: z.string() });
const PackageSchema = z.looseObject({
  devDependencies: z.looseObject({ deno: z.string() }),
});

function readJson<T>(path: string, schema: z.ZodMiniType<T>): T {
  return schema.parse(JSON.parse(Deno.readTextFileSync(path)));
}

/** Markdown files and skill folders of `plugin`, the planner's input. */
export function readPlugin(plugin: string): PluginFiles {
  const skills = new Map<string, string[]>();
  const skillsDir = join(plugin, "skills");
  for (const entry of Deno.readDirSync(skillsDir)) {
    if (!entry.isDirectory) continue;
    let scripts: string[] = [];
    try {
      scripts = [...Deno.readDirSync(join(skillsDir, entry.name, "scripts"))]
        .filter((e) => e.isFile).map((e) => e.name);
    } catch { /* no scripts/ yet */ }
    skills.set(entry.name, scripts);
  }
  const markdown: { path: string; text: string }[] = [];
  const walk = (dir: string, depth: number) => {
    if (depth > 8) return;
    for (const entry of Deno.readDirSync(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && !["node_modules", ".git"].includes(entry.name)) {
        walk(path, depth + 1);
      } else if (entry.isFile && entry.name.endsWith(".md")) {
        markdown.push({ path: relative(plugin, path), text: Deno.readTextFileSync(path) });
      }
    }
  };
  walk(plugin, 0);
  return { skills, markdown };
}

/** `bundle` with ctxkit's version recorded on its second line. */
export function versionedBundle(bundle: string, tool: Tool, version: string): string {
  const nl = bundle.indexOf("\n");
  const mark = `// ctxkit ${version} ${tool} (installed by deno task install-skill)`;
  if (bundle.slice(nl + 1).startsWith("// ctxkit ")) return bundle;
  return `${bundle.slice(0, nl + 1)}${mark}\n${bundle.slice(nl + 1)}`;
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The bundles to install: from `--bundles`, else built from this checkout into a temp dir. */
function bundlesFor(tools: ReadonlySet<Tool>, from: string | undefined): string {
  if (from !== undefined) return from;
  const dir = Deno.makeTempDirSync({ prefix: "ctxkit-install-" });
  for (const tool of tools) bundleTool(REPO, tool, join(dir, `${tool}.js`));
  return dir;
}

/**
 * Install ctxkit into the plugin: returns the plan it followed. Every file is written atomically,
 * never through a link; a `commands/prose.md` that is not the installer's is left alone (said so).
 */
export function installSkill(options: InstallOptions): InstallPlan {
  const print = options.print ?? ((line: string) => console.log(line));
  const plugin = options.plugin.replace(/\/+$/, "") || "/";
  if (!exists(join(plugin, "skills"))) {
    throw new Error(`${plugin} has no skills/ folder: not a Claude Code plugin`);
  }
  const plan = planInstall(readPlugin(plugin), { prose: options.prose });
  const version = readJson(join(REPO, "deno.json"), VersionSchema).version;
  const denoVersion = readJson(join(REPO, "package.json"), PackageSchema).devDependencies.deno;
  const needed = new Set(plan.skills.flatMap((s) => s.tools));
  const bundles = options.dryRun ? "" : bundlesFor(needed, options.bundles);
  const trust = options.trust ?? "auto";
  const write = (path: string, content: string | Uint8Array, what: string, mode = 0o644) => {
    print(`${options.dryRun ? "WOULD WRITE" : "WROTE"}: ${relative(plugin, path)} (${what})`);
    if (options.dryRun) return;
    Deno.mkdirSync(join(path, ".."), { recursive: true });
    writeFileAtomic(path, content, { mode, exactMode: true });
  };
  for (const skill of plan.skills) {
    const snapshotTrust = trust === "snapshot" || (trust === "auto" && !skill.checkpoints);
    const guards = skill.tools.some((t) => t === "context-guard" || t === "text-guard");
    print(
      `SKILL: ${skill.name} (${skill.checkpoints ? "checkpoints its writes" : "never checkpoints"}${
        guards ? `; guard runs: ${snapshotTrust ? "snapshot-trust" : "draft ownership"}` : ""
      })`,
    );
    const scripts = join(plugin, "skills", skill.name, "scripts");
    for (const tool of skill.tools) {
      const bundlePath = join(scripts, `${tool}.js`);
      const bundle = options.dryRun ? "" : Deno.readTextFileSync(join(bundles, `${tool}.js`));
      write(bundlePath, versionedBundle(bundle, tool, version), `bundle, ctxkit ${version}`, 0o755);
      const script = join(scripts, `${tool}.sh`);
      const replaced = exists(script) && !Deno.readTextFileSync(script).includes(WRAPPER_MARK);
      write(
        script,
        wrapperScript({
          tool,
          version,
          denoVersion,
          flags: options.dryRun ? [] : shebangFlags(bundle),
          snapshotTrust,
        }),
        replaced ? "wrapper, replacing the bash script" : "wrapper",
        0o755,
      );
      const binary = options.binaries === undefined ? undefined : join(options.binaries, tool);
      if (binary !== undefined && exists(binary)) {
        write(join(scripts, tool), Deno.readFileSync(binary), "compiled binary", 0o755);
      }
    }
  }
  if (plan.proseSkill !== undefined) {
    const command = join(plugin, "commands", "prose.md");
    const text = proseCommandFile(plan.proseSkill);
    const mine = !exists(command) || Deno.readTextFileSync(command) === text;
    if (mine) write(command, text, "the /prose command");
    else {print(
        `KEPT: ${relative(plugin, command)} (not the installer's; it must call the wrapper)`,
      );}
    const hooks = join(plugin, "hooks", "hooks.json");
    const existing = exists(hooks) ? Deno.readTextFileSync(hooks) : undefined;
    write(hooks, mergedHooksJson(existing, plan.proseSkill), "prose's hooks added");
  }
  print(
    `USERS NEED: sh, and one of: Deno 2 on PATH, Node.js with npm (npx runs deno@${denoVersion}; ` +
      "its first run downloads it), or the compiled binaries beside the wrappers",
  );
  return plan;
}

/**
 * The plugin folder named on the command line, absolute: `deno task` runs in ctxkit's folder, so
 * a relative one is taken from where the task was started (`INIT_CWD`).
 */
function pluginPath(arg: string): string {
  const base = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  try {
    return Deno.realPathSync(arg.startsWith("/") ? arg : join(base, arg));
  } catch {
    return usage(`no such plugin folder: ${arg}`);
  }
}

function usage(message: string): never {
  console.error(`❌ ${message}`);
  console.error(
    "usage: deno task install-skill <plugin-dir> [--prose] [--trust auto|snapshot|ownership] " +
      "[--bundles DIR] [--binaries DIR] [--dry-run]",
  );
  console.error("❌ FAILED EXIT:2");
  Deno.exit(2);
}

if (import.meta.main) {
  const options: Partial<InstallOptions> = {};
  const args = [...Deno.args];
  while (args.length > 0) {
    const arg = args.shift()!;
    const [name, inline] = arg.startsWith("--") && arg.includes("=")
      ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)]
      : [arg, undefined];
    const value = () => inline ?? args.shift() ?? usage(`${name} needs a value`);
    if (name === "--prose") options.prose = true;
    else if (name === "--dry-run") options.dryRun = true;
    else if (name === "--bundles") options.bundles = value();
    else if (name === "--binaries") options.binaries = value();
    else if (name === "--trust") {
      const v = value();
      if (v !== "auto" && v !== "snapshot" && v !== "ownership") usage(`unknown --trust: ${v}`);
      options.trust = v;
    } else if (name.startsWith("-")) usage(`unknown option: ${arg}`);
    else if (options.plugin === undefined) options.plugin = pluginPath(arg);
    else usage(`one plugin folder at a time: ${arg}`);
  }
  if (options.plugin === undefined) usage("install-skill needs the plugin folder");
  try {
    installSkill(options as InstallOptions);
  } catch (e) {
    console.error(`❌ ${e instanceof Error ? e.message : String(e)}`);
    console.error("❌ FAILED EXIT:1");
    Deno.exit(1);
  }
  console.error("✅ EXIT:0");
}
