/**
 * What both guard command lines share (`references/context-guard.md#command-lines`): the one
 * option parser — each subcommand declares the options it accepts, and every rule (`--run-dir`,
 * `--tokens=`, `--project|--global`, unknown options, `--`) is written here once — and the one
 * way their failures are printed.
 *
 * @module
 */

import { ArgCursor } from "../_cli/args.ts";
import type { ErrorFormat } from "../_cli/run.ts";
import { UsageError } from "../errors.ts";
import { printed, text } from "../text.ts";
import { errorText } from "./errors.ts";
import type { Layer } from "./roots.ts";
import { parseAlphabet, type TokenAlphabet } from "./tokens.ts";

/** A value option: the key it is stored under and its rules. */
export interface ValueOption {
  /** Result key. */
  key: string;
  /** An empty value is allowed (state's options); default: `<option> needs a value`. */
  allowEmpty?: boolean;
}

/** What one subcommand accepts. */
export interface OptionSpec {
  /** Boolean flags → result key. */
  flags?: Readonly<Record<string, string>>;
  /** Value options. */
  values?: Readonly<Record<string, ValueOption>>;
  /** `--project` / `--global`. */
  layer?: boolean;
  /** `--tokens=base|ext`. */
  tokens?: boolean;
  /** Operands are refused (`unknown argument`). */
  noOperands?: boolean;
  /** How an unknown `-…` argument is named: `option` (default) or `argument`. */
  unknownWord?: "option" | "argument";
}

/** One argument event, in command-line order (selectors and rollback depend on order). */
export type ArgEvent =
  | { kind: "value"; option: string; value: string }
  | { kind: "layer"; layer: Layer }
  | { kind: "operand"; value: string };

/** A parsed command line. */
export interface ParsedArgs {
  /** Flags seen, by key. */
  flags: Set<string>;
  /** Values by key, in order (the last one wins where only one is used). */
  values: Map<string, string[]>;
  /** The last layer flag, when any. */
  layer?: Layer;
  /** `--tokens=` (default `base`). */
  alphabet: TokenAlphabet;
  /** Every option value, layer flag and operand in order. */
  events: ArgEvent[];
}

/**
 * Parse a subcommand's arguments left to right: value options take the next argument verbatim,
 * a repeated option's values are kept in order, `--` ends the options. Throws
 * {@linkcode UsageError} with the documented lines.
 *
 * @example
 * ```ts
 * import { parseGuardArgs } from "./cli_shared.ts";
 * const p = parseGuardArgs(["--run-dir", "d", "--", "--run-dir"], {
 *   values: { "--run-dir": { key: "runDir" } },
 * });
 * p.values.get("runDir"); // ["d"]
 * p.events.at(-1); // { kind: "operand", value: "--run-dir" }
 * ```
 */
export function parseGuardArgs(args: readonly string[], spec: OptionSpec): ParsedArgs {
  const cursor = new ArgCursor(args);
  const parsed: ParsedArgs = { flags: new Set(), values: new Map(), alphabet: "base", events: [] };
  while (!cursor.done) {
    const arg = cursor.next();
    if (!cursor.operand) {
      const value = spec.values?.[arg];
      if (value !== undefined) {
        const v = value.allowEmpty ? cursor.value() : cursor.requireValue(arg);
        if (v === undefined) throw new UsageError(text`${arg} needs a value`);
        parsed.values.set(value.key, [...(parsed.values.get(value.key) ?? []), v]);
        parsed.events.push({ kind: "value", option: arg, value: v });
        continue;
      }
      const flag = spec.flags?.[arg];
      if (flag !== undefined) {
        parsed.flags.add(flag);
        continue;
      }
      if (spec.layer && (arg === "--project" || arg === "--global")) {
        parsed.layer = arg === "--project" ? "project" : "global";
        parsed.events.push({ kind: "layer", layer: parsed.layer });
        continue;
      }
      if (spec.tokens && arg.startsWith("--tokens=")) {
        parsed.alphabet = parseAlphabet(arg.slice("--tokens=".length));
        continue;
      }
      if (arg.startsWith("-")) {
        throw new UsageError(text`unknown ${spec.unknownWord ?? "option"}: ${arg}`);
      }
    }
    if (spec.noOperands) throw new UsageError(text`unknown argument: ${arg}`);
    parsed.events.push({ kind: "operand", value: arg });
  }
  return parsed;
}

/** The last value of `key`, when given. */
export function lastValue(parsed: ParsedArgs, key: string): string | undefined {
  return parsed.values.get(key)?.at(-1);
}

/** The operands in order. */
export function operands(parsed: ParsedArgs): string[] {
  return parsed.events.flatMap((e) => (e.kind === "operand" ? [e.value] : []));
}

/** How both guard CLIs print a failure on stderr (see {@linkcode errorText}). */
export const GUARD_ERROR_FORMAT: ErrorFormat = {
  error: (e) => [printed(errorText(e))],
};
