/**
 * What Claude Code makes of an instruction file's text, as pure string functions (`--loaded`;
 * `references/context-scan.md#loaded-figures`): the frontmatter it strips, the block-level HTML
 * comments it hides, the `@path` imports it follows (never inside code or HTML blocks), the text it
 * trims, and the `MEMORY.md` cut and its warning line (the frontmatter itself: `frontmatter.ts`).
 * Each rule's numbers live in `loading_rules.ts`. Every function is one pass over the lines.
 *
 * @module
 */

import { indentOf, splitFrontmatter } from "./frontmatter.ts";
import { MEMORY_INDEX } from "./loading_rules.ts";

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
