/**
 * The vendored builds (`lib/_vendor/`, `references/startup.md#vendored-builds`) are exactly what
 * `scripts/vendor.ts` builds from the installed packages, and the zod build holds every zod
 * function the code calls: its types come from the full `zod/mini`, so a call of a function left
 * out of the build would type-check and then fail at run time — this test finds it first.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { ParseError, ParseErrorCode } from "jsonc-parser";
import * as pkg from "jsonc-parser";
// @ts-types="jsonc-parser"
import * as vendored from "../lib/_vendor/jsonc_parser.js";
import * as zod from "../lib/_zod.ts";
import { buildVendored, VENDORED } from "../scripts/vendor.ts";
import { REPO } from "./_helpers.ts";

/** Names of `z.` that are types only (`z.infer<…>`): they need no run-time value. */
const TYPE_ONLY = /^(infer|input|output|Zod[A-Za-z]*|core)$/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "_vendor" ? [] : sources(path);
    return name.endsWith(".ts") && !name.endsWith("_test.ts") ? [path] : [];
  });
}

for (const build of VENDORED) {
  Deno.test(`vendored ${build.pkg}: the committed build is byte-identical to a fresh one`, () => {
    assert.equal(readFileSync(join(REPO, build.path), "utf8"), buildVendored(build));
  });
}

Deno.test("vendored zod: every z.<function> the code calls exists at run time", () => {
  const runtime = new Set(Object.keys(zod));
  const missing: string[] = [];
  for (const file of [...sources(join(REPO, "lib")), join(REPO, "scripts", "schemas.ts")]) {
    const text = readFileSync(file, "utf8");
    if (!/from "(\.\.\/)+_zod\.ts"|from "\.\/_zod\.ts"|from "\.\.\/lib\/_zod\.ts"/.test(text)) {
      continue;
    }
    for (const [, name] of text.matchAll(/\bz\.([A-Za-z_$][\w$]*)/g)) {
      if (!TYPE_ONLY.test(name) && !runtime.has(name)) missing.push(`${file}: z.${name}`);
    }
  }
  assert.deepEqual(missing, []);
});

Deno.test("vendored jsonc-parser: parse and printParseErrorCode answer as the package does", () => {
  for (let n = 0; n <= 20; n++) {
    const code = n as ParseErrorCode;
    assert.equal(vendored.printParseErrorCode(code), pkg.printParseErrorCode(code), `code ${n}`);
  }
  const texts = [
    '{"a": 1, /* c */ "b": [2, 3,],}',
    '{"a": 1 "b": 2}',
    '{"a": tru}',
    '{"a": "\\u12"}',
    "// only\n",
    '{"a": [1, 2',
  ];
  const options = { allowTrailingComma: true, disallowComments: false };
  for (const text of texts) {
    const mine: ParseError[] = [];
    const theirs: ParseError[] = [];
    assert.deepEqual(vendored.parse(text, mine, options), pkg.parse(text, theirs, options), text);
    assert.deepEqual(mine, theirs, text);
  }
});
