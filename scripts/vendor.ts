/**
 * `deno task vendor`: build the tree-shaken, minified builds of the npm dependencies the tools load
 * on every run — `lib/_vendor/zod_mini.js` (the `zod/mini` functions ctxkit calls) and
 * `lib/_vendor/jsonc_parser.js` (`parse` and `printParseErrorCode` of `jsonc-parser`) — from the
 * packages `npm ci` installed, and copy each licence beside its build. `lib/_zod.ts` and
 * `lib/prose/config.ts` import them with the packages' own types (`@ts-types`).
 *
 * Why (`references/startup.md#vendored-builds`): imported from `node_modules`, `zod/mini` loads
 * all of zod's core and its ~40 locales (+12 ms per run, as much as a Deno hello-world), and
 * `jsonc-parser` is a UMD module that drags in Deno's Node compatibility layer (+17 ms); these
 * builds of what the tools call cost about 1 ms. Same packages, same versions, same behaviour (zod
 * speaks English as classic zod does).
 *
 *   deno run -A scripts/vendor.ts           write the builds
 *   deno run -A scripts/vendor.ts --check   exit 1 when a committed build is stale
 *
 * `tests/vendor_test.ts` fails when a committed build differs from a fresh one.
 *
 * @module
 */

import { type ParseErrorCode, printParseErrorCode } from "jsonc-parser";
import { calledFunctions, eagerCompile, readCoverage } from "./_eager.ts";
import { runChecked } from "./tools.ts";
import { writeFileAtomic } from "../lib/_fs/write.ts";
import * as z from "../lib/_zod.ts";

/** The zod/mini names ctxkit's schemas use, re-exported by the vendored build. */
export const ZOD_NAMES: readonly string[] = [
  "_default",
  "array",
  "boolean",
  "check",
  "config",
  "custom",
  "discriminatedUnion",
  "enum",
  "extend",
  "int",
  "iso",
  "literal",
  "looseObject",
  "maxLength",
  "maximum",
  "minLength",
  "minimum",
  "nonnegative",
  "nullable",
  "number",
  "object",
  "optional",
  "pick",
  "prefault",
  "refine",
  "regex",
  "startsWith",
  "strictObject",
  "string",
  "superRefine",
  "union",
  "unknown",
];

const REPO = new URL("..", import.meta.url).pathname;

/** One vendored build: the package it comes from and the entry module it bundles. */
export interface VendoredBuild {
  /** The build, relative to the repository. */
  path: string;
  /** The npm package (its `package.json` gives the version, its `LICENSE` the licence). */
  pkg: string;
  /** What the build is, for its header line. */
  what: string;
  /** The entry module's source. */
  entry: string;
}

/** Every vendored build. */
export const VENDORED: readonly VendoredBuild[] = [
  {
    path: "lib/_vendor/zod_mini.js",
    pkg: "zod",
    what: `zod/mini's ${ZOD_NAMES.length} functions ctxkit uses`,
    // Classic zod speaks English by default; zod/mini needs the locale set once. Jitless: a tool
    // parses a document or two per run, so compiling a fast parser per schema (new Function) costs
    // more than it saves.
    entry: `import { config } from "zod/mini";\nimport en from "zod/v4/locales/en.js";\n` +
      `config(en());\nconfig({ jitless: true });\n` +
      `export { ${ZOD_NAMES.join(", ")} } from "zod/mini";\n`,
  },
  {
    path: "lib/_vendor/jsonc_parser.js",
    pkg: "jsonc-parser",
    what: "jsonc-parser's parse and printParseErrorCode",
    // `parse` from the parser module alone: the package's main module also loads the formatter,
    // which builds 1,200 indentation strings (≈ 400 KB of heap, a garbage collection) at load.
    // `printParseErrorCode` lives in that main module, so its names are read from the package here
    // and written into the build.
    entry: `export { parse } from "jsonc-parser/lib/esm/impl/parser.js";\n` +
      `const NAMES = ${JSON.stringify(parseErrorNames())};\n` +
      `export function printParseErrorCode(code) {\n` +
      `  return NAMES[code] ?? ${JSON.stringify(parseErrorName(0))};\n}\n`,
  },
];

/** The package's `printParseErrorCode` of any number (0 has no name: the "unknown" text). */
function parseErrorName(code: number): string {
  return printParseErrorCode(code as ParseErrorCode);
}

/** `printParseErrorCode`'s name for each code, by code. */
function parseErrorNames(): Record<number, string> {
  const names: Record<number, string> = {};
  for (let code = 1; parseErrorName(code) !== parseErrorName(0); code++) {
    names[code] = parseErrorName(code);
  }
  return names;
}

const PackageJson = z.looseObject({ version: z.string() });

function packageVersion(pkg: string): string {
  const text = Deno.readTextFileSync(`${REPO}node_modules/${pkg}/package.json`);
  return PackageJson.parse(JSON.parse(text)).version;
}

/** The package's licence text (`LICENSE` or `LICENSE.md`). */
function licenceOf(pkg: string): string {
  for (const name of ["LICENSE", "LICENSE.md"]) {
    try {
      return Deno.readTextFileSync(`${REPO}node_modules/${pkg}/${name}`);
    } catch { /* try the next name */ }
  }
  throw new Error(`no licence file in node_modules/${pkg}`);
}

/**
 * The build at `path` with every function written to compile with the module
 * (`references/startup.md#eager-functions`): loading it under coverage lists its functions, and
 * the same Deno lists the same ones, so the build stays reproducible.
 */
function eagerAll(path: string, dir: string): string {
  const source = Deno.readTextFileSync(path);
  const coverage = `${dir}/coverage`;
  runChecked([Deno.execPath(), "run", "--no-config", `--coverage=${coverage}`, path], {
    cwd: REPO,
  });
  const all = calledFunctions(readCoverage(coverage, path), source.length, { uncalled: true });
  return eagerCompile(source, all).source;
}

/** A fresh build of `build`'s bytes. */
export function buildVendored(build: VendoredBuild): string {
  const dir = Deno.makeTempDirSync({ prefix: "ctxkit-vendor-", dir: REPO });
  try {
    const entry = `${dir}/entry.ts`;
    Deno.writeTextFileSync(entry, build.entry);
    const out = `${dir}/out.js`;
    runChecked(
      [Deno.execPath(), "bundle", "--quiet", "--platform", "deno", "--minify", "-o", out, entry],
      { cwd: REPO },
    );
    const code = eagerAll(out, dir);
    const licence = `${build.pkg}.LICENSE`;
    const header =
      `// Generated by scripts/vendor.ts from ${build.pkg} ${packageVersion(build.pkg)} ` +
      `(MIT, see ${licence}): ${build.what}. Do not edit.\n`;
    return header + code;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) {
  let stale = false;
  for (const build of VENDORED) {
    const fresh = buildVendored(build);
    if (Deno.args.includes("--check")) {
      if (Deno.readTextFileSync(`${REPO}${build.path}`) !== fresh) {
        console.error(`stale: ${build.path} (run deno task vendor)`);
        stale = true;
      }
      continue;
    }
    Deno.mkdirSync(`${REPO}lib/_vendor`, { recursive: true });
    writeFileAtomic(`${REPO}${build.path}`, fresh, { mode: 0o644 });
    writeFileAtomic(`${REPO}lib/_vendor/${build.pkg}.LICENSE`, licenceOf(build.pkg), {
      mode: 0o644,
    });
    console.log(`wrote ${build.path} (${fresh.length} bytes)`);
  }
  if (stale) Deno.exit(1);
}
