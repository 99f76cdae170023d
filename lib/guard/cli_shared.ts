/**
 * What both guard command lines share (`references/context-guard.md#command-lines`): each tool
 * declares its subcommands and the options each accepts; this reads a command line by them with
 * the one grammar of every ctxkit tool (`lib/_cli/args.ts`, `references/cli.md`) — the subcommand
 * first, then its options and files — and is the one way their failures are printed.
 *
 * @module
 */

import { commandNamed, type OptionDecl, type OptionTable, readCommandLine } from "../_cli/args.ts";
import { writeErr } from "../_cli/output.ts";
import type { ErrorFormat } from "../_cli/run.ts";
import { answer, programName, type Self } from "../_cli/self.ts";
import { printed } from "../text.ts";
import { errorText, osErrorAsFailure } from "./errors.ts";
import { consoleReporter, type Reporter } from "./report.ts";
import type { Layer } from "./roots.ts";
import { parseAlphabet, type TokenAlphabet } from "./tokens.ts";

/** One subcommand: the options it accepts, and whether it takes files. */
export interface GuardCommand {
  /** Its options, by name. */
  readonly options: OptionTable;
  /** It takes no positionals (text-guard `status`, context-guard `state` and `list`). */
  readonly noPositionals?: boolean;
}

/** A guard tool's subcommands, by name. */
export type GuardCommands = Readonly<Record<string, GuardCommand>>;

/** A value option that needs a non-empty value. */
export const VALUE: OptionDecl = { value: true };

/** `--tokens base|ext` (also `--tokens=ext`): the token alphabet of the gate. */
export const TOKENS: OptionDecl = { value: true, empty: true, check: (v) => void parseAlphabet(v) };

/** `--project` and `--global`: the layer (the last one wins). */
export const LAYER_OPTIONS: OptionTable = { "--project": {}, "--global": {} };

/** One argument event, in command-line order (selectors and rollback depend on order). */
export type ArgEvent =
  | { kind: "value"; option: string; value: string }
  | { kind: "layer"; layer: Layer }
  | { kind: "operand"; value: string };

/** A parsed subcommand line. */
export interface ParsedArgs {
  /** The flags given, by name (`--allow-dirty`). */
  flags: Set<string>;
  /** Values by option name, in order (the last one wins where only one is used). */
  values: Map<string, string[]>;
  /** The last layer flag, when any. */
  layer?: Layer;
  /** `--tokens` (default `base`). */
  alphabet: TokenAlphabet;
  /** Every option value, layer flag and operand in order. */
  events: ArgEvent[];
}

/**
 * Parse the arguments after subcommand `command` of `commands` left to right: value options take
 * the next argument verbatim (or `--opt=value`), a repeated option's values are kept in order, `--`
 * ends the options. Throws {@linkcode UsageError}s with the lines of `references/cli.md#errors`;
 * `--help`/`--version` come back as `asks`.
 *
 * @example
 * ```ts
 * import { parseGuardArgs, VALUE } from "./cli_shared.ts";
 * const p = parseGuardArgs(["--run-dir=d", "--", "--run-dir"], {
 *   snapshot: { options: { "--run-dir": VALUE } },
 * }, "snapshot");
 * p.values.get("--run-dir"); // ["d"]
 * p.events.at(-1); // { kind: "operand", value: "--run-dir" }
 * ```
 */
export function parseGuardArgs(
  args: readonly string[],
  commands: GuardCommands,
  command: string,
): ParsedArgs & { asks?: "help" | "version" } {
  const spec = commands[command];
  const line = readCommandLine(args, {
    options: spec.options,
    known: Object.values(commands).flatMap((c) => Object.keys(c.options)),
    command,
    noPositionals: spec.noPositionals,
  });
  const parsed: ParsedArgs = { flags: new Set(), values: new Map(), alphabet: "base", events: [] };
  for (const w of line.words) {
    if (w.kind === "positional") {
      parsed.events.push({ kind: "operand", value: w.value });
    } else if (w.name === "--project" || w.name === "--global") {
      parsed.layer = w.name === "--project" ? "project" : "global";
      parsed.events.push({ kind: "layer", layer: parsed.layer });
    } else if (w.value === undefined) {
      parsed.flags.add(w.name);
    } else {
      if (w.name === "--tokens") parsed.alphabet = parseAlphabet(w.value);
      parsed.values.set(w.name, [...(parsed.values.get(w.name) ?? []), w.value]);
      parsed.events.push({ kind: "value", option: w.name, value: w.value });
    }
  }
  return line.asks === undefined ? parsed : { ...parsed, asks: line.asks };
}

/** The last value of option `name`, when given. */
export function lastValue(parsed: ParsedArgs, name: string): string | undefined {
  return parsed.values.get(name)?.at(-1);
}

/** The operands in order. */
export function operands(parsed: ParsedArgs): string[] {
  return parsed.events.flatMap((e) => (e.kind === "operand" ? [e.value] : []));
}

/** A guard command line read: the subcommand and its arguments, or the exit code it was answered with. */
export type GuardLine = { command: string; parsed: ParsedArgs } | { rc: number };

/**
 * Read a guard tool's command line (`references/context-guard.md#command-lines`): no arguments →
 * the help on stderr, exit 2; `help`, `-h`, `--help` or `--version` first, or `--help`/`--version`
 * among a subcommand's options → answered on stdout, exit 0; else the subcommand (a near miss gets
 * a "did you mean") and its parsed arguments.
 */
export async function readGuardLine(
  args: readonly string[],
  commands: GuardCommands,
  self: Self,
  help: (program: string) => string,
): Promise<GuardLine> {
  if (args.length === 0) {
    writeErr(help(programName(self)));
    return { rc: 2 };
  }
  const [first, ...rest] = args;
  if (first === "help" || first === "-h" || first === "--help") {
    return { rc: await answer("help", self, help) };
  }
  if (first === "--version") return { rc: await answer("version", self, help) };
  const command = commandNamed(first, Object.keys(commands));
  const parsed = parseGuardArgs(rest, commands, command);
  if (parsed.asks !== undefined) return { rc: await answer(parsed.asks, self, help) };
  return { command, parsed };
}

/**
 * Run a parsed subcommand with the reporter its flags ask for: the console's lines, `--quiet`'s
 * summary lines only, or `--json`'s one document (`references/context-guard.md#json`), whose
 * failures are recorded in the document as well as thrown.
 */
export async function withReporter(
  tool: "context-guard" | "text-guard",
  command: string,
  p: ParsedArgs,
  run: (reporter: Reporter) => Promise<number>,
): Promise<number> {
  if (!p.flags.has("--json")) {
    const reporter = p.flags.has("--quiet")
      ? (await import("./quiet.ts")).quietSnapshot(consoleReporter)
      : consoleReporter;
    return await run(reporter);
  }
  const { jsonReporter } = await import("./json_report.ts");
  const json = jsonReporter(tool, command, consoleReporter);
  const runDir = lastValue(p, "--run-dir");
  if (runDir !== undefined && command !== "snapshot") json.runDir(runDir);
  return await json.print(() => run(json).catch((e) => Promise.reject(osErrorAsFailure(e))));
}

/** How both guard CLIs print a failure on stderr (see {@linkcode errorText}). */
export const GUARD_ERROR_FORMAT: ErrorFormat = {
  error: (e) => [printed(errorText(e))],
};
