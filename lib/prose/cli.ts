/**
 * The `prose` command line (spec §1, §6): argument parsing, config handling (fail closed for
 * activations, built-in defaults for the rest) and the stable output lines. The state transitions
 * live in `ops.ts`; this module only decides what to print and which exit code to return.
 *
 * Backend delegation (§9) is reached through {@linkcode delegateToBackend}, the single hook point
 * the backend issue fills in.
 *
 * @module
 */

import { envValue } from "../paths.ts";
import { ArgCursor } from "../args.ts";
import { CtxkitError } from "../exit.ts";
import { writeErr, writeOut } from "../io.ts";
import { z } from "zod";
import { defaultConfig, loadConfig, loopbackOrigin, type ProseConfig } from "./config.ts";
import { type FlagRead, readProseFlag, reasonMessage } from "./flag_io.ts";
import { installHooks } from "./hooks.ts";
import {
  activate,
  type ActivateParams,
  consumeTurn,
  deactivate,
  endBlock,
  endSession,
  type OpResult,
  setLevel,
} from "./ops.ts";
import { type ProsePaths, ProseRootError, resolvePaths } from "./paths.ts";
import { renderValue, sanitize } from "./sanitize.ts";
import { LEVELS, type ProseLevel, type ProseSource, type ReasonCode, SOURCES } from "./schema.ts";
import { statusDocument, statusLine, statusSentence } from "./status.ts";
import { matchTrigger } from "./trigger.ts";
import { serveMain } from "./serve.ts";
import { runDelegation } from "./backend_client.ts";

/** The permission flags every documented invocation (and the git hook block) uses. */
export const RUN_PERMISSIONS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-net=127.0.0.1,localhost",
  "--allow-run=git",
] as const;

/** Largest `match` input read from stdin. */
export const MAX_MATCH_INPUT = 64 * 1024;

/** `--help` text. */
export const USAGE = `usage: prose [--local] <command> [options]

  prose                         activate with the config defaults (like \`on\`)
  prose on [N turns|turn|block|session|explicit] [--level minimal|full] [--for DUR]
           [--source manual|auto-clarity|config]
  prose off                     clear the flag
  prose level off|minimal|full  change only the level
  prose status [--json]         report the flag
  prose consume                 count one response against a turn flag
  prose block-end               end a block flag (git post-commit / pre-push)
  prose session-end             end session and turn flags
  prose match [--text S | --hook-input] [--activate]
  prose install-hooks [--repo P] [--dry-run] [--remove]
  prose sync                    re-mirror through the backend
  prose serve [--port N] [--db PATH]

DUR: 90s, 15m, 12h, 7d (1s to 30d). State: $CELLM_DIR or $HOME/.cellm (prose/.active).
--local skips the backend (CELLM_WORKER_URL / backend.url).`;

/** What the bin passes in: the absolute path of the running script and the clock. */
export interface CliEnvironment {
  /** Absolute path of `bin/prose.ts` or of the bundle (used by `install-hooks`). */
  scriptPath: string;
  /** Epoch-ms "now"; the bin honours `CTXKIT_NOW_MS` (tests only) before `Date.now()`. */
  now: number;
}

/** The stderr line for a missing Deno permission (`runMain`'s `permissionLine`). */
export function permissionLine(detail: string): string {
  return `PROSE-ERROR: code=permission ${sanitize(detail)}`;
}

/** The stderr line for an unexpected error (`runMain`'s `internalLine`); never a stack trace. */
export function internalLine(detail: string): string {
  return `PROSE-ERROR: code=internal ${sanitize(detail)}`;
}

function usageError(text: string, field?: string): never {
  const f = field === undefined ? "" : ` field=${renderValue(field)}`;
  throw new CtxkitError(2, `PROSE-ERROR: code=usage${f} ${sanitize(text)}`);
}

// ---------------------------------------------------------------------------------------------
// Backend delegation hook point (spec §9). Filled in by the backend issue.
// ---------------------------------------------------------------------------------------------

/** A command the CLI may delegate to the backend, in the toggle/status wire form. */
export type DelegatedCommand =
  | ({ action: "on" } & ActivateParams)
  | { action: "off" }
  | { action: "level"; level: ProseLevel }
  | { action: "sync" }
  | { action: "status"; json: boolean };

/** What {@linkcode delegateToBackend} needs to act and to fall back. */
export interface DelegationContext {
  /** The loopback backend origin (validated). */
  url: string;
  /** The resolved paths. */
  paths: ProsePaths;
  /** The config in effect (built-in defaults when the file is invalid). */
  config: ProseConfig;
  /** The clock. */
  now: number;
}

/**
 * BACKEND HOOK POINT: run `command` through the backend at `ctx.url`.
 *
 * Returns the exit code when the backend handled the command (including rejections), or `null`
 * to make the CLI act on the flag file (after printing the `via=filesystem backend=unreachable`
 * line and warning, on fallback). `sync` never returns `null`: it has nothing to do locally.
 */
export function delegateToBackend(
  command: DelegatedCommand,
  ctx: DelegationContext,
): Promise<number | null> {
  return runDelegation(command, ctx.url);
}

// ---------------------------------------------------------------------------------------------

/** Options the CLI recognises: value options take the next argument verbatim. */
const VALUE_OPTIONS = new Set(["--level", "--for", "--source", "--text", "--repo"]);
const FLAG_OPTIONS = new Set([
  "--json",
  "--hook-input",
  "--activate",
  "--dry-run",
  "--remove",
  "--local",
]);

/** The options each command accepts (besides `--local` and `--help`). */
const ALLOWED: Record<string, readonly string[]> = {
  on: ["--level", "--for", "--source"],
  off: [],
  level: [],
  status: ["--json"],
  consume: [],
  "block-end": [],
  "session-end": [],
  match: ["--text", "--hook-input", "--activate"],
  "install-hooks": ["--repo", "--dry-run", "--remove"],
  sync: [],
};

interface ParsedArgs {
  command: string;
  positionals: string[];
  values: Map<string, string>;
  flags: Set<string>;
  help: boolean;
}

function parseArgs(args: readonly string[]): ParsedArgs {
  const cursor = new ArgCursor(args);
  let command: string | undefined;
  const positionals: string[] = [];
  const values = new Map<string, string>();
  const flags = new Set<string>();
  let help = false;
  while (!cursor.done) {
    let arg = cursor.next();
    let inline: string | undefined;
    const eq = arg.indexOf("=");
    if (arg.startsWith("--") && eq > 2) {
      inline = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    if (arg === "--help" || arg === "-h") help = true;
    else if (VALUE_OPTIONS.has(arg)) {
      const value = inline ?? cursor.value();
      if (value === undefined) usageError(`${arg} needs a value`);
      if (values.has(arg)) usageError(`${arg} given twice`);
      values.set(arg, value);
    } else if (FLAG_OPTIONS.has(arg) && inline === undefined) flags.add(arg);
    else if (arg.startsWith("-") && arg !== "-") usageError(`unknown option ${arg}`);
    else if (command === undefined) command = arg;
    else positionals.push(arg);
  }
  command ??= "on";
  const allowed = ALLOWED[command];
  if (allowed === undefined && !help) usageError(`unknown command ${command}; see prose --help`);
  for (const opt of [...values.keys(), ...flags]) {
    if (opt !== "--local" && allowed !== undefined && !allowed.includes(opt)) {
      usageError(`${opt} does not apply to ${command}`);
    }
  }
  return { command, positionals, values, flags, help };
}

/** Parse the positional TTL of `on`: `N turns`, `N turn`, `turn`, `block`, `session`, `explicit`. */
export function parseOnTtl(words: readonly string[]): ActivateParams["ttl"] {
  if (words.length === 0) return undefined;
  if (words.length === 1 && ["turn", "block", "session", "explicit"].includes(words[0])) {
    return { unit: words[0] as "turn" | "block" | "session" | "explicit" };
  }
  if (words.length === 2 && (words[1] === "turns" || words[1] === "turn")) {
    if (!/^[0-9]{1,7}$/.test(words[0])) {
      usageError("N in `on N turns` must be 1 to 1000", "ttl.value");
    }
    return { unit: "turn", value: Number(words[0]) };
  }
  return usageError(
    `unknown TTL ${words.join(" ")}; use N turns, turn, block, session or explicit`,
    "ttl",
  );
}

function paths(): ProsePaths {
  try {
    return resolvePaths();
  } catch (e) {
    if (e instanceof ProseRootError) {
      throw new CtxkitError(
        2,
        `PROSE-ERROR: code=env field=${e.field} ${sanitize(e.message)}`,
      );
    }
    throw e;
  }
}

/** Config for commands that stop on an invalid config (`on`, bare `prose`, `match`). */
function requiredConfig(p: ProsePaths): ProseConfig {
  const r = loadConfig({ root: p.root });
  if (!r.ok) {
    throw new CtxkitError(
      2,
      `PROSE-ERROR: code=config field=${renderValue(r.field)} ${r.message}`,
    );
  }
  return r.config;
}

/** Config for the other commands: built-in defaults (and a warning) when it is invalid. */
function lenientConfig(p: ProsePaths): { config: ProseConfig; valid: boolean } {
  const r = loadConfig({ root: p.root });
  if (r.ok) return { config: r.config, valid: true };
  writeErr(
    `PROSE-WARN: code=config field=${
      renderValue(r.field)
    } ${r.message}; using built-in defaults and the backend URL from the environment only`,
  );
  return { config: defaultConfig(), valid: false };
}

/** The backend origin, or `null` (none configured, or `--local`). Dies 2 on a non-loopback URL. */
function backendUrl(config: ProseConfig, configValid: boolean, local: boolean): string | null {
  if (local) return null;
  const fromEnv = envValue("CELLM_WORKER_URL");
  if (fromEnv !== undefined) {
    const origin = loopbackOrigin(fromEnv);
    if (origin === null) {
      throw new CtxkitError(
        2,
        `PROSE-ERROR: code=env field=CELLM_WORKER_URL ${
          sanitize(fromEnv)
        }: must be http:// on 127.0.0.1, localhost or [::1], without a path`,
      );
    }
    return origin;
  }
  if (!configValid || config.backend.url === null) return null;
  return loopbackOrigin(config.backend.url);
}

function errorText(result: OpResult, read: FlagRead): string {
  if (result.message !== undefined) return result.message;
  if (result.reason === "auto-clarity-disabled") {
    return "auto-clarity activations are disabled (autoClarity.enabled in config.json)";
  }
  return reasonMessage((result.reason ?? "io-error") as ReasonCode, read.path);
}

/** Print a mutating command's two lines (and its stderr lines); return its exit code. */
function report(action: string, result: OpResult, root: string, now: number): number {
  const parts = [`action=${action}`, `result=${result.result}`];
  if (result.reason !== undefined && result.result !== "usage") {
    parts.push(`reason=${renderValue(result.reason)}`);
  }
  if (result.remaining !== undefined) parts.push(`remaining=${result.remaining}`);
  if (result.result === "usage") {
    usageError(result.message ?? "bad activation", result.field);
  }
  if (result.reason === "config" && !result.ok) {
    throw new CtxkitError(
      2,
      `PROSE-ERROR: code=config field=${renderValue(result.field ?? "(file)")} ${
        result.message ?? ""
      }`,
    );
  }
  const read = readProseFlag({ root, now });
  writeOut(`PROSE: ${parts.join(" ")}`, statusLine(read));
  if (result.warning !== undefined) writeErr(`PROSE-WARN: ${sanitize(result.warning)}`);
  if (!result.ok) {
    writeErr(
      `PROSE-ERROR: code=${renderValue(result.reason ?? "io-error")} ${errorText(result, read)}`,
    );
    return 1;
  }
  return 0;
}

async function runActivate(
  params: ActivateParams,
  p: ProsePaths,
  config: ProseConfig,
  url: string | null,
  env: CliEnvironment,
): Promise<number> {
  if (url !== null) {
    const rc = await delegateToBackend(
      { action: "on", ...params },
      { url, paths: p, config, now: env.now },
    );
    if (rc !== null) return rc;
  }
  const result = activate(params, { root: p.root, now: env.now, config });
  return report("on", result, p.root, env.now);
}

function onParams(a: ParsedArgs): ActivateParams {
  const params: ActivateParams = { ttl: parseOnTtl(a.positionals) };
  const level = a.values.get("--level");
  if (level !== undefined) {
    if (level !== "minimal" && level !== "full") {
      usageError("--level must be minimal or full", "level");
    }
    params.level = level;
  }
  const source = a.values.get("--source");
  if (source !== undefined) {
    if (!(SOURCES as readonly string[]).includes(source)) {
      usageError("--source must be manual, auto-clarity or config", "source");
    }
    params.source = source as ProseSource;
  }
  const dur = a.values.get("--for");
  if (dur !== undefined) params.for = dur;
  if (params.ttl === undefined) delete params.ttl;
  return params;
}

const HookInputSchema = z.looseObject({ prompt: z.string() });

function readStdin(limit: number): { bytes: Uint8Array; truncated: boolean } {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const buf = new Uint8Array(16 * 1024);
  while (total <= limit) {
    let n: number | null;
    try {
      n = Deno.stdin.readSync(buf);
    } catch (e) {
      if ((e as { code?: string }).code === "EAGAIN") continue;
      throw e;
    }
    if (n === null || n === 0) break;
    chunks.push(buf.slice(0, n));
    total += n;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return total > limit
    ? { bytes: all.slice(0, limit), truncated: true }
    : { bytes: all, truncated: false };
}

async function matchCommand(
  a: ParsedArgs,
  p: ProsePaths,
  env: CliEnvironment,
  local: boolean,
): Promise<number> {
  if (a.positionals.length > 0) usageError("match takes no operands; use --text");
  const text = a.values.get("--text");
  const hook = a.flags.has("--hook-input");
  if (text !== undefined && hook) usageError("--text and --hook-input exclude each other");
  const config = requiredConfig(p);
  const url = a.flags.has("--activate") ? backendUrl(config, true, local) : null;
  let input: string;
  if (text !== undefined) input = text;
  else {
    const { bytes, truncated } = readStdin(MAX_MATCH_INPUT);
    if (hook) {
      if (truncated) {
        writeOut("PROSE: match=no reason=input-too-large");
        return 1;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        return usageError("--hook-input: stdin is not JSON", "prompt");
      }
      const hookInput = HookInputSchema.safeParse(parsed);
      if (!hookInput.success) usageError("--hook-input: no string prompt field", "prompt");
      input = hookInput.data.prompt;
    } else {
      // A truncated UTF-8 tail decodes to U+FFFD, which never forms a token.
      input = new TextDecoder().decode(bytes);
    }
  }
  const m = matchTrigger(input, config);
  if (!m.enabled) {
    writeOut("PROSE: match=no reason=trigger-disabled");
    return 1;
  }
  if (!m.matched) {
    writeOut("PROSE: match=no");
    return 1;
  }
  writeOut(`PROSE: match=yes token=${renderValue(m.token ?? "", 40)}`);
  if (!a.flags.has("--activate")) return 0;
  return await runActivate({ source: "config" }, p, config, url, env);
}

async function statusCommand(
  a: ParsedArgs,
  p: ProsePaths,
  env: CliEnvironment,
  local: boolean,
): Promise<number> {
  if (a.positionals.length > 0) usageError("status takes no operands");
  const { config, valid } = lenientConfig(p);
  const url = backendUrl(config, valid, local);
  const json = a.flags.has("--json");
  if (url !== null) {
    const rc = await delegateToBackend(
      { action: "status", json },
      { url, paths: p, config, now: env.now },
    );
    if (rc !== null) return rc;
  }
  const read = readProseFlag({ root: p.root, now: env.now });
  if (json) writeOut(JSON.stringify(statusDocument(read, "filesystem", env.now)));
  else writeOut(statusLine(read), statusSentence(read));
  if (read.state === "invalid" || read.state === "unsafe") {
    writeErr(
      `PROSE-ERROR: code=${read.reason} ${reasonMessage(read.reason ?? "io-error", read.path)}`,
    );
    return 1;
  }
  return 0;
}

function noOperands(a: ParsedArgs): void {
  if (a.positionals.length > 0) usageError(`${a.command} takes no operands`);
}

function consumeCommand(p: ProsePaths, env: CliEnvironment): number {
  const r = consumeTurn({ root: p.root, now: env.now });
  const result: OpResult = r.ok
    ? {
      ok: true,
      result: r.outcome,
      ...(r.outcome === "decremented" || r.outcome === "cleared"
        ? { remaining: r.remaining ?? 0 }
        : {}),
    }
    : r.reason === "conflict"
    ? { ok: false, result: "conflict", reason: "conflict", message: r.message }
    : { ok: false, result: "refused", reason: r.reason };
  return report("consume", result, p.root, env.now);
}

/**
 * Run the `prose` CLI with `args`; returns the exit code (or throws a `CtxkitError`).
 *
 * @example
 * ```ts ignore
 * import { proseMain } from "./cli.ts";
 * const rc = await proseMain(["status"], { scriptPath: "/abs/bin/prose.ts", now: Date.now() });
 * ```
 */
export async function proseMain(args: readonly string[], env: CliEnvironment): Promise<number> {
  const first = args.findIndex((arg) => !arg.startsWith("-"));
  if (first >= 0 && args[first] === "serve" && args.slice(0, first).every((x) => x === "--local")) {
    return await serveMain(args.slice(first + 1));
  }
  const a = parseArgs(args);
  if (a.help) {
    writeOut(USAGE);
    return 0;
  }
  const local = a.flags.has("--local");
  if (a.command === "install-hooks") {
    noOperands(a);
    const script = env.scriptPath;
    const configFlag = script.endsWith(".ts")
      ? ["--config", script.replace(/\/bin\/[^/]+$/, "/deno.json")]
      : ["--no-config"];
    const r = installHooks({
      repo: a.values.get("--repo") ?? Deno.cwd(),
      dryRun: a.flags.has("--dry-run"),
      remove: a.flags.has("--remove"),
      command: [Deno.execPath(), "run", ...RUN_PERMISSIONS, ...configFlag, script, "block-end"],
    });
    writeOut(...r.lines);
    writeErr(...r.errors);
    return r.code;
  }
  const p = paths();
  switch (a.command) {
    case "on": {
      const params = onParams(a);
      const config = requiredConfig(p);
      return await runActivate(params, p, config, backendUrl(config, true, local), env);
    }
    case "off": {
      noOperands(a);
      const { config, valid } = lenientConfig(p);
      const url = backendUrl(config, valid, local);
      if (url !== null) {
        const rc = await delegateToBackend({ action: "off" }, {
          url,
          paths: p,
          config,
          now: env.now,
        });
        if (rc !== null) return rc;
      }
      return report("off", deactivate({ root: p.root, now: env.now }), p.root, env.now);
    }
    case "level": {
      if (a.positionals.length !== 1) usageError("usage: prose level off|minimal|full", "level");
      const level = a.positionals[0];
      if (!(LEVELS as readonly string[]).includes(level)) {
        usageError("level must be off, minimal or full", "level");
      }
      const { config, valid } = lenientConfig(p);
      const url = backendUrl(config, valid, local);
      if (url !== null) {
        const rc = await delegateToBackend(
          { action: "level", level: level as ProseLevel },
          { url, paths: p, config, now: env.now },
        );
        if (rc !== null) return rc;
      }
      const result = setLevel(level as ProseLevel, { root: p.root, now: env.now, config });
      return report("level", result, p.root, env.now);
    }
    case "status":
      return await statusCommand(a, p, env, local);
    case "consume":
      noOperands(a);
      return consumeCommand(p, env);
    case "block-end":
      noOperands(a);
      return report("block-end", endBlock({ root: p.root, now: env.now }), p.root, env.now);
    case "session-end":
      noOperands(a);
      return report("session-end", endSession({ root: p.root, now: env.now }), p.root, env.now);
    case "match":
      return await matchCommand(a, p, env, local);
    case "sync": {
      noOperands(a);
      const { config, valid } = lenientConfig(p);
      const url = backendUrl(config, valid, local);
      if (url !== null) {
        const rc = await delegateToBackend({ action: "sync" }, {
          url,
          paths: p,
          config,
          now: env.now,
        });
        if (rc !== null) return rc;
      }
      writeOut("PROSE: action=sync result=refused reason=no-backend");
      writeErr(
        "PROSE-ERROR: code=no-backend sync needs a backend (CELLM_WORKER_URL or backend.url, without --local)",
      );
      return 1;
    }
  }
  return usageError(`unknown command ${a.command}`);
}
