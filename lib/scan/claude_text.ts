/**
 * What Claude Code makes of an instruction file's text, as pure string functions (`--loaded`;
 * `references/context-scan.md#loaded-figures`): the frontmatter it strips, the block-level HTML
 * comments it hides, the `@path` imports it follows (never inside code or HTML blocks), the text it
 * trims, the `MEMORY.md` cut and its warning line, and the small YAML subset a frontmatter needs.
 * Each rule's numbers live in `loading_rules.ts`. Every function is one pass over the lines.
 *
 * @module
 */

import { MEMORY_INDEX } from "./loading_rules.ts";
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
 * import { splitFrontmatter } from "./claude_text.ts";
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

/** One `@path` import found in a text: the path as written (fragment kept). */
export type ImportToken = string;

/** The shown text of an instruction file and the imports it names. */
export interface ShownText {
  /** The text Claude Code sends: frontmatter stripped, block comments hidden, trimmed. */
  readonly text: string;
  /** `@path` tokens outside code spans, code blocks and HTML blocks, in order. */
  readonly imports: readonly ImportToken[];
  /** True when a frontmatter was stripped. */
  readonly frontmatterStripped: boolean;
  /** True when at least one block-level HTML comment was hidden. */
  readonly commentsHidden: boolean;
}

const BLOCK_TAGS = new Set(
  ("address article aside base basefont blockquote body caption center col colgroup dd details " +
    "dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 " +
    "head header hr html iframe legend li link main menu menuitem meta nav noframes ol optgroup " +
    "option p param search section summary table tbody td tfoot th thead title tr track ul")
    .split(" "),
);

/** The indentation (spaces, a tab counting to the next multiple of 4) and where content starts. */
function indentOf(line: string): { width: number; at: number } {
  let width = 0;
  let at = 0;
  while (at < line.length && (line[at] === " " || line[at] === "\t")) {
    width = line[at] === "\t" ? width + 4 - (width % 4) : width + 1;
    at++;
  }
  return { width, at };
}

function fenceOpening(line: string): { char: string; length: number } | undefined {
  const { width, at } = indentOf(line);
  if (width > 3) return undefined;
  const char = line[at];
  if (char !== "`" && char !== "~") return undefined;
  let j = at;
  while (line[j] === char) j++;
  if (j - at < 3) return undefined;
  if (char === "`" && line.indexOf("`", j) !== -1) return undefined;
  return { char, length: j - at };
}

function closesFence(line: string, fence: { char: string; length: number }): boolean {
  const { width, at } = indentOf(line);
  if (width > 3) return false;
  let j = at;
  while (line[j] === fence.char) j++;
  return j - at >= fence.length && line.slice(j).trim() === "";
}

/** The kind of HTML block a line opens (CommonMark types 2, 6, 7), or undefined. */
function htmlBlockStart(line: string, inParagraph: boolean): "comment" | "block" | undefined {
  const { width, at } = indentOf(line);
  if (width > 3 || line[at] !== "<") return undefined;
  if (line.startsWith("<!--", at)) return "comment";
  const tag = /^<\/?([A-Za-z][A-Za-z0-9-]*)(?=[\s/>]|$)/.exec(line.slice(at));
  if (tag !== null && BLOCK_TAGS.has(tag[1].toLowerCase())) return "block";
  if (inParagraph) return undefined; // type 7 cannot interrupt a paragraph
  // Type 7: a complete open or closing tag alone on its line (a short one: bounded work).
  const rest = line.slice(at).trimEnd();
  if (rest.length > 4096) return undefined;
  if (
    /^<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?)*\s*\/?>$/
      .test(rest)
  ) {
    return "block";
  }
  if (/^<\/[A-Za-z][A-Za-z0-9-]*\s*>$/.test(rest)) return "block";
  return undefined;
}

/**
 * For each backtick run of `line` (by its start), where the code span it opens ends: after the next
 * run of the same length, or -1. One pass from the right, so linear whatever the runs.
 */
function codeSpanEnds(line: string): Map<number, number> {
  const runs: { at: number; length: number }[] = [];
  for (let i = line.indexOf("`"); i !== -1; i = line.indexOf("`", i)) {
    let j = i;
    while (line[j] === "`") j++;
    runs.push({ at: i, length: j - i });
    i = j;
  }
  const ends = new Map<number, number>();
  const nextOfLength = new Map<number, number>();
  for (let r = runs.length - 1; r >= 0; r--) {
    const { at, length } = runs[r];
    ends.set(at, nextOfLength.get(length) ?? -1);
    nextOfLength.set(length, at + length);
  }
  return ends;
}

/** `@path` tokens of one text line, outside code spans. */
function lineImports(line: string, out: ImportToken[]): void {
  if (!line.includes("@")) return;
  const spans = codeSpanEnds(line);
  let i = 0;
  while (i < line.length) {
    const c = line[i];
    if (c === "`") {
      let run = i;
      while (line[run] === "`") run++;
      const end = spans.get(i) ?? -1;
      i = end === -1 ? run : end; // an unmatched run is literal text
    } else if (c === "@" && (i === 0 || /\s/.test(line[i - 1]))) {
      let j = i + 1;
      while (j < line.length && !/\s/.test(line[j])) {
        j += line[j] === "\\" && line[j + 1] === " " ? 2 : 1;
      }
      const token = line.slice(i + 1, j).replaceAll("\\ ", " ");
      if (token.length > 0) out.push(token);
      i = j;
    } else {
      i++;
    }
  }
}

/**
 * `text` without its `<!--` … `-->` comments (an unclosed one stays). One pass: once no `-->`
 * follows an opener, none follows a later one either.
 */
function withoutComments(text: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const open = text.indexOf("<!--", at);
    if (open === -1) break;
    const close = text.indexOf("-->", open + 4);
    if (close === -1) break;
    out += text.slice(at, open);
    at = close + 3;
  }
  return out + text.slice(at);
}

/**
 * The text Claude Code sends for an instruction file (`CLAUDE.md`, a rule, an import, `MEMORY.md`
 * before its cut): a leading byte-order mark and the frontmatter stripped, every block-level HTML
 * comment hidden (a comment that starts a line outside code, with the rest of its last line and
 * the newlines after it; what is left besides the comment stays), the whole trimmed. Inline
 * comments, comments in code and in other HTML blocks stay. Imports are the `@path` tokens outside
 * code spans, fenced or indented code and HTML blocks.
 *
 * @example
 * ```ts
 * import { shownText } from "./claude_text.ts";
 * shownText("---\nx: 1\n---\n# A\n<!-- note -->\nsee @b.md `@c.md`\n").text; // "# A\nsee @b.md `@c.md`"
 * ```
 */
export function shownText(
  raw: string,
  options: { frontmatter?: boolean; trim?: boolean } = {},
): ShownText {
  const withoutBom = raw.startsWith("\uFEFF") ? raw.slice(1) : raw;
  const split = options.frontmatter === false
    ? { yaml: undefined, body: withoutBom }
    : splitFrontmatter(withoutBom);
  const body = split.body;
  const imports: ImportToken[] = [];
  const out: string[] = [];
  let commentsHidden = false;
  let fence: { char: string; length: number } | undefined;
  let html: "block" | undefined;
  let inParagraph = false;
  let at = 0;
  while (at < body.length) {
    const nl = body.indexOf("\n", at);
    const end = nl === -1 ? body.length : nl + 1;
    const line = body.slice(at, nl === -1 ? body.length : nl);
    const blank = line.trim() === "";
    if (fence !== undefined) {
      if (closesFence(line, fence)) fence = undefined;
      out.push(body.slice(at, end));
      at = end;
      continue;
    }
    if (html === "block") {
      out.push(body.slice(at, end));
      if (blank) html = undefined;
      at = end;
      continue;
    }
    const opening = fenceOpening(line);
    if (opening !== undefined) {
      fence = opening;
      inParagraph = false;
      out.push(body.slice(at, end));
      at = end;
      continue;
    }
    const kind = htmlBlockStart(line, inParagraph);
    if (kind === "comment") {
      // The comment through its `-->` (or the end of the text), the rest of that line, and the
      // newlines right after it: one block.
      const open = at + indentOf(line).at;
      const close = body.indexOf("-->", open + 4);
      let stop: number;
      if (close === -1) stop = body.length;
      else {
        const lineEnd = body.indexOf("\n", close + 3);
        stop = lineEnd === -1 ? body.length : lineEnd;
        while (body[stop] === "\n") stop++;
      }
      const block = body.slice(at, stop);
      const rest = withoutComments(block);
      if (rest !== block) commentsHidden = true;
      out.push(rest.trim() === "" ? "" : rest);
      inParagraph = false;
      at = stop;
      continue;
    }
    if (kind === "block") {
      html = blank ? undefined : "block";
      inParagraph = false;
      out.push(body.slice(at, end));
      at = end;
      continue;
    }
    if (!inParagraph && indentOf(line).width >= 4 && !blank) {
      out.push(body.slice(at, end)); // indented code
      at = end;
      continue;
    }
    if (!blank) lineImports(line, imports);
    inParagraph = !blank;
    out.push(body.slice(at, end));
    at = end;
  }
  const joined = out.join("");
  return {
    // On access Claude Code sends the text untrimmed (`references/context-scan.md#tier-rules`).
    text: options.trim === false ? joined : joined.trim(),
    imports,
    frontmatterStripped: split.yaml !== undefined,
    commentsHidden,
  };
}

/** A `MEMORY.md` after Claude Code's cut: the text sent, and whether it was cut. */
export interface MemoryIndexText {
  /** The text sent (the kept lines, then the warning line when cut). */
  readonly text: string;
  /** True when the index was cut. */
  readonly truncated: boolean;
}

function kb(units: number): string {
  return `${(units / 1024).toFixed(1)}KB`;
}

/**
 * `MEMORY.md` as Claude Code sends it: its shown text cut to the first
 * {@linkcode MEMORY_INDEX.lines} lines, then to whole lines within {@linkcode MEMORY_INDEX.units}
 * UTF-16 units (a first line longer than that is cut inside it), followed by the
 * `> WARNING: MEMORY.md is …` line Claude Code appends when it cuts.
 */
export function memoryIndexText(shown: string): MemoryIndexText {
  const lines = shown.split("\n");
  const maxLines = MEMORY_INDEX.lines;
  const maxUnits = MEMORY_INDEX.units;
  const overLines = lines.length > maxLines;
  const overSize = shown.length > maxUnits;
  if (!overLines && !overSize) return { text: shown, truncated: false };
  let kept = overLines ? lines.slice(0, maxLines).join("\n") : shown;
  let keptLines = overLines ? maxLines : lines.length;
  let cutInsideLine = false;
  if (kept.length > maxUnits) {
    const nl = kept.lastIndexOf("\n", maxUnits);
    if (nl > 0) {
      kept = kept.slice(0, nl);
      keptLines = kept.split("\n").length;
    } else {
      kept = kept.slice(0, maxUnits);
      cutInsideLine = true;
    }
  }
  const limitKb = kb(maxUnits);
  const what = overLines && overSize
    ? `${lines.length} lines and ${kb(shown.length)}`
    : overLines
    ? `${lines.length} lines (limit: ${maxLines})`
    : `${kb(shown.length)} (limit: ${limitKb}) — index entries are too long`;
  let cut: string;
  if (cutInsideLine) {
    cut = `everything after the first ${maxUnits} characters of line 1 was cut off`;
  } else {
    const first = lines[keptLines] ?? "";
    // The excerpt never splits a surrogate pair: a pair the cut would halve is left out.
    const head = first.slice(0, MEMORY_INDEX.excerpt - 1);
    const whole = /[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head;
    const excerpt = first.length > MEMORY_INDEX.excerpt ? `${whole}…` : first;
    cut = `${lines.length - keptLines} of ${lines.length} lines were cut off, starting at line ${
      keptLines + 1
    } ("${excerpt}")`;
  }
  const warning =
    `> WARNING: MEMORY.md is ${what}. Only part of it was loaded: ${cut}. Keep index entries to one line under ~200 chars; move detail into topic files.`;
  return { text: `${kept}\n\n${warning}`, truncated: true };
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
 * import { parseFrontmatter } from "./claude_text.ts";
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
