/**
 * `match` never hangs (issue 23, point 1; `references/prose.md#trigger`): every pattern shape — an
 * alternative that matches at an astral character, one that matches the empty string, lookarounds,
 * classes of code points — against emoji-heavy, lone-surrogate and empty-match inputs. A hang must
 * fail the test rather than freeze the suite, so the cases run in child processes that a generous
 * deadline kills (the deadline only guards against a hang: every run that ends is awaited).
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { baseEnv, makeTempDir, REPO, toolArgv } from "./_helpers.ts";
import { freshRoot, writeConfig } from "./_prose_fixtures.ts";

/** A run that has not ended after this long is a hang (a busy 2-core machine needs < 5 s). */
const HANG_MS = 120_000;

const PATTERNS = [
  "prose|📝", // the reported one: an alternative at an astral character after a letter
  "📝|prose",
  "📝",
  "prose|", // a stray trailing `|`: matches the empty string everywhere
  "|prose",
  "(?:)",
  "x*",
  "📝*",
  "(?:📝)+",
  "\\u{1F4DD}",
  "[📝-📞]",
  "\\p{Extended_Pictographic}",
  "\\p{Emoji_Presentation}+",
  ".",
  "\\S",
  "[^a]",
  "[\\s\\S]",
  "(?=📝)",
  "(?<=e)📝",
  "(?<=📝)",
  "\\b",
  "\\B",
  "^",
  "$",
  "x?",
  "\\uD83D", // a lone lead surrogate (the u flag reads it as one code point)
  "prose|prosa|plain|normal mode|modo normal|普通|普通模式",
  "pro|prose",
  "e+", // a long match that is not a whole token, at every start
];

const INPUTS = [
  "note📝 here",
  "note 📝 here",
  "📝",
  "",
  "e📝".repeat(2000),
  "📝".repeat(4000),
  "a📝b📝c📝 prose",
  "xprose y prose",
  "prosecutor📝prose",
  "👩‍👩‍👧 family 🇫🇷 flag 🏳️‍🌈",
  "\uD83D",
  "\uDCDD",
  "x\uD83Dy\uDCDDz",
  "\uDCDD\uD83D",
  "普通📝模式",
  "e📝".repeat(8000) + " prose",
  "prose!",
  "e".repeat(60_000) + "f",
  "e".repeat(60_000) + " f",
];

/**
 * What `matchTrigger` must answer: the first code point (in order) where the pattern, between two
 * token boundaries, matches something non-empty — tried at each one by itself, so it plainly ends.
 */
function oracle(text: string, pattern: string, caseInsensitive: boolean): string | null {
  const word = "[\\p{Script=Latin}0-9_]";
  const re = new RegExp(`(?<!${word})(?:${pattern})(?!${word})`, caseInsensitive ? "yui" : "yu");
  const at = (i: number) => String.fromCodePoint(text.codePointAt(i)!);
  for (let i = 0; i <= text.length; i += i < text.length ? at(i).length : 1) {
    re.lastIndex = i;
    const m = re.exec(text);
    if (m !== null && m[0] !== "") return m[0];
  }
  return null;
}

/** The outcome of a run that a deadline bounds. */
interface Bounded {
  code: number;
  stdout: string;
  stderr: string;
  hung: boolean;
}

/** Run `program args` with exactly `env`, killed after {@linkcode HANG_MS}. */
async function runBounded(
  [program, ...args]: string[],
  env: Record<string, string>,
  stdin = "",
): Promise<Bounded> {
  const child = new Deno.Command(program, {
    args,
    clearEnv: true,
    env: { ...baseEnv(), ...env },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    child.kill("SIGKILL");
  }, HANG_MS);
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin)).catch(() => {});
  await writer.close().catch(() => {});
  const result = await child.output();
  clearTimeout(timer);
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: result.code, stdout: decode(result.stdout), stderr: decode(result.stderr), hung };
}

Deno.test("matchTrigger ends on every pattern shape and input, with the whole-token answer", async () => {
  const config = pathToFileURL(join(REPO, "lib", "prose", "config.ts")).href;
  const cases = PATTERNS.flatMap((pattern) =>
    [true, false].flatMap((caseInsensitive) =>
      INPUTS.map((input) => ({ pattern, caseInsensitive, input }))
    )
  );
  const source = `
import { defaultConfig, matchTrigger } from ${JSON.stringify(config)};
const cases = ${JSON.stringify(cases)};
const tokens = cases.map(({ pattern, caseInsensitive, input }) => {
  const config = defaultConfig();
  config.trigger = { enabled: true, caseInsensitive, pattern };
  return matchTrigger(input, config).token;
});
console.log(JSON.stringify(tokens));
`;
  const file = join(makeTempDir("prose-match-"), "child.ts");
  writeFileSync(file, source);
  const r = await runBounded(
    [Deno.execPath(), "run", "--no-lock", "--config", join(REPO, "deno.json"), file],
    {},
  );
  assert.equal(r.hung, false, `matchTrigger did not end within ${HANG_MS} ms`);
  assert.equal(r.code, 0, r.stderr);
  const tokens: (string | null)[] = JSON.parse(r.stdout);
  cases.forEach(({ pattern, caseInsensitive, input }, i) => {
    const what = `${JSON.stringify(pattern)} ${caseInsensitive ? "i" : ""} on ${
      JSON.stringify(input.slice(0, 30))
    }`;
    assert.equal(tokens[i], oracle(input, pattern, caseInsensitive), what);
  });
  // The reported cases, spelled out.
  const at = (p: string, s: string) =>
    tokens[cases.findIndex((c) => c.pattern === p && c.caseInsensitive && c.input === s)];
  assert.equal(at("prose|📝", "note📝 here"), null);
  assert.equal(at("prose|📝", "note 📝 here"), "📝");
  assert.equal(at("prose|", "xprose y prose"), "prose");
  assert.equal(at("prose|", ""), null);
  // Where the preferred alternative is not a whole token, another one at the same place may be.
  assert.equal(at("pro|prose", "prose!"), "prose");
  assert.equal(at("e+", "e".repeat(60_000) + "f"), null);
  assert.equal(at("e+", "e".repeat(60_000) + " f"), "e".repeat(60_000));
});

Deno.test("the UserPromptSubmit hook answers on the reported prompts (match --hook-input)", async () => {
  const runs = [
    { pattern: "prose|📝", prompt: "note📝 here", line: "PROSE: match=no", code: 1 },
    { pattern: "prose|", prompt: "note📝 here", line: "PROSE: match=no", code: 1 },
    { pattern: "prose|", prompt: "📝 then prose", line: "PROSE: match=yes token=prose", code: 0 },
  ].map(async ({ pattern, prompt, line, code }) => {
    const root = freshRoot();
    writeConfig(root, JSON.stringify({ trigger: { enabled: true, pattern } }));
    const r = await runBounded(
      [...toolArgv("prose"), "match", "--hook-input", "--local"],
      { CELLM_DIR: root },
      JSON.stringify({ prompt }),
    );
    assert.equal(r.hung, false, `prose match hung on ${JSON.stringify(prompt)} with ${pattern}`);
    assert.equal(r.code, code, r.stderr);
    assert.equal(r.stdout, `${line}\n`);
  });
  await Promise.all(runs);
});
