import { deepStrictEqual, throws } from "node:assert/strict";
import fc from "fast-check";
import { CtxkitError } from "../errors.ts";
import { lineTokens, missingTokens, parseAlphabet, splitLines, tokenSet } from "./tokens.ts";
import { sortUtf8 } from "../sort.ts";

const sorted = (text: string | Uint8Array, alphabet: "base" | "ext" = "base") =>
  sortUtf8(tokenSet(text, alphabet));

Deno.test("base tokens: the base-alphabet examples", () => {
  deepStrictEqual(sorted("4.0.6+codex.7"), ["num:4.0.6", "num:7"]);
  deepStrictEqual(sorted("brew*/skills/*/SKILL.md"), ["path:/SKILL.md", "path:/skills/"]);
  deepStrictEqual(sorted("2/3"), ["num:2", "num:3", "path:2/3"]);
  deepStrictEqual(sorted("!=stable,"), ["neg:!=stable"]);
});

Deno.test("base tokens: keywords without word boundary, punctuation strip, neg:!=", () => {
  deepStrictEqual(sorted("NEVERTHELESS"), ["kw:NEVER"]);
  deepStrictEqual(sorted("MUST NOT DO NOT REQUIRED MANDATORY ALWAYS"), [
    "kw:ALWAYS",
    "kw:DO NOT",
    "kw:MANDATORY",
    "kw:MUST NOT",
    "kw:REQUIRED",
  ]);
  deepStrictEqual(sorted("see docs/a.md. and x/y..;"), [
    "path:docs/a.md",
    "path:x/y",
  ]);
  deepStrictEqual(sorted("a != b"), ["neg:!="]);
  deepStrictEqual(sorted("!=x..."), ["neg:!=x"]);
});

Deno.test("base tokens: the worked-example files", () => {
  const claude =
    "# Project rules\n\nUse Node 20.11 and run scripts/build.sh before every release.\n" +
    "You MUST NOT push to main directly; NEVER skip review.\n" +
    "Set env!=prod when testing. Timeout is 30 seconds, retries 3.\n";
  deepStrictEqual(sorted(claude), [
    "kw:MUST NOT",
    "kw:NEVER",
    "neg:!=prod",
    "num:20.11",
    "num:3",
    "num:30",
    "path:scripts/build.sh",
  ]);
  const style =
    "# Style\n\nIndent with 2 spaces. Max line length 120.\nALWAYS run lint/check.sh first.\n";
  deepStrictEqual(sorted(style), ["kw:ALWAYS", "num:120", "num:2", "path:lint/check.sh"]);
});

Deno.test("lines split at LF only; CR stays; a match never crosses lines", () => {
  deepStrictEqual(splitLines("a\r\nb\n"), ["a\r", "b"]);
  deepStrictEqual(splitLines(""), []);
  deepStrictEqual(splitLines("x"), ["x"]);
  deepStrictEqual(sorted("1.\r\n2\r\n"), ["num:1", "num:2"]);
  deepStrictEqual(sorted("a/\nb"), []); // `a/` needs a character after the slash on its own line
  deepStrictEqual(sorted("MUST\nNOT"), []);
});

Deno.test("NUL-bearing and invalid UTF-8 bytes are scanned", () => {
  const bytes = new Uint8Array([0x00, 0xff, 0x31, 0x2e, 0x35, 0x00, 0x4e, 0x45, 0x56, 0x45, 0x52]);
  deepStrictEqual(sorted(bytes), ["kw:NEVER", "num:1.5"]);
  // Multi-byte characters around a token do not disturb it.
  deepStrictEqual(sorted(new TextEncoder().encode("é/ü 7€")), ["num:7"]);
});

Deno.test("ext alphabet adds the extended classes per line", () => {
  const got = sorted("сожми контекст на 40%, ещё", "ext");
  deepStrictEqual(got.filter((t) => t.startsWith("cyr:")), [
    "cyr:ещё",
    "cyr:контекст",
    "cyr:на",
    "cyr:сожми",
  ]);
  deepStrictEqual(sorted("x.mdx", "ext"), ["file:x.mdx"]);
  deepStrictEqual(sorted("4.0.6+codex.7", "ext"), ["num:4.0.6", "num:7", "ver:4.0.6+codex.7"]);
  // A backtick span never crosses a line.
  deepStrictEqual(sorted("`a\nb`", "ext"), []);
});

Deno.test("misses are sorted by code point; repeats never matter", () => {
  const before = tokenSet("NEVER 10 9 a/b 10\n");
  const after = tokenSet("10\n");
  deepStrictEqual(missingTokens(before, after), ["kw:NEVER", "num:9", "path:a/b"]);
  deepStrictEqual(missingTokens(tokenSet("5 5 5"), tokenSet("5")), []);
});

Deno.test("parseAlphabet accepts base and ext only", () => {
  deepStrictEqual(parseAlphabet("base"), "base");
  deepStrictEqual(parseAlphabet("ext"), "ext");
  throws(
    () => parseAlphabet("EXT"),
    (e) =>
      e instanceof CtxkitError && e.exitCode === 2 &&
      e.message === "unknown token alphabet: EXT (want base or ext)",
  );
});

// A brute-force POSIX matcher: at each start the longest full match, non-overlapping, left to right.
function posixMatches(line: string, source: string): string[] {
  const full = new RegExp(`^(?:${source})$`);
  const out: string[] = [];
  let at = 0;
  while (at < line.length) {
    let end = -1;
    for (let j = line.length; j > at; j--) {
      if (full.test(line.slice(at, j))) {
        end = j;
        break;
      }
    }
    if (end < 0) at++;
    else {
      out.push(line.slice(at, end));
      at = end;
    }
  }
  return out;
}

Deno.test("property: the base regexes give POSIX leftmost-longest matches", () => {
  const strip = (t: string) => t.replace(/[.,;:]+$/, "");
  const classes: [string, string, boolean][] = [
    ["num:", "[0-9]+(\\.[0-9]+)*", false],
    ["path:", "[A-Za-z0-9_@.-]*/[A-Za-z0-9_@./-]+", true],
    ["neg:", "!=[A-Za-z0-9_./-]*", true],
    ["kw:", "NEVER|ALWAYS|MUST NOT|DO NOT|REQUIRED|MANDATORY", false],
  ];
  const alphabet = fc.constantFrom(
    ..."0123456789./-_@!=,;: aZNEVRMUSTODQIALWYé\r".split(""),
    "NEVER",
    "MUST NOT",
    "DO NOT",
  );
  fc.assert(
    fc.property(fc.array(alphabet, { maxLength: 40 }), (parts) => {
      const line = parts.join("");
      const expected = new Set<string>();
      for (const [prefix, source, doStrip] of classes) {
        for (const m of posixMatches(line, source)) expected.add(prefix + (doStrip ? strip(m) : m));
      }
      deepStrictEqual(sortUtf8(tokenSet(line)), sortUtf8(expected));
    }),
    { numRuns: 500 },
  );
});

Deno.test("property: a file's token set is the union of its lines' tokens, in both alphabets", () => {
  // tokenSet scans the base classes over the whole text at once; lineTokens, line by line.
  const piece = fc.constantFrom(
    ..."0123456789./-_@!=,;: aZNEVRMUSTODQIALWYé\r\n\n\0".split(""),
    "NEVER",
    "MUST\nNOT",
    "DO NOT",
    "v1.2.3",
    "https://x.io/a",
    "\n/",
    "`--flag`",
    "$HOME",
    "0x1F",
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
      const text = parts.join("");
      for (const alphabet of ["base", "ext"] as const) {
        const expected = new Set<string>();
        for (const line of splitLines(text)) {
          for (const t of lineTokens(line, alphabet)) expected.add(t);
        }
        deepStrictEqual(sortUtf8(tokenSet(text, alphabet)), sortUtf8(expected), alphabet);
      }
    }),
    { numRuns: 500 },
  );
});
