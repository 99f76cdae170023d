/**
 * Profile-guided eager compilation of a bundle (`references/startup.md#eager-functions`).
 *
 * V8 compiles a function the first time it is called, and Deno's code cache holds only what was
 * compiled with the script: the top level and the functions V8 compiles eagerly. So every short
 * run compiles again every function it calls. V8 compiles eagerly a function expression written
 * in parentheses (the "PIFE" heuristic), and then the code cache holds it. This module rewrites a
 * minified bundle so that the functions a set of training runs called (their V8 coverage) are
 * compiled with the script:
 *
 * - a function expression or arrow function is wrapped in parentheses, which changes nothing else;
 * - a function declaration at the top level becomes `var NAME=(function(…){…});` at the start of
 *   the script, which is where the declaration's binding and value already were (the top level of
 *   a bundle is one scope, and a declaration is initialised before any statement runs);
 * - everything else (methods, getters, class members, declarations inside blocks or functions)
 *   stays as it is, compiled on first call as before.
 *
 * The rewrite is pure text surgery at the offsets V8 reports, checked by a small lexer (strings,
 * templates, comments, regular expressions, brackets) so that nothing inside a string or a nested
 * block is ever moved; input it cannot lex cleanly is refused, never guessed at.
 *
 * @module
 */

import * as z from "../lib/_zod.ts";

/** A function V8 reported: its source range, in UTF-16 code units. */
export interface FunctionRange {
  start: number;
  end: number;
}

/** What the rewrite did. */
export interface EagerResult {
  source: string;
  wrapped: number;
  hoisted: number;
  left: number;
}

/** The V8 coverage document `deno run --coverage` writes, one per script (the fields used). */
const ScriptCoverageSchema = z.deferred(() =>
  z.looseObject({
    url: z.string(),
    functions: z.array(z.looseObject({
      ranges: z.array(z.looseObject({
        startOffset: z.number(),
        endOffset: z.number(),
        count: z.number(),
      })),
    })),
  })
);

/** The V8 coverage document `deno run --coverage` writes, one per script. */
export type ScriptCoverage = z.output<typeof ScriptCoverageSchema>;

/** The coverage documents of `script` (an absolute path) that `deno run --coverage=dir` wrote. */
export function readCoverage(dir: string, script: string): ScriptCoverage[] {
  const url = new URL(`file://${script}`).href;
  const out: ScriptCoverage[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const doc = ScriptCoverageSchema.parse(
      JSON.parse(Deno.readTextFileSync(`${dir}/${entry.name}`)),
    );
    if (doc.url === url) out.push(doc);
  }
  return out;
}

/**
 * The ranges of the functions in `coverage` that ran at least once — or, with `uncalled`, of every
 * function V8 listed (for a module whose functions should all compile with it: a vendored build) —
 * once each, the script itself left out.
 */
export function calledFunctions(
  coverage: ScriptCoverage[],
  length: number,
  options: { uncalled?: boolean } = {},
): FunctionRange[] {
  const seen = new Map<string, FunctionRange>();
  for (const script of coverage) {
    for (const f of script.functions) {
      const r = f.ranges[0];
      if (r === undefined || (r.count === 0 && !options.uncalled)) continue;
      if (r.startOffset === 0 && r.endOffset >= length) continue;
      seen.set(`${r.startOffset}:${r.endOffset}`, { start: r.startOffset, end: r.endOffset });
    }
  }
  return [...seen.values()];
}

/** One significant token's kind, enough to tell a regular expression from a division. */
type TokenKind = "word" | "punct" | "literal" | "close";

/** What the lexer knows at one offset: the token before it and the open brackets. */
interface Place {
  previous: string;
  depth: number;
}

const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;
const REGEX_AFTER_WORDS = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "case",
  "do",
  "else",
  "yield",
  "await",
]);

/**
 * Lex `source` and record, for each offset in `wanted`, the previous significant token and the
 * bracket depth there. Throws when the source does not lex cleanly.
 */
function placesOf(source: string, wanted: Set<number>): Map<number, Place> {
  const places = new Map<number, Place>();
  // Stack of open brackets; "`" marks a `${` of a template literal.
  const stack: string[] = [];
  let previous = "";
  let kind: TokenKind = "punct";
  let i = 0;
  const n = source.length;
  const record = (at: number) => {
    if (wanted.has(at)) places.set(at, { previous, depth: stack.length });
  };
  const fail = (why: string): never => {
    throw new Error(`eager: cannot lex the bundle at offset ${i}: ${why}`);
  };
  const skipString = (quote: string) => {
    i++;
    while (i < n && source[i] !== quote) {
      if (source[i] === "\\") i++;
      else if (source[i] === "\n") fail("newline in a string");
      i++;
    }
    if (i >= n) fail("unterminated string");
    i++;
  };
  /** Skip template text from `i` to the closing backtick or a `${`; true when it was `${`. */
  const skipTemplate = (): boolean => {
    while (i < n) {
      const c = source[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        return false;
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        return true;
      } else i++;
    }
    return fail("unterminated template");
  };
  if (source.startsWith("#!")) {
    const nl = source.indexOf("\n");
    i = nl === -1 ? n : nl + 1;
  }
  while (i < n) {
    const c = source[i];
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === "/" && source[i + 1] === "/") {
      const nl = source.indexOf("\n", i);
      i = nl === -1 ? n : nl + 1;
      continue;
    }
    if (c === "/" && source[i + 1] === "*") {
      const close = source.indexOf("*/", i + 2);
      if (close === -1) fail("unterminated comment");
      i = close + 2;
      continue;
    }
    record(i);
    if (c === '"' || c === "'") {
      skipString(c);
      previous = "'";
      kind = "literal";
    } else if (c === "`") {
      i++;
      if (skipTemplate()) stack.push("`");
      previous = "`";
      kind = "literal";
    } else if (c === "/") {
      const regex = kind === "punct" || (kind === "word" && REGEX_AFTER_WORDS.has(previous));
      if (regex) {
        i++;
        let inClass = false;
        while (i < n && (inClass || source[i] !== "/")) {
          if (source[i] === "\\") i++;
          else if (source[i] === "[") inClass = true;
          else if (source[i] === "]") inClass = false;
          else if (source[i] === "\n") fail("newline in a regular expression");
          i++;
        }
        if (i >= n) fail("unterminated regular expression");
        i++;
        while (i < n && WORD.test(source[i])) i++;
        previous = "/re/";
        kind = "literal";
      } else {
        i++;
        if (source[i] === "=") i++;
        previous = "/";
        kind = "punct";
      }
    } else if (WORD.test(c)) {
      const start = i;
      if (c === "." || (c >= "0" && c <= "9")) {
        while (i < n && (WORD.test(source[i]) || source[i] === ".")) i++;
      } else while (i < n && WORD.test(source[i])) i++;
      previous = source.slice(start, i);
      kind = "word";
    } else if (c === "(" || c === "[" || c === "{") {
      stack.push(c);
      i++;
      previous = c;
      kind = "punct";
    } else if (c === ")" || c === "]" || c === "}") {
      const open = stack.pop();
      if (open === "`" && c === "}") {
        if (skipTemplate()) stack.push("`");
        previous = "`";
        kind = "literal";
        continue;
      }
      const match = c === ")" ? "(" : c === "]" ? "[" : "{";
      if (open !== match) fail(`unbalanced ${c}`);
      i++;
      previous = c;
      kind = "close";
    } else if (c === "." && /[0-9]/.test(source[i + 1] ?? "")) {
      i++;
      while (i < n && (WORD.test(source[i]) || source[i] === ".")) i++;
      previous = "0";
      kind = "word";
    } else {
      // One punctuator character at a time: only its kind matters for what follows.
      i++;
      previous = c;
      kind = "punct";
    }
  }
  if (stack.length !== 0) fail(`unclosed ${stack.at(-1)}`);
  return places;
}

/**
 * The previous tokens after which a named `function` starts an expression, not a declaration
 * (punctuators are single characters here, so `=>` shows as `>`). An anonymous one is always an
 * expression; `:` is left out on purpose: after a `case` label a named function is a declaration.
 */
const EXPRESSION_AFTER = new Set([
  "return",
  "typeof",
  "void",
  "delete",
  "new",
  "await",
  "yield",
  "in",
  "of",
  "instanceof",
  "throw",
  "(",
  "[",
  ",",
  "=",
  "?",
  "!",
  "&",
  "|",
  "+",
  "-",
  "*",
  "/",
  "%",
  "<",
  ">",
  "^",
  "~",
]);
/** The previous tokens after which `function` at the top level starts a declaration. */
const DECLARATION_AFTER = new Set(["", ";", "}"]);

const FUNCTION_HEAD = /^(async\s*)?function\s*(\*?)\s*([A-Za-z_$][\w$]*)?\s*\(/;
const ARROW_HEAD = /^(async\s*)?([A-Za-z_$][\w$]*|\()/;

type Kind = "wrap" | "hoist" | "leave";

/** Whether the text at `start` is an arrow function's parameters followed by `=>`. */
function isArrow(source: string, start: number, end: number): boolean {
  const head = ARROW_HEAD.exec(source.slice(start, Math.min(end, start + 64)));
  if (head === null) return false;
  let i = start + head[0].length;
  if (head[2] === "(") {
    // Balanced parentheses of the parameter list (defaults may hold calls, never strings with
    // parentheses in esbuild's output of our code; a mismatch only makes this answer false).
    let depth = 1;
    while (i < end && depth > 0) {
      const c = source[i];
      if (c === "(") depth++;
      else if (c === ")") depth--;
      else if (c === '"' || c === "'" || c === "`") return false;
      i++;
    }
    if (depth !== 0) return false;
  }
  while (i < end && /\s/.test(source[i])) i++;
  return source.startsWith("=>", i);
}

/**
 * Rewrite `source` so that the functions in `called` compile with the script (see the module
 * doc). Ranges that are neither a function expression, an arrow nor a top-level declaration are
 * left alone.
 */
export function eagerCompile(source: string, called: readonly FunctionRange[]): EagerResult {
  const fns = [...called].sort((a, b) => a.start - b.start || b.end - a.end);
  const places = placesOf(source, new Set(fns.map((f) => f.start)));
  const kinds = new Map<FunctionRange, Kind>();
  let open: FunctionRange[] = [];
  for (const f of fns) {
    open = open.filter((o) => o.end >= f.end && o.start <= f.start);
    const nested = open.length > 0;
    open.push(f);
    const place = places.get(f.start);
    const text = source.slice(f.start, Math.min(f.end, f.start + 200));
    let kind: Kind = "leave";
    const head = FUNCTION_HEAD.exec(text);
    if (place !== undefined && head !== null) {
      const named = head[3] !== undefined;
      if (!named || EXPRESSION_AFTER.has(place.previous)) kind = "wrap";
      else if (DECLARATION_AFTER.has(place.previous) && place.depth === 0 && !nested) {
        kind = "hoist";
      }
    } else if (
      place !== undefined && place.previous !== "." && isArrow(source, f.start, f.end)
    ) kind = "wrap";
    kinds.set(f, kind);
  }

  const hoisted: string[] = [];
  const emit = (from: number, to: number, inner: FunctionRange[]): string => {
    let out = "";
    let at = from;
    for (let k = 0; k < inner.length;) {
      const f = inner[k];
      let next = k + 1;
      while (next < inner.length && inner[next].end <= f.end) next++;
      out += source.slice(at, f.start);
      const body = emit(f.start, f.end, inner.slice(k + 1, next));
      const kind = kinds.get(f);
      if (kind === "wrap") out += `(${body})`;
      else if (kind === "hoist") {
        const head = FUNCTION_HEAD.exec(body)!;
        const anonymous = `${head[1] ?? ""}function${head[2]}(` + body.slice(head[0].length);
        hoisted.push(`var ${head[3]}=(${anonymous});`);
      } else out += body;
      at = f.end;
      k = next;
    }
    return out + source.slice(at, to);
  };
  let body = emit(0, source.length, fns.filter((f) => f.start >= 0 && f.end <= source.length));
  let shebang = "";
  if (body.startsWith("#!")) {
    const nl = body.indexOf("\n");
    shebang = body.slice(0, nl + 1);
    body = body.slice(nl + 1);
  }
  const counts = { wrap: 0, hoist: 0, leave: 0 };
  for (const k of kinds.values()) counts[k]++;
  return {
    source: shebang + (hoisted.length > 0 ? hoisted.join("") + "\n" : "") + body,
    wrapped: counts.wrap,
    hoisted: counts.hoist,
    left: counts.leave,
  };
}
