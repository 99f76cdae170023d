/**
 * The JSON writer behind every stable output line.
 *
 * Strings are written exactly as `JSON.stringify` writes them (every control character escaped, all
 * else raw UTF-8), and objects keep their insertion order, so key order is part of the code that builds
 * them — one place per document.
 *
 * @module
 */

/** A JSON value whose objects keep insertion order. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };

/** A JSON string literal: `"` and `\` escaped, `\b\f\n\r\t` short forms, other controls `\u00xx`. */
export function jsonString(value: string): string {
  return JSON.stringify(value);
}

/**
 * One-line JSON with no spaces (`{"a":1,"b":[2]}`), keys in insertion order.
 *
 * @example
 * ```ts
 * import { compactJson } from "./json.ts";
 * compactJson({ path: "a\tb", bytes: 3 }); // '{"path":"a\\tb","bytes":3}'
 * ```
 */
export function compactJson(value: JsonValue): string {
  return JSON.stringify(value);
}

/** `{"k": v, "k2": v2}` — the spaced one-line form used inside the scan document's header. */
export function spacedObject(value: { [key: string]: JsonValue }): string {
  const parts = Object.entries(value).map(([k, v]) =>
    `${jsonString(k)}: ${
      typeof v === "object" && v !== null && !Array.isArray(v) ? spacedObject(v) : compactJson(v)
    }`
  );
  return `{${parts.join(", ")}}`;
}
