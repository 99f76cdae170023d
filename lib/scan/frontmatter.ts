/**
 * A file's frontmatter the way Claude Code reads it (`--loaded`;
 * `references/context-scan.md#loaded-figures`): the `---` block split off the body, and the small
 * YAML subset its keys use — the last of duplicate keys wins, ` # comment`s dropped, quoted and
 * flow-list values, `|`/`>` blocks. Pure string functions, one pass over the lines.
 *
 * @module
 */

import { runTable } from "./read_memo.ts";

const FENCE_LINE = /^---[ \t\v\f\r]*$/;

/** The text split into its frontmatter block (without fences) and the body after it. */
export interface Frontmatter {
  /** The lines between the fences, or `undefined` when the text has no closed frontmatter. */
  readonly yaml: string | undefined;
  /** The text after the closing fence (the whole text when there is no frontmatter). */
  readonly body: string;
}

/**
 * Split off a YAML frontmatter: line 1 `---`, through the next `---` line. An unclosed opening
 * fence is not frontmatter (the text is kept whole).
 *
 * @example
 * ```ts
 * import { splitFrontmatter } from "./frontmatter.ts";
 * splitFrontmatter("---\na: 1\n---\nbody\n"); // { yaml: "a: 1", body: "body\n" }
 * ```
 */
export function splitFrontmatter(text: string): Frontmatter {
  const first = text.indexOf("\n");
  if (first === -1 || !FENCE_LINE.test(text.slice(0, first))) {
    return { yaml: undefined, body: text };
  }
  let at = first + 1;
  while (at <= text.length) {
    const nl = text.indexOf("\n", at);
    const end = nl === -1 ? text.length : nl;
    if (FENCE_LINE.test(text.slice(at, end))) {
      return {
        yaml: text.slice(first + 1, Math.max(first + 1, at - 1)),
        body: text.slice(end + 1),
      };
    }
    if (nl === -1) break;
    at = nl + 1;
  }
  return { yaml: undefined, body: text };
}

/** The indentation (spaces, a tab counting to the next multiple of 4) and where content starts. */
export function indentOf(line: string): { width: number; at: number } {
  let width = 0;
  let at = 0;
  while (at < line.length && (line[at] === " " || line[at] === "\t")) {
    width = line[at] === "\t" ? width + 4 - (width % 4) : width + 1;
    at++;
  }
  return { width, at };
}

/** A frontmatter value: a string, a list of strings, or absent. */
export type YamlValue = string | string[] | undefined;

/** A plain scalar without its trailing ` # comment` (a `#` after whitespace starts one). */
function withoutComment(value: string): string {
  const at = value.search(/(^|[ \t])#/);
  return at === -1 ? value : value.slice(0, at).trimEnd();
}

/** A quoted scalar followed by a comment: the quoted part alone. */
function quotedPart(value: string): string {
  const v = value.trim();
  const q = v[0];
  if (q !== '"' && q !== "'") return v;
  for (let i = 1; i < v.length; i++) {
    if (q === '"' && v[i] === "\\") {
      i++;
      continue;
    }
    if (v[i] !== q) continue;
    if (q === "'" && v[i + 1] === "'") {
      i++;
      continue;
    }
    return v.slice(0, i + 1);
  }
  return v;
}

function unquote(value: string): string {
  const v = quotedPart(value);
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) {
    const escapes: Record<string, string> = {
      n: "\n",
      t: "\t",
      r: "\r",
      b: "\b",
      f: "\f",
      v: "\v",
      "0": "\0",
      e: "\x1b",
      _: "\u00a0",
    };
    return v.slice(1, -1).replace(
      /\\(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|([\s\S]))/g,
      (_, x?: string, u?: string, c?: string) =>
        x !== undefined || u !== undefined
          ? String.fromCharCode(parseInt((x ?? u)!, 16))
          : escapes[c!] ?? c!,
    );
  }
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) {
    return v.slice(1, -1).replaceAll("''", "'");
  }
  return v;
}

function flowList(value: string): string[] {
  const inner = value.trim().slice(1, -1);
  return inner.split(",").map((s) => unquote(s)).filter((s) => s !== "");
}

/**
 * The top-level keys of a frontmatter block, as the small YAML subset skill, agent, command and
 * rule frontmatter uses: plain and quoted scalars (a plain scalar continues on more-indented
 * lines, joined by spaces), `|`/`>` blocks (literal keeps newlines and one final newline, folded
 * joins lines with spaces), `[a, b]` flow lists and `- item` block lists. Anything else is read
 * as a plain scalar.
 *
 * @example
 * ```ts
 * import { parseFrontmatter } from "./frontmatter.ts";
 * parseFrontmatter("name: a\ntools: [Read, Grep]\ndescription: |\n  x\n  y\n");
 * // Map { "name" => "a", "tools" => ["Read", "Grep"], "description" => "x\ny\n" }
 * ```
 */
export function parseFrontmatter(yaml: string): ReadonlyMap<string, YamlValue> {
  // A `--loaded` run parses each text once (the listing, the invocation and the spawn read the
  // same files): every caller reads the one map, never modified.
  const parsed = runTable<Map<string, YamlValue>>("frontmatter");
  // One final newline more or less changes nothing but a `|+`/`>+` block's kept blank lines (the
  // listing's split leaves it out, Claude Code's keeps it): both spellings are one parse.
  const key = yaml.endsWith("\n") && !yaml.includes("|+") && !yaml.includes(">+")
    ? yaml.slice(0, -1)
    : yaml;
  let fields = parsed?.get(key);
  if (fields === undefined) {
    fields = parseFields(yaml);
    parsed?.set(key, fields);
  }
  return fields;
}

/**
 * A line `key: value` whose value is a plain scalar on its own: no indentation, no comment, no
 * quote, flow list or block, no CR, nothing to trim.
 */
const SIMPLE_FIELD = /^([A-Za-z_][\w-]*)[ \t]*:[ \t]+([^\s"'[|>#](?:[^#\r]*\S)?)$/;
/** A line `key: |` or `key: >`: a literal or folded block follows. */
const BLOCK_START = /^([A-Za-z_][\w-]*)[ \t]*:[ \t]+([|>])[ \t]*$/;
/** The leading spaces and tabs of a line. */
const LEADING = /^[ \t]*/;

/**
 * The fields of a block made only of {@linkcode SIMPLE_FIELD} lines and `|`/`>` blocks whose lines
 * are indented with spaces and none blank (most frontmatter), read as {@linkcode parseFields}
 * reads them; undefined for any other block.
 */
function simpleFields(yaml: string): Map<string, YamlValue> | undefined {
  if (yaml.includes("\r")) return undefined;
  const result = new Map<string, YamlValue>();
  const lines = yaml.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = SIMPLE_FIELD.exec(lines[i]);
    if (m !== null) {
      // `~` and `null` are YAML's null: no value.
      result.set(m[1], m[2] === "~" || m[2] === "null" ? undefined : m[2]);
      continue;
    }
    const block = BLOCK_START.exec(lines[i]);
    if (block === null) return undefined;
    const first = i + 1;
    let indent = Number.POSITIVE_INFINITY;
    while (i + 1 < lines.length && /^[ \t]/.test(lines[i + 1])) {
      const line = lines[i + 1];
      const lead = LEADING.exec(line)![0];
      if (lead.includes("\t") || line.trim() === "") return undefined;
      indent = Math.min(indent, lead.length);
      i++;
    }
    if (i < first) return undefined;
    const body = lines.slice(first, i + 1).map((l) => l.slice(indent));
    // Clipped: one final newline; folded lines (none blank) joined by spaces.
    result.set(block[1], `${body.join(block[2] === "|" ? "\n" : " ")}\n`);
  }
  return result;
}

function parseFields(yaml: string): Map<string, YamlValue> {
  const simple = simpleFields(yaml);
  if (simple !== undefined) return simple;
  const result = new Map<string, YamlValue>();
  const raw = yaml.split("\n").map((l) => l.replace(/\r$/, ""));
  // A block whose every line is indented alike is a mapping all the same: read it dedented.
  const common = raw.filter((l) => l.trim() !== "")
    .reduce((n, l) => Math.min(n, indentOf(l).at), Number.POSITIVE_INFINITY);
  const lines = Number.isFinite(common) && common > 0
    ? raw.map((l) => (l.trim() === "" ? l : l.slice(common)))
    : raw;
  let i = 0;
  while (i < lines.length) {
    const m = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+|$)([\s\S]*)$/.exec(lines[i]);
    i++;
    if (m === null) continue;
    const key = m[1];
    const inline = m[2].trim();
    // The following more-indented (or blank) lines belong to this key.
    const more: string[] = [];
    while (
      i < lines.length &&
      (lines[i].trim() === "" || /^[ \t]/.test(lines[i]) || /^- /.test(lines[i]) && inline === "")
    ) {
      more.push(lines[i]);
      i++;
    }
    // A `|+`/`>+` block keeps its trailing blank lines; any other value drops them.
    const kept = /^[|>]\+$/.test(inline);
    let trailing = 0;
    while (more.length > 0 && more[more.length - 1].trim() === "") {
      more.pop();
      trailing++;
    }
    let value: YamlValue;
    if (/^[|>][+-]?$/.test(inline)) {
      // A reduce, not Math.min(...): a block may have more lines than a call has arguments.
      const indent = more.filter((l) => l.trim() !== "")
        .reduce((n, l) => Math.min(n, indentOf(l).at), Number.POSITIVE_INFINITY);
      const body = more.map((
        l,
      ) => (l.trim() === "" ? "" : l.slice(Number.isFinite(indent) ? indent : 0)));
      const keep = inline.endsWith("+") ? "keep" : inline.endsWith("-") ? "strip" : "clip";
      const joined = inline.startsWith("|") ? body.join("\n") : foldLines(body);
      value = keep === "strip" || joined === "" ? joined : `${joined}\n`;
      if (kept && joined !== "") value += "\n".repeat(trailing);
    } else if (inline.startsWith("[") && inline.endsWith("]")) {
      value = flowList(inline);
    } else if (inline === "" && more.some((l) => /^[ \t]*- /.test(l))) {
      value = more.filter((l) => /^[ \t]*- /.test(l)).map((l) =>
        unquote(l.replace(/^[ \t]*- /, ""))
      );
    } else if (inline === "" && more.length === 0) {
      value = "";
    } else if (/^["']/.test(inline)) {
      value = unquote([inline, ...more.map((l) => l.trim())].filter((s) => s !== "").join(" "));
    } else {
      const parts = [inline, ...more.map((l) => l.trim())].map(withoutComment)
        .filter((s) => s !== "");
      const joined = parts.join(" ");
      // `~` and `null` are YAML's null: no value.
      value = joined === "~" || joined === "null" ? undefined : joined;
    }
    // The last of duplicate keys wins (observed: yaml-duplicate-keys).
    result.set(key, value);
  }
  return result;
}

function foldLines(lines: string[]): string {
  let out = "";
  for (let i = 0; i < lines.length; i++) {
    if (i === 0) out = lines[0];
    else if (lines[i] === "") out += "\n";
    else out += out.endsWith("\n") || out === "" ? lines[i] : ` ${lines[i]}`;
  }
  return out;
}

/** A frontmatter value as one string (a list joined by `, `), or undefined. */
export function scalar(value: YamlValue): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : value.join(", ");
}
