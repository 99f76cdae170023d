/**
 * Shell quoting for every command ctxkit prints or records for a user to run
 * (`references/output.md#printed-commands`): POSIX single quotes, so the word reaches the program
 * exactly as written.
 *
 * @module
 */

/**
 * Quote `word` for a POSIX shell: unchanged when it only holds `A-Za-z0-9_@%+=:,./-` (and is not
 * empty, and `always` is not set), else single-quoted with each `'` written as `'\''`.
 *
 * @example
 * ```ts
 * import { shellQuote } from "./shell.ts";
 * shellQuote("/opt/ctxkit/bin/context-guard.ts"); // "/opt/ctxkit/bin/context-guard.ts"
 * shellQuote("it's"); // "'it'\\''s'"
 * shellQuote("run", { always: true }); // "'run'"
 * ```
 */
export function shellQuote(word: string, options: { always?: boolean } = {}): string {
  if (!options.always && word !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** A command line of `words`, each quoted with {@linkcode shellQuote}. */
export function shellCommand(words: readonly string[], options: { always?: boolean } = {}): string {
  return words.map((w) => shellQuote(w, options)).join(" ");
}
