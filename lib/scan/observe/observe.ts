/**
 * `context-scan --observe` as one call: find `claude`, copy what shapes loading into a private
 * config directory, run the observation in a fresh network namespace (or, where none can be made
 * and nothing in the settings could redirect the request, without one), and turn the request into
 * the document's `observed` object. The private directory is removed on every path, also when
 * context-scan is interrupted (SIGINT, SIGTERM). Contract: `references/context-scan.md#observe`.
 *
 * @module
 */

import { text } from "../../text.ts";
import { loadingModel } from "../claude_model.ts";
import type { ScanObserved } from "../schema.ts";
import { copyPlan, makePrivateConfig, redirectReasons, settingsFiles } from "./config.ts";
import { buildObserved } from "./observed.ts";
import { parseObservedRequest } from "./request.ts";
import {
  findOnPath,
  type Observation,
  ObserveError,
  observeHere,
  observeSandboxed,
} from "./run.ts";

/** What `--observe` was asked to do. */
export interface ObserveProjectOptions {
  /** The project root (absolute): `claude` runs there. */
  readonly root: string;
  /** The real global root (`CLAUDE_CONFIG_DIR`, else `$HOME/.claude`). */
  readonly global: string;
  /** `--claude PATH`, else `claude` on `PATH`. */
  readonly claude?: string;
  /** The deadline in milliseconds. */
  readonly timeoutMs: number;
  /** `--observe-unsandboxed`. */
  readonly unsandboxed: boolean;
  /** `--observe-hooks`. */
  readonly hooks: boolean;
  /** `--plugin-dir` values, as given. */
  readonly pluginDirs: readonly string[];
  /** The environment context-scan runs with. */
  readonly env: Readonly<Record<string, string>>;
  /** The logical cwd, against which relative paths are resolved. */
  readonly cwd: string;
  /** `--observe-tiers`: run the scripted session and report every tier. */
  readonly tiers?: boolean;
}

/** Text with the private copy's folder (as given and its real path) named as the real root. */
function copyToReal(copy: string, real: string): (text: string) => string {
  let resolved = copy;
  try {
    resolved = Deno.realPathSync(copy);
  } catch { /* gone already: the path as given */ }
  const prefixes = [...new Set([copy, resolved])];
  return (text) => prefixes.reduce((t, p) => t.replaceAll(p, real), text);
}

function absolute(path: string, cwd: string): string {
  return path.startsWith("/") ? path : `${cwd}/${path}`;
}

/** The `claude` to run: `--claude` resolved against the cwd, else the first on `PATH`. */
export function resolveClaude(
  given: string | undefined,
  env: Readonly<Record<string, string>>,
  cwd: string,
): string {
  if (given !== undefined) {
    // A bare name is looked up on PATH, as a shell would.
    if (!given.includes("/")) {
      const found = findOnPath(given, env.PATH);
      if (found === undefined) throw new ObserveError(text`claude not found on PATH: ${given}`);
      return absolute(found, cwd);
    }
    return absolute(given, cwd);
  }
  const found = findOnPath("claude", env.PATH);
  if (found === undefined) {
    throw new ObserveError(
      text`claude not found on PATH (install Claude Code or give --claude PATH)`,
    );
  }
  return absolute(found, cwd);
}

/** Why the settings could redirect the request: `<file> <reason>` per finding. */
export function redirectingSettings(root: string, global: string): string[] {
  return settingsFiles(root, global).flatMap((file) =>
    redirectReasons(file).map((reason) => `${file} ${reason}`)
  );
}

/** The temporary directory `Deno.makeTempDirSync` writes into: `TMPDIR`, else `/tmp`. */
export function tempRoot(env: Readonly<Record<string, string>>): string {
  return env.TMPDIR !== undefined && env.TMPDIR !== "" ? env.TMPDIR : "/tmp";
}

/**
 * Throw Deno's missing-permission error (the CLI's `❌ missing Deno permission: …` line, exit 2)
 * naming every grant `--observe` needs and lacks: running programs, serving on 127.0.0.1, writing
 * the private config copy under the temp directory.
 */
export function requireObservePermissions(env: Readonly<Record<string, string>>): void {
  const tmp = tempRoot(env);
  const missing: string[] = [];
  if (Deno.permissions.querySync({ name: "run" }).state !== "granted") {
    missing.push("run access (--allow-run)");
  }
  if (Deno.permissions.querySync({ name: "net", host: "127.0.0.1" }).state !== "granted") {
    missing.push("net access to 127.0.0.1 (--allow-net=127.0.0.1)");
  }
  if (Deno.permissions.querySync({ name: "write", path: tmp }).state !== "granted") {
    missing.push(`write access to ${tmp} (--allow-write=${tmp})`);
  }
  if (missing.length > 0) {
    throw new Deno.errors.NotCapable(`--observe requires ${missing.join(", ")}`);
  }
}

/**
 * Run one observation and build the `observed` object. Throws an {@linkcode ObserveError} (exit
 * 2, one line) when `claude` is missing, too old, fails, never posts, is interrupted, or must not
 * run unsandboxed.
 */
export async function observeProject(options: ObserveProjectOptions): Promise<ScanObserved> {
  requireObservePermissions(options.env);
  const claude = resolveClaude(options.claude, options.env, options.cwd);
  const pluginDirs = options.pluginDirs.map((d) => absolute(d, options.cwd));
  const model = loadingModel({
    project: options.root,
    global: options.global,
    includeGlobal: true,
    home: options.env.HOME,
    pluginDirs,
  });
  // A tier observation's script comes from the per-tier model (the real global root's files).
  const tiers = options.tiers
    ? await import("./tiers.ts").then((m) => {
      const places = {
        root: options.root,
        global: options.global,
        pluginDirs,
        home: options.env.HOME,
      };
      const tierModel = m.observedTierModel(places, model);
      return { module: m, model: tierModel, planned: m.tierPlan(tierModel) };
    })
    : undefined;
  const config = makePrivateConfig(options.global, copyPlan(options.root, options.global, model));
  const stop = new AbortController();
  const signals: Deno.Signal[] = Deno.build.os === "windows" ? [] : ["SIGINT", "SIGTERM"];
  const onSignal = () => stop.abort();
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  try {
    const run = {
      claude,
      cwd: options.root,
      pluginDirs,
      hooks: options.hooks,
      timeoutMs: options.timeoutMs,
      env: { ...options.env, CLAUDE_CONFIG_DIR: config.dir, TMPDIR: config.tmp },
      stop: stop.signal,
      ...(tiers === undefined ? {} : { plan: tiers.planned.plan }),
    };
    let seen: Observation | undefined;
    const unshare = options.unsandboxed ? undefined : findOnPath("unshare", options.env.PATH);
    try {
      if (unshare !== undefined) seen = await observeSandboxed(run, unshare);
      if (seen === undefined && !stop.signal.aborted) {
        if (!options.unsandboxed) {
          const why = redirectingSettings(options.root, options.global);
          if (why.length > 0) {
            throw new ObserveError(
              text`no network namespace can be made here and ${
                why[0]
              }: refusing to run claude unsandboxed (--observe-unsandboxed to run it anyway)`,
            );
          }
        }
        seen = { ...(await observeHere(run)), sandboxed: false };
      }
    } catch (e) {
      if (stop.signal.aborted) throw new ObserveError(text`interrupted: claude was stopped`);
      throw e;
    }
    if (stop.signal.aborted || seen === undefined) {
      throw new ObserveError(text`interrupted: claude was stopped`);
    }
    let body: unknown;
    try {
      body = JSON.parse(seen.body);
    } catch {
      throw new ObserveError(text`claude's request is not JSON`);
    }
    let request;
    try {
      request = parseObservedRequest(body);
    } catch {
      throw new ObserveError(text`claude's request is not a messages request`);
    }
    const observed = buildObserved(request, {
      version: seen.version,
      sandboxed: seen.sandboxed,
      warnings: config.warnings,
    }, {
      root: options.root,
      global: options.global,
      pluginDirs,
      realPath: config.realPath,
    });
    if (tiers === undefined) return observed;
    const session = seen.session ?? { main: [], subagents: [], requests: 1 };
    return {
      ...observed,
      tiers: tiers.module.observedTiers(
        tiers.planned,
        tiers.model,
        session,
        config.realPath,
        copyToReal(config.dir, options.global),
      ),
    };
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
    config.remove();
  }
}
