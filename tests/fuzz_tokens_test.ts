/**
 * Property tests of the critical-token extractor (reliability suite): deterministic, set-semantic
 * (reordering, repeating or dropping duplicate lines never creates a miss), total on any bytes, and
 * the linear-time class regexes match exactly what the plain regexes of
 * `references/context-guard.md#critical-tokens` match.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { extractBaseTokens, missingTokens, tokenSet } from "../lib/guard/tokens.ts";
import { extractExtendedTokens, stripTrailingPunctuation } from "../lib/guard/tokens_ext.ts";
import { fuzzRuns, fuzzSeed } from "./stress/_properties.ts";

const RUNS = fuzzRuns(1000);
const SEED = fuzzSeed();
const params = { numRuns: RUNS, seed: SEED };

/** Characters every class cares about, so random lines hit real matches and near-misses. */
const LINE_CHARS = [..."aAzZ019_.-/@*{}!=`<>% \t\rxmdjstNEVRMUSTOhp:/йЖ_T".split(""), "\u00e9"];
const line = fc.array(fc.constantFrom(...LINE_CHARS), { maxLength: 40 }).map((a) => a.join(""));
const anyLine = fc.oneof(line, fc.string({ unit: "binary", maxLength: 40 }))
  .map((s) => s.replaceAll("\n", " "));

Deno.test(`tokens: deterministic and total on arbitrary bytes (seed ${SEED})`, () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.constantFrom("base", "ext"), (b, alpha) => {
      const a = [...tokenSet(b, alpha)].sort();
      assert.deepEqual([...tokenSet(b, alpha)].sort(), a);
      assert.deepEqual([...tokenSet(b.slice(), alpha)].sort(), a);
    }),
    params,
  );
});

Deno.test(`tokens: reordering, repeating and deduplicating lines never creates a miss (seed ${SEED})`, () => {
  fc.assert(
    fc.property(
      fc.array(anyLine, { maxLength: 12 }),
      fc.constantFrom("base", "ext"),
      fc.infiniteStream(fc.nat()),
      (lines, alpha, picks) => {
        const before = tokenSet(lines.join("\n"), alpha);
        const shuffled = lines.map((l) => [picks.next().value, l] as const)
          .sort((x, y) => x[0] - y[0]).map(([, l]) => l);
        const repeated = [...shuffled, ...lines.slice(0, 3)];
        const deduped = [...new Set(lines)];
        for (const variant of [shuffled, repeated, deduped]) {
          for (const text of [variant.join("\n"), variant.join("\n") + "\n"]) {
            const after = tokenSet(text, alpha);
            assert.deepEqual(missingTokens(before, after), []);
            assert.deepEqual(missingTokens(after, before), []);
          }
        }
      },
    ),
    params,
  );
});

// The documented regexes as written (references/context-guard.md#critical-tokens): the reference
// the faster ones must agree with.
const SPEC_BASE = [
  { prefix: "num:", regex: /[0-9]+(?:\.[0-9]+)*/g, strip: false },
  { prefix: "path:", regex: /[A-Za-z0-9_@.-]*\/[A-Za-z0-9_@./-]+/g, strip: true },
  { prefix: "neg:", regex: /!=[A-Za-z0-9_./-]*/g, strip: true },
  { prefix: "kw:", regex: /NEVER|ALWAYS|MUST NOT|DO NOT|REQUIRED|MANDATORY/g, strip: false },
];
const SPEC_EXT: { prefix: string; regex: RegExp; strip?: boolean }[] = [
  { prefix: "ver:", regex: /[0-9]+(?:\.[0-9]+)+(?:[+-][A-Za-z0-9][A-Za-z0-9.]*)?/g },
  { prefix: "glob:", regex: /[A-Za-z0-9_.{}/-]*\*+[A-Za-z0-9_.{}*/-]*/g },
  { prefix: "file:", regex: /[A-Za-z0-9_.-]+\.(?:mdx|md|json|mjs|js|ts|sh|ya?ml|toml|py|txt)/gi },
  { prefix: "env:", regex: /[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){2,}/g },
  { prefix: "tick:", regex: /`[^`]+`/g },
  {
    prefix: "lneg:",
    regex: /\b(?:never|do not|don'?t|must not|avoid|refuse|forbidden|unless|except|only)\b/gi,
  },
  { prefix: "url:", regex: /https?:\/\/[^ )>"'`]+/g, strip: true },
  { prefix: "cmp:", regex: /[<>]=?[ \t\v\f\r]*[0-9]+(?:\.[0-9]+)?%?/g },
  { prefix: "slug:", regex: /[a-z][a-z0-9]*(?:-[a-z0-9]+)+/g },
  { prefix: "cyr:", regex: /[\u0410-\u044F\u0401\u0451]+/gu },
];

function specTokens(l: string, classes: { prefix: string; regex: RegExp; strip?: boolean }[]) {
  const out: string[] = [];
  for (const c of classes) {
    for (const m of l.matchAll(c.regex)) {
      out.push(c.prefix + (c.strip ? m[0].replace(/[.,;:]+$/, "") : m[0]));
    }
  }
  return out;
}

Deno.test(`tokens: every class matches exactly as the documented plain regex (seed ${SEED})`, () => {
  // Starts inside a run, after a digit, after a previous match: where a start-skipping shortcut
  // would go wrong.
  for (
    const l of [
      "1ABC_D_E x9ab-cd 7a-b",
      "a.md.mdx.b a.js.mdq .md x..md",
      "ab/cd/ef.g a@b/c. /x //y a-b/c",
      "a*b*c x{a,b}*/y ** 1*",
      "A_B_C_D9_E 1A_B_C_D AB1_C_D",
      "x-y-z1 1x-y a1-b2-c3",
      "12345 1.2.3 45.6.7+rc 9.x 1.2.3.4+ab.1 007.1 1.2-",
    ]
  ) {
    assert.deepEqual(extractBaseTokens(l), specTokens(l, SPEC_BASE), l);
    assert.deepEqual(extractExtendedTokens(l), specTokens(l, SPEC_EXT), l);
  }
  fc.assert(
    fc.property(anyLine, (l) => {
      assert.deepEqual(extractBaseTokens(l), specTokens(l, SPEC_BASE));
      assert.deepEqual(extractExtendedTokens(l), specTokens(l, SPEC_EXT));
    }),
    { numRuns: RUNS * 5, seed: SEED },
  );
});

Deno.test(`tokens: the trailing-punctuation strip is the catalog's /[.,;:]+$/ removal (seed ${SEED})`, () => {
  const chars = fc.constantFrom(..."ab/.,;:!=x".split(""));
  fc.assert(
    fc.property(fc.array(chars, { maxLength: 30 }).map((a) => a.join("")), (s) => {
      assert.equal(stripTrailingPunctuation(s), s.replace(/[.,;:]+$/, ""));
    }),
    params,
  );
});
