/**
 * The `prose` command line, parsed (`references/prose.md#cli`): every usage error is found here,
 * before anything is read or written, and each command comes out typed.
 *
 * @module
 */

import { type Text, text, verbatim } from "../text.ts";
import { ArgCursor } from "../_cli/args.ts";
import { ProseError } from "./errors.ts";
import type { ActivateParams } from "./ops.ts";
import { renderValue } from "./sanitize.ts";
import { LEVELS, type ProseLevel, type ProseSource, SOURCES } from "./schema.ts";

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

/** The usage text of `prose serve`. */
export const SERVE_USAGE = "usage: prose serve [--port N] [--db PATH]";

/** A parsed command line: the command and whether `--local` skips the backend. */
export type Invocation =
  | { command: "help"; text: string }
  | { command: "on"; local: boolean; params: ActivateParams }
  | { command: "off" | "sync" | "consume" | "block-end" | "session-end"; local: boolean }
  | { command: "level"; local: boolean; level: ProseLevel }
  | { command: "status"; local: boolean; json: boolean }
  | {
    command: "match";
    local: boolean;
    text: string | undefined;
    hookInput: boolean;
    activate: boolean;
  }
  | { command: "install-hooks"; repo: string | undefined; dryRun: boolean; remove: boolean }
  | { command: "serve"; port: string | undefined; db: string | undefined };

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

function usage(message: Text, field?: string): never {
  throw new ProseError("usage", message, field === undefined ? {} : { field });
}

/** The words of a command line: the command, its operands, its options. */
interface Words {
  command: string;
  operands: string[];
  values: Map<string, string>;
  flags: Set<string>;
  help: boolean;
}

function serveArgs(cursor: ArgCursor): Invocation {
  const serveUsage = (message: Text): never => {
    throw new ProseError("usage", message, { synopsis: SERVE_USAGE });
  };
  let port: string | undefined;
  let db: string | undefined;
  while (!cursor.done) {
    const arg = cursor.next();
    if (!cursor.operand && (arg === "--help" || arg === "-h")) {
      return { command: "help", text: SERVE_USAGE };
    }
    if (!cursor.operand && (arg === "--port" || arg === "--db")) {
      const value = cursor.value();
      if (value === undefined || value === "") serveUsage(text`${verbatim(arg)} needs a value`);
      if (arg === "--port") port = value;
      else db = value;
      continue;
    }
    serveUsage(text`unexpected argument ${verbatim(renderValue(arg, 40))}`);
  }
  return { command: "serve", port, db };
}

/** Split the words; `serve` after nothing but `--local` hands the rest to its own grammar. */
function words(args: readonly string[]): Words | Invocation {
  const cursor = new ArgCursor(args);
  let command: string | undefined;
  const operands: string[] = [];
  const values = new Map<string, string>();
  const flags = new Set<string>();
  let help = false;
  let onlyLocal = true;
  while (!cursor.done) {
    let arg = cursor.next();
    if (cursor.operand || arg === "-" || !arg.startsWith("-")) {
      if (command === undefined && arg === "serve" && onlyLocal) return serveArgs(cursor);
      if (command === undefined) command = arg;
      else operands.push(arg);
      continue;
    }
    onlyLocal &&= arg === "--local";
    let inline: string | undefined;
    const eq = arg.indexOf("=");
    if (arg.startsWith("--") && eq > 2) {
      inline = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    if (arg === "--help" || arg === "-h") help = true;
    else if (VALUE_OPTIONS.has(arg)) {
      const value = inline ?? cursor.value();
      if (value === undefined) usage(text`${arg} needs a value`);
      if (values.has(arg)) usage(text`${arg} given twice`);
      values.set(arg, value);
    } else if (FLAG_OPTIONS.has(arg) && inline === undefined) flags.add(arg);
    else usage(text`unknown option ${arg}`);
  }
  return { command: command ?? "on", operands, values, flags, help };
}

/**
 * Parse the positional TTL of `on`: `N turns`, `N turn`, `turn`, `block`, `session`, `explicit`.
 */
export function parseOnTtl(operands: readonly string[]): ActivateParams["ttl"] {
  if (operands.length === 0) return undefined;
  if (operands.length === 1 && ["turn", "block", "session", "explicit"].includes(operands[0])) {
    return { unit: operands[0] as "turn" | "block" | "session" | "explicit" };
  }
  if (operands.length === 2 && (operands[1] === "turns" || operands[1] === "turn")) {
    if (!/^[0-9]{1,7}$/.test(operands[0])) {
      usage(text`N in \`on N turns\` must be 1 to 1000`, "ttl.value");
    }
    return { unit: "turn", value: Number(operands[0]) };
  }
  return usage(
    text`unknown TTL ${operands.join(" ")}; use N turns, turn, block, session or explicit`,
    "ttl",
  );
}

function onParams(w: Words): ActivateParams {
  const params: ActivateParams = {};
  const ttl = parseOnTtl(w.operands);
  if (ttl !== undefined) params.ttl = ttl;
  const level = w.values.get("--level");
  if (level !== undefined) {
    if (level !== "minimal" && level !== "full") {
      usage(text`--level must be minimal or full`, "level");
    }
    params.level = level;
  }
  const source = w.values.get("--source");
  if (source !== undefined) {
    if (!(SOURCES as readonly string[]).includes(source)) {
      usage(text`--source must be manual, auto-clarity or config`, "source");
    }
    params.source = source as ProseSource;
  }
  const duration = w.values.get("--for");
  if (duration !== undefined) params.for = duration;
  return params;
}

/**
 * Parse a `prose` command line into one typed command. Throws a usage {@linkcode ProseError} for
 * an unknown command or option, an option that does not apply, a missing value or bad operands;
 * `--help` anywhere (after a clean parse of the options) gives the usage text.
 */
export function parseCommandLine(args: readonly string[]): Invocation {
  const w = words(args);
  if (!("operands" in w)) return w;
  const allowed = ALLOWED[w.command];
  if (allowed === undefined && !w.help) {
    usage(text`unknown command ${w.command}; see prose --help`);
  }
  for (const opt of [...w.values.keys(), ...w.flags]) {
    if (opt !== "--local" && allowed !== undefined && !allowed.includes(opt)) {
      usage(text`${opt} does not apply to ${w.command}`);
    }
  }
  if (w.help) return { command: "help", text: USAGE };
  const local = w.flags.has("--local");
  const noOperands = (message: Text = text`${w.command} takes no operands`): void => {
    if (w.operands.length > 0) usage(message);
  };
  switch (w.command) {
    case "on":
      return { command: "on", local, params: onParams(w) };
    case "level": {
      const [level] = w.operands;
      if (w.operands.length !== 1) usage(text`usage: prose level off|minimal|full`, "level");
      if (!(LEVELS as readonly string[]).includes(level)) {
        usage(text`level must be off, minimal or full`, "level");
      }
      return { command: "level", local, level: level as ProseLevel };
    }
    case "status":
      noOperands();
      return { command: "status", local, json: w.flags.has("--json") };
    case "match": {
      noOperands(text`match takes no operands; use --text`);
      const matchText = w.values.get("--text");
      const hookInput = w.flags.has("--hook-input");
      if (matchText !== undefined && hookInput) {
        usage(text`--text and --hook-input exclude each other`);
      }
      return {
        command: "match",
        local,
        text: matchText,
        hookInput,
        activate: w.flags.has("--activate"),
      };
    }
    case "install-hooks":
      noOperands();
      return {
        command: "install-hooks",
        repo: w.values.get("--repo"),
        dryRun: w.flags.has("--dry-run"),
        remove: w.flags.has("--remove"),
      };
    default:
      noOperands();
      return {
        command: w.command as "off" | "sync" | "consume" | "block-end" | "session-end",
        local,
      };
  }
}
