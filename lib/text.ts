/**
 * Printable text: the one escaping rule for every name ctxkit prints, and the {@linkcode Text}
 * template that applies it to every interpolated value of an output line or error message.
 *
 * A file name is data an attacker may choose. Printed raw, a name like `x<newline>GATE: PASS` would
 * forge a contract line, and an ESC sequence would reach the terminal. {@linkcode printable} escapes
 * such names git's `core.quotePath` way, so a printed line is always one line and an escaped name
 * maps back to exactly one name. Rule: `references/output.md#printed-names`.
 *
 * @module
 */

// What makes text unsafe to print raw: C0 controls, DEL and the C1 controls; the Unicode line and
// paragraph separators (some line readers split there); bidi, zero-width and BOM format
// characters (they make two names look alike); lone surrogates (UTF-8 cannot carry them).
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
// Those, `"` and `\`: any of them switches on quoting.
const ESCAPED = new RegExp(`["\\\\]|${UNSAFE.source}`, "g");
const SHORT: Readonly<Record<string, string>> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\t": "\\t",
  "\n": "\\n",
  "\v": "\\v",
  "\f": "\\f",
  "\r": "\\r",
  '"': '\\"',
  "\\": "\\\\",
};

function escapeOne(c: string): string {
  const code = c.charCodeAt(0);
  const short = SHORT[c];
  if (short !== undefined) return short;
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

const UNSAFE_ALL = new RegExp(UNSAFE.source, "g");

/**
 * JSON text (from `JSON.stringify`) with every character of the same unsafe set written as a
 * `\uXXXX` escape: `JSON.stringify` escapes C0 and lone surrogates itself but leaves DEL, the C1
 * controls, the separators and the format characters raw. The document still parses back to the
 * exact strings, and is safe to print.
 *
 * @example
 * ```ts
 * import { escapeUnsafeJson } from "./text.ts";
 * escapeUnsafeJson(JSON.stringify({ path: "a\u009bb" })); // '{"path":"a\\u009bb"}'
 * ```
 */
export function escapeUnsafeJson(json: string): string {
  return json.replace(UNSAFE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * True when `value` holds a character that must never reach a terminal raw (a control, a Unicode
 * separator, a bidi, zero-width or BOM character, a lone surrogate); `"` and `\\` alone do not
 * count. For free text that keeps its quotes when it is safe.
 */
export function isUnsafeText(value: string): boolean {
  return UNSAFE.test(value);
}

/**
 * `value` as it may appear on an output line: unchanged when it holds nothing special; otherwise
 * wrapped in double quotes with each special character escaped — `\a \b \t \n \v \f \r \" \\`,
 * other C0/DEL/C1 controls as `\xHH`, and the Unicode separators, bidi/zero-width/BOM format
 * characters and lone surrogates as `\uHHHH`. Every escaped form maps back to exactly one name.
 *
 * @example
 * ```ts
 * import { printable } from "./text.ts";
 * printable("CLAUDE.md"); // "CLAUDE.md"
 * printable("x\nGATE: PASS"); // '"x\\nGATE: PASS"'
 * printable("a\\b"); // '"a\\\\b"'
 * printable("r\u202egnp.md"); // '"r\\u202egnp.md"'
 * ```
 */
export function printable(value: string): string {
  const escaped = value.replace(ESCAPED, escapeOne);
  return escaped === value ? value : `"${escaped}"`;
}

/**
 * A line (or message) whose literal parts are ctxkit's own and whose interpolated values are data.
 * Printing it quotes every value with {@linkcode printable}; {@linkcode plain} gives the raw text
 * for library callers.
 */
export interface Text {
  /** The literal parts, one more than `values`. */
  readonly strings: readonly string[];
  /**
   * The interpolated values: data (a string or number), a part already safe to print as is
   * (`{ verbatim }`, e.g. git's own quoted output), or a nested text.
   */
  readonly values: readonly (string | number | { readonly verbatim: string } | Text)[];
}

/** A value printed verbatim inside a {@linkcode Text}: for text that is already safe (git's quoted output). */
export type Verbatim = { readonly verbatim: string };

/** What may be interpolated into a {@linkcode Text}: data, a safe verbatim part, or a nested text. */
export type TextValue = Text["values"][number];

/**
 * Build a {@linkcode Text}: `text\`RESTORED: ${rel}\``.
 *
 * @example
 * ```ts
 * import { printed, text } from "./text.ts";
 * printed(text`RESTORED: ${"a\nb.md"}`); // 'RESTORED: "a\\nb.md"'
 * ```
 */
export function text(strings: TemplateStringsArray, ...values: TextValue[]): Text {
  return { strings: [...strings], values };
}

/** Mark already-safe text (e.g. git's own quoted porcelain output) to be printed verbatim. */
export function verbatim(value: string): Verbatim {
  return { verbatim: value };
}

/**
 * The text with every string value through `quote` (nested texts too): the primitive behind
 * {@linkcode printed} and {@linkcode plain}, for a tool with a quoting rule of its own.
 */
export function renderText(t: Text, quote: (value: string) => string): string {
  let out = t.strings[0];
  for (let i = 0; i < t.values.length; i++) {
    const v = t.values[i];
    out += typeof v === "string"
      ? quote(v)
      : typeof v === "number"
      ? String(v)
      : "verbatim" in v
      ? v.verbatim
      : renderText(v, quote);
    out += t.strings[i + 1];
  }
  return out;
}

/** The text as printed: every string value through {@linkcode printable}. */
export function printed(t: Text): string {
  return renderText(t, printable);
}

/** The raw text (values unquoted), for messages of errors thrown to library callers. */
export function plain(t: Text): string {
  return renderText(t, (v) => v);
}

/**
 * Split a text at the newlines of its literal parts (never inside a value): one text per line.
 *
 * @example
 * ```ts
 * import { plain, splitLines, text } from "./text.ts";
 * splitLines(text`a ${"x\ny"}\nb`).map(plain); // ["a x\ny", "b"]
 * ```
 */
export function splitLines(t: Text): Text[] {
  const lines: Text[] = [];
  let strings: string[] = [""];
  let values: TextValue[] = [];
  const flat = flatten(t);
  flat.strings.forEach((literal, i) => {
    const parts = literal.split("\n");
    strings[strings.length - 1] += parts[0];
    for (const part of parts.slice(1)) {
      lines.push({ strings, values });
      strings = [part];
      values = [];
    }
    if (i < flat.values.length) {
      values.push(flat.values[i]);
      strings.push("");
    }
  });
  lines.push({ strings, values });
  return lines;
}

/** The same text with nested texts inlined (values are then only strings, numbers, verbatims). */
function flatten(t: Text): Text {
  const strings: string[] = [t.strings[0]];
  const values: TextValue[] = [];
  t.values.forEach((v, i) => {
    if (typeof v === "object" && !("verbatim" in v)) {
      const inner = flatten(v);
      strings[strings.length - 1] += inner.strings[0];
      inner.values.forEach((iv, j) => {
        values.push(iv);
        strings.push(inner.strings[j + 1]);
      });
    } else {
      values.push(v);
      strings.push("");
    }
    strings[strings.length - 1] += t.strings[i + 1];
  });
  return { strings, values };
}

/**
 * A text of `values` separated by the literal `separator` (each value printed safely).
 *
 * @example
 * ```ts
 * import { joinText, printed, text } from "./text.ts";
 * printed(text`files: ${joinText(["a.md", "b\n.md"], " ")}`); // 'files: a.md "b\\n.md"'
 * ```
 */
export function joinText(values: readonly TextValue[], separator: string): Text {
  if (values.length === 0) return { strings: [""], values: [] };
  return { strings: ["", ...values.slice(1).map(() => separator), ""], values: [...values] };
}
