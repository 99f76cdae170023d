/**
 * The `prose` command line, parsed (`references/prose.md#cli`): every usage error is found here,
 * before anything is read or written, and each command comes out typed.
 *
 * @module
 */

import { type Text, text, verbatim } from "../text.ts";
import {
  commandNamed,
  firstPositional,
  hasFlag,
  lastValue,
  type OptionDecl,
  type OptionTable,
  positionals,
  readCommandLine,
  type Word,
} from "../_cli/args.ts";
import { UsageError } from "../errors.ts";
import { ProseError } from "./errors.ts";
import type { ActivateParams } from "./ops.ts";
import { LEVELS, type ProseLevel, type ProseSource, SOURCES } from "./schema.ts";

/** `--help` text, naming `program`: the name prose runs by (`references/cli.md`). */
export function proseUsage(program: string): string {
  return `usage: ${program} [--local] [<command>] [options]   (--opt V or --opt=V; -- ends the options)

  (no command)                  activate with the config defaults (like \`on\`)
  on [N turns|turn|block|session|explicit] [--level minimal|full] [--for DUR]
     [--source manual|auto-clarity|config]
  off                           clear the flag
  level off|minimal|full        change only the level
  status [--json]               report the flag
  consume                       count one response against a turn flag
  block-end                     end a block flag (git post-commit / pre-push)
  session-end                   end session and turn flags
  match [--text S | --hook-input] [--activate]
  install-hooks [--repo P] [--dry-run] [--remove]
  sync                          re-mirror through the backend
  serve [--port N] [--db PATH]
  help, --help, --version

DUR: 90s, 15m, 12h, 7d (1s to 30d). State: $CELLM_DIR or $HOME/.cellm (prose/.active).
--local skips the backend (CELLM_WORKER_URL / backend.url).`;
}

/** The usage line of `prose serve`, naming `program`; printed after each of its usage errors. */
export function serveUsage(program: string): string {
  return `usage: ${program} serve [--port N] [--db PATH]`;
}

/** A parsed command line: the command and whether `--local` skips the backend. */
export type Invocation =
  | { command: "help"; text: string }
  | { command: "version" }
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

function usage(message: Text, field?: string): never {
  throw new ProseError("usage", message, field === undefined ? {} : { field });
}

/** A value option given at most once. */
const ONCE: OptionDecl = { value: true, once: true };

/** The options of every command: `--local` skips the backend (meaningless for some, never refused). */
const GLOBAL: OptionTable = { "--local": {} };

/** Each command's own options, and whether it takes positionals. */
const COMMANDS: Readonly<Record<string, { options: OptionTable; positionals?: true }>> = {
  on: {
    options: {
      "--level": {
        ...ONCE,
        check: (v) => {
          if (v !== "minimal" && v !== "full") {
            usage(text`--level must be minimal or full`, "level");
          }
        },
      },
      "--for": ONCE,
      "--source": {
        ...ONCE,
        check: (v) => {
          if (!(SOURCES as readonly string[]).includes(v)) {
            usage(text`--source must be manual, auto-clarity or config`, "source");
          }
        },
      },
    },
    positionals: true,
  },
  off: { options: {} },
  level: { options: {}, positionals: true },
  status: { options: { "--json": {} } },
  consume: { options: {} },
  "block-end": { options: {} },
  "session-end": { options: {} },
  match: { options: { "--text": ONCE, "--hook-input": {}, "--activate": {} } },
  "install-hooks": { options: { "--repo": ONCE, "--dry-run": {}, "--remove": {} } },
  sync: { options: {} },
  serve: { options: { "--port": ONCE, "--db": ONCE } },
  help: { options: {}, positionals: true },
};

/** Every option of prose: how a word is read whatever the command. */
const ALL: OptionTable = Object.assign(
  {},
  GLOBAL,
  ...Object.values(COMMANDS).map((c) => c.options),
);

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

/** The parameters of `on`: its positional TTL and its (already checked) options. */
function onParams(w: readonly Word[]): ActivateParams {
  const params: ActivateParams = {};
  const ttl = parseOnTtl(positionals(w));
  if (ttl !== undefined) params.ttl = ttl;
  const level = lastValue(w, "--level");
  if (level !== undefined) params.level = level as "minimal" | "full";
  const source = lastValue(w, "--source");
  if (source !== undefined) params.source = source as ProseSource;
  const duration = lastValue(w, "--for");
  if (duration !== undefined) params.for = duration;
  return params;
}

/**
 * Parse a `prose` command line by the one grammar (`references/cli.md`): the command is the first
 * positional (none: `on`), options may come before or after it. Throws a usage
 * {@linkcode ProseError} for an unknown command or option, an option that does not apply, a missing
 * value or bad positionals; `--help` gives the usage text of `program` (a function: only help and
 * `serve`'s errors need the name), `--version` the version.
 */
export function parseCommandLine(
  args: readonly string[],
  program: () => string = () => "prose",
): Invocation {
  try {
    return parse(args, program);
  } catch (e) {
    // The grammar's usage errors, as prose's own: `serve`'s carry its usage line.
    if (!(e instanceof UsageError)) throw e;
    const synopsis = firstPositional(args, ALL)?.value === "serve"
      ? { synopsis: serveUsage(program()) }
      : {};
    throw new ProseError("usage", e.text, synopsis);
  }
}

function parse(args: readonly string[], program: () => string): Invocation {
  const first = firstPositional(args, ALL);
  const name = first?.value ?? "on";
  if (!Object.hasOwn(COMMANDS, name)) {
    // An earlier bad argument, or an earlier question, wins over the unknown command.
    const before = readCommandLine(args.slice(0, first!.index), { options: ALL });
    if (before.asks === "version") return { command: "version" };
    if (before.asks === "help") return { command: "help", text: proseUsage(program()) };
    commandNamed(name, Object.keys(COMMANDS));
  }
  const spec = COMMANDS[name];
  const rest = first === undefined
    ? args
    : [...args.slice(0, first.index), ...args.slice(first.index + 1)];
  const line = readCommandLine(rest, {
    options: { ...GLOBAL, ...spec.options },
    known: Object.keys(ALL),
    command: name,
    noPositionals: !spec.positionals,
  });
  if (line.asks === "version") return { command: "version" };
  if (line.asks === "help" || name === "help") {
    return {
      command: "help",
      text: name === "serve" ? serveUsage(program()) : proseUsage(program()),
    };
  }
  const w = line.words;
  const local = hasFlag(w, "--local");
  switch (name) {
    case "on":
      return { command: "on", local, params: onParams(w) };
    case "level": {
      const operands = positionals(w);
      const [level] = operands;
      if (operands.length !== 1) {
        usage(text`usage: ${verbatim(program())} level off|minimal|full`, "level");
      }
      if (!(LEVELS as readonly string[]).includes(level)) {
        usage(text`level must be off, minimal or full`, "level");
      }
      return { command: "level", local, level: level as ProseLevel };
    }
    case "status":
      return { command: "status", local, json: hasFlag(w, "--json") };
    case "match": {
      const matchText = lastValue(w, "--text");
      const hookInput = hasFlag(w, "--hook-input");
      if (matchText !== undefined && hookInput) {
        usage(text`--text and --hook-input exclude each other`);
      }
      return {
        command: "match",
        local,
        text: matchText,
        hookInput,
        activate: hasFlag(w, "--activate"),
      };
    }
    case "install-hooks":
      return {
        command: "install-hooks",
        repo: lastValue(w, "--repo"),
        dryRun: hasFlag(w, "--dry-run"),
        remove: hasFlag(w, "--remove"),
      };
    case "serve":
      return { command: "serve", port: lastValue(w, "--port"), db: lastValue(w, "--db") };
    default:
      return {
        command: name as "off" | "sync" | "consume" | "block-end" | "session-end",
        local,
      };
  }
}
