/**
 * Safe printing (`references/prose.md#sanitizing`): every string that comes from disk, the
 * database, the network, a config key name or a prompt is printed through {@linkcode sanitize}
 * (a value on a line), {@linkcode sanitizeMessage} (free text received or composed elsewhere) or
 * {@linkcode safeJson} (a JSON document). Nothing is dropped: a control character is escaped
 * visibly, with the rule every ctxkit tool prints names with (`printable` of `lib/text.ts`), so a
 * printed name is always one line, never reaches the terminal as a control, and never looks like
 * another, real name.
 *
 * @module
 */

import {
  escapeUnsafeJson,
  isUnsafeText,
  printable,
  renderText as renderWith,
  type Text,
} from "../text.ts";

/** Default clamp in code points. */
const SANITIZE_MAX = 200;
/** Clamp of free-text messages in code points. */
const MESSAGE_MAX = 1024;
/** Clamp for `match` tokens. */
export const TOKEN_MAX = 40;

/** At most `max` code points of `text`, with `…` appended when it was longer (pairs never split). */
export function clampPoints(text: string, max: number): string {
  if (text.length <= max) return text;
  const points = Array.from(text);
  return points.length > max ? points.slice(0, max).join("") + "…" : text;
}

/**
 * The printed form of a value (a path, a name, a token): clamped to `max` code points (appending
 * `…`), then unchanged when it holds nothing to escape, else double-quoted with each control
 * character (C0, DEL, C1), `"` and `\` escaped as `printable` does (`\n`, `\t`, `\x1b`, `\"`,
 * `\\`), and bidi controls, zero-width characters, the BOM and lone surrogates as `\uXXXX`. An
 * escape sequence is neutralised (its ESC is printed as `\x1b`); nothing is ever dropped.
 *
 * @example
 * ```ts
 * import { sanitize } from "./sanitize.ts";
 * sanitize("/home/ana/.cellm"); // "/home/ana/.cellm"
 * sanitize("a\x1b[31mb"); // '"a\\x1b[31mb"'
 * sanitize("abcdef", 3); // "abc…"
 * ```
 */
export function sanitize(value: string, max: number = SANITIZE_MAX): string {
  return printable(clampPoints(value, max));
}

/**
 * Free text as prose prints it (a message a backend sent, a runtime's error text): clamped, and
 * unchanged unless it holds a control, bidi or zero-width character or a lone surrogate; such
 * text is printed whole through {@linkcode sanitize} (quoted and escaped).
 *
 * @example
 * ```ts
 * import { sanitizeMessage } from "./sanitize.ts";
 * sanitizeMessage('expected one of "off"|"full"'); // unchanged
 * sanitizeMessage("bad\nline"); // '"bad\\nline"'
 * ```
 */
export function sanitizeMessage(text: string, max: number = MESSAGE_MAX): string {
  return isUnsafeText(text) ? sanitize(text, max) : clampPoints(text, max);
}

/**
 * Render a value for a `PROSE: key=value` line: {@linkcode sanitize}d, and double-quoted when it
 * contains a space or `=` (or is empty) and was not quoted already.
 *
 * @example
 * ```ts
 * import { renderValue } from "./sanitize.ts";
 * renderValue("full"); // "full"
 * renderValue("modo normal"); // '"modo normal"'
 * ```
 */
export function renderValue(value: string, max: number = SANITIZE_MAX): string {
  const clean = sanitize(value, max);
  if (clean.startsWith('"')) return clean; // quoted by sanitize: already one token
  return clean === "" || /[ =]/.test(clean) ? `"${clean}"` : clean;
}

/**
 * A {@linkcode Text} as prose prints it: every interpolated string, nested texts included,
 * through {@linkcode sanitize}.
 */
export function renderText(message: Text): string {
  return renderWith(message, (value) => sanitize(value));
}

/**
 * `JSON.stringify(value)` on one line, with every character a terminal could act on written as a
 * `\uXXXX` escape: the document keeps the exact strings (a consumer parses them back unchanged)
 * and is safe to print.
 *
 * @example
 * ```ts
 * import { safeJson } from "./sanitize.ts";
 * safeJson({ path: "a\u009bb" }); // '{"path":"a\\u009bb"}'
 * ```
 */
export function safeJson(value: unknown): string {
  return escapeUnsafeJson(JSON.stringify(value));
}
