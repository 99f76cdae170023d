// deno-lint-ignore-file no-control-regex
/**
 * Sanitized rendering: every string that comes from disk, the database, the network, a config key
 * name or a prompt goes through {@linkcode sanitize} before it is printed
 * (`references/prose.md#sanitizing`).
 *
 * @module
 */

import { plain, type Text } from "../text.ts";

/** Default clamp in code points. */
const SANITIZE_MAX = 200;
/** Clamp for `match` tokens. */
export const TOKEN_MAX = 40;

// CSI: ESC [ params/intermediates, final byte 0x40–0x7E. OSC: ESC ] … (BEL | ESC \). Any other
// ESC + one character. U+009B is the 8-bit CSI introducer.
const ESCAPES =
  /\x1b\[[\x20-\x3f]*[\x40-\x7e]?|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[\s\S]?|\u009b/g;
const SPACES = /[\t\r\n]/g;
// Other C0 controls, DEL, C1 controls, bidi controls, zero-width characters and the BOM.
const DELETED =
  /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]/g;

/**
 * Make untrusted text safe for a terminal: strip escape sequences, map TAB/CR/LF to a space, delete
 * other control, bidi and zero-width characters, and clamp to `max` code points (appending `…`).
 *
 * @example
 * ```ts
 * import { sanitize } from "./sanitize.ts";
 * sanitize("\x1b[31mred\x1b[0m\tok"); // "red ok"
 * sanitize("abcdef", 3); // "abc…"
 * ```
 */
export function sanitize(text: string, max: number = SANITIZE_MAX): string {
  const clean = text.replace(ESCAPES, "").replace(SPACES, " ").replace(DELETED, "");
  // Iterating a string walks code points, so a surrogate pair is never split.
  const points = Array.from(clean);
  // A lone surrogate is not printable text either.
  const safe = points.map((p) => (p.length === 1 && /[\ud800-\udfff]/.test(p) ? "\ufffd" : p));
  return safe.length > max ? safe.slice(0, max).join("") + "…" : safe.join("");
}

/**
 * Render a value for a `PROSE: key=value` line: sanitized, and JSON-quoted when it contains a
 * space, `=` or `"` (or is empty).
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
  return clean === "" || /[ ="]/.test(clean) ? JSON.stringify(clean) : clean;
}

/**
 * A {@linkcode Text} as prose prints it: every interpolated string through {@linkcode sanitize}.
 */
export function renderText(message: Text): string {
  const values = message.values.map((v) => (typeof v === "string" ? sanitize(v) : v));
  return plain({ strings: message.strings, values });
}
