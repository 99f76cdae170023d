/**
 * The one option grammar of every ctxkit tool (`references/cli.md`): each tool's `cli.ts` declares
 * its options in an {@linkcode OptionTable} and reads its arguments with
 * {@linkcode readCommandLine}; every rule — `--opt value` and `--opt=value`, `--` ends the options,
 * `--help`/`-h`/`--version`, positionals, and the error line of each mistake (with a "did you mean"
 * for a near miss) — is written here once.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { type Text, text } from "../text.ts";
import { nearest } from "./suggest.ts";

/** How one option reads. */
export interface OptionDecl {
  /** It takes a value: `--opt value` (the next argument verbatim, even `--x`) or `--opt=value`. */
  readonly value?: boolean;
  /** An empty value is accepted (default: `<opt> needs a value`). */
  readonly empty?: boolean;
  /** Given at most once: a second one is `<opt> given twice` (default: every value is kept). */
  readonly once?: boolean;
  /** Checks a value as it is read, left to right; throws the tool's error for a bad one. */
  readonly check?: (value: string, option: string) => void;
}

/** The options one command accepts, by name (`--root`, `-x`). */
export type OptionTable = Readonly<Record<string, OptionDecl>>;

/** One word of a command line, in command-line order. */
export type Word =
  | { readonly kind: "option"; readonly name: string; readonly value?: string }
  | { readonly kind: "positional"; readonly value: string };

/** A command line read: its words, and whether it asks for the help or the version instead. */
export interface CommandLine {
  /** The words before the end (or before the question). */
  readonly words: Word[];
  /**
   * `--help`/`-h` (or the help word) or `--version`, read before `--`: answered at once, exit 0;
   * the arguments before it were read and checked, those after it are not looked at.
   */
  readonly asks?: "help" | "version";
}

/** What a command line may hold. */
export interface Grammar {
  /** The options accepted here. */
  readonly options: OptionTable;
  /** Every other option name of the tool: such an option `does not apply to <command>`. */
  readonly known?: Iterable<string>;
  /** The command being read, named by `does not apply to` and the positional error. */
  readonly command?: string;
  /** Positionals are refused (`unexpected argument: <arg>`); default: accepted. */
  readonly noPositionals?: boolean;
  /** A positional `help` (before `--`) asks for the help, as `--help` does. */
  readonly helpWord?: boolean;
}

/** The options every tool answers by itself. */
const QUESTIONS: Readonly<Record<string, "help" | "version">> = {
  "--help": "help",
  "-h": "help",
  "--version": "version",
};

/** `; did you mean <x>?` for a near miss among `candidates`, else nothing. */
function didYouMean(word: string, candidates: Iterable<string>): Text {
  const near = nearest(word, candidates);
  return near === undefined ? text`` : text`; did you mean ${near}?`;
}

/**
 * Read `argv` left to right by `grammar`. Throws a {@linkcode UsageError} at the first mistake,
 * with the line `references/cli.md#errors` gives it; an option's own `check` throws the tool's.
 *
 * @example
 * ```ts
 * import { readCommandLine } from "./args.ts";
 * const line = readCommandLine(["--root=a", "--", "--x"], { options: { "--root": { value: true } } });
 * line.words; // [{ kind: "option", name: "--root", value: "a" }, { kind: "positional", value: "--x" }]
 * ```
 */
export function readCommandLine(argv: readonly string[], grammar: Grammar): CommandLine {
  const words: Word[] = [];
  const given = new Set<string>();
  const known = new Set(grammar.known);
  let ended = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!ended && arg === "--") {
      ended = true;
      continue;
    }
    if (ended || !arg.startsWith("-")) {
      if (!ended && grammar.helpWord && arg === "help") return { words, asks: "help" };
      if (grammar.noPositionals) throw new UsageError(text`unexpected argument: ${arg}`);
      words.push({ kind: "positional", value: arg });
      continue;
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq > 2 ? arg.slice(0, eq) : arg;
    const inline = eq > 2 ? arg.slice(eq + 1) : undefined;
    const decl: OptionDecl | undefined = Object.hasOwn(grammar.options, name)
      ? grammar.options[name]
      : undefined;
    const question = Object.hasOwn(QUESTIONS, name) ? QUESTIONS[name] : undefined;
    if (decl === undefined && question !== undefined) {
      if (inline !== undefined) throw new UsageError(text`${name} takes no value`);
      return { words, asks: question };
    }
    if (decl === undefined) {
      if (known.has(name) && grammar.command !== undefined) {
        throw new UsageError(text`${name} does not apply to ${grammar.command}`);
      }
      const candidates = [...Object.keys(grammar.options), ...Object.keys(QUESTIONS)];
      throw new UsageError(text`unknown option: ${name}${didYouMean(name, candidates)}`);
    }
    if (!decl.value) {
      if (inline !== undefined) throw new UsageError(text`${name} takes no value`);
      words.push({ kind: "option", name });
      continue;
    }
    const value = inline ?? (i + 1 < argv.length ? argv[++i] : undefined);
    if (value === undefined || (value === "" && !decl.empty)) {
      throw new UsageError(text`${name} needs a value`);
    }
    if (decl.once && given.has(name)) throw new UsageError(text`${name} given twice`);
    given.add(name);
    decl.check?.(value, name);
    words.push({ kind: "option", name, value });
  }
  return { words };
}

/**
 * The first positional of `argv` and its index, when read by `options` (every option of the tool,
 * so a value is never taken for it), or `undefined` (none, or a question comes first): how a tool
 * whose options may come before its command finds the command before reading the line by that
 * command's grammar. Never throws.
 */
export function firstPositional(
  argv: readonly string[],
  options: OptionTable,
): { index: number; value: string } | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") return i + 1 < argv.length ? { index: i + 1, value: argv[i + 1] } : undefined;
    if (!arg.startsWith("-")) return { index: i, value: arg };
    if (Object.hasOwn(QUESTIONS, arg)) return undefined;
    if (Object.hasOwn(options, arg) && options[arg].value) i++;
  }
  return undefined;
}

/**
 * `word` as one of `commands`; anything else is a {@linkcode UsageError}
 * `unknown command: <word>`, with a "did you mean" for a near miss (`snapshoot` → `snapshot`).
 */
export function commandNamed(word: string, commands: Iterable<string>): string {
  const names = [...commands];
  if (names.includes(word)) return word;
  throw new UsageError(text`unknown command: ${word}${didYouMean(word, names)}`);
}

/** The last value of option `name`, when given. */
export function lastValue(words: readonly Word[], name: string): string | undefined {
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i];
    if (w.kind === "option" && w.name === name) return w.value;
  }
  return undefined;
}

/** Every value of option `name`, in order. */
export function allValues(words: readonly Word[], name: string): string[] {
  return words.flatMap((
    w,
  ) => (w.kind === "option" && w.name === name && w.value !== undefined ? [w.value] : []));
}

/** True when flag `name` was given. */
export function hasFlag(words: readonly Word[], name: string): boolean {
  return words.some((w) => w.kind === "option" && w.name === name);
}

/** The positionals, in order. */
export function positionals(words: readonly Word[]): string[] {
  return words.flatMap((w) => (w.kind === "positional" ? [w.value] : []));
}
