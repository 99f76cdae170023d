/**
 * `match` never hangs (issue 23, point 1; `references/prose.md#trigger`): every pattern shape — an
 * alternative that matches at an astral character, one that matches the empty string, lookarounds,
 * classes of code points — against emoji-heavy, lone-surrogate and empty-match inputs. A hang must
 * fail the test rather than freeze the suite, so the cases run in child processes that a generous
 * deadline kills (the deadline only guards against a hang: every run that ends is awaited).
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
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
  const word = "[\\p{Script=Latin}\\p{M}0-9_]";
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
  const trigger = pathToFileURL(join(REPO, "lib", "prose", "trigger.ts")).href;
  const cases = PATTERNS.flatMap((pattern) =>
    [true, false].flatMap((caseInsensitive) =>
      INPUTS.map((input) => ({ pattern, caseInsensitive, input }))
    )
  );
  const source = `
import { defaultConfig } from ${JSON.stringify(config)};
import { matchTrigger, stopTriggerWorker } from ${JSON.stringify(trigger)};
const cases = ${JSON.stringify(cases)};
const tokens = [];
for (const { pattern, caseInsensitive, input } of cases) {
  const config = defaultConfig();
  config.trigger = { enabled: true, caseInsensitive, pattern };
  // A budget far above any of these cases' (they are linear): only a hang would reach it.
  const m = await matchTrigger(input, config, 60_000);
  if (m.timedOut) throw new Error("timed out: " + pattern);
  tokens.push(m.token);
}
stopTriggerWorker();
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

Deno.test("a trigger pattern known to backtrack is refused at config load, naming it (issue 30.3)", async () => {
  const root = freshRoot();
  writeConfig(root, JSON.stringify({ trigger: { enabled: true, pattern: "(\\w+\\s?)+mode" } }));
  const r = await runBounded(
    [...toolArgv("prose"), "match", "--text", "a".repeat(40), "--local"],
    { CELLM_DIR: root },
  );
  assert.equal(r.hung, false, "match hung on a backtracking pattern");
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr.split("\n")[0],
    `PROSE-ERROR: code=config field=trigger.pattern ${
      join(root, "prose", "config.json")
    }: "(\\\\w+\\\\s?)+" repeats a group that repeats inside it, which can take minutes on one prompt; write it without the nested repetition`,
  );
});

Deno.test("any other pattern has a hard bound: a prompt it would hold for minutes is no match, with a warning (issue 30.3)", async () => {
  const root = freshRoot();
  // Not refused at load (no nested repetition), yet exponential in a backtracking engine.
  writeConfig(root, JSON.stringify({ trigger: { enabled: true, pattern: "(\\w|\\d)+mode" } }));
  // A prompt holding a 40-character identifier, as in the report.
  const prompt = `rename ${"1".repeat(40)} please`;
  const r = await runBounded(
    [...toolArgv("prose"), "match", "--hook-input", "--activate", "--local"],
    { CELLM_DIR: root },
    JSON.stringify({ prompt }),
  );
  assert.equal(r.hung, false, "match held the prompt");
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout, "PROSE: match=no reason=trigger-timeout\n");
  assert.equal(
    r.stderr,
    "PROSE-WARN: trigger.pattern searched this prompt for more than 1000 ms; no match (write it as a list of words)\n❌ FAILED EXIT:1\n",
  );
  assert.equal(existsSync(join(root, "prose", ".active")), false, "nothing was activated");
  // The same pattern still matches where it can.
  const ok = await runBounded(
    [...toolArgv("prose"), "match", "--text", "say x1mode now", "--local"],
    { CELLM_DIR: root },
  );
  assert.equal(ok.stdout, "PROSE: match=yes token=x1mode\n");
});

Deno.test("prosélytisme is no match in NFC or NFD, and --activate activates nothing (issue 30.5)", async () => {
  const root = freshRoot();
  writeConfig(root, JSON.stringify({ trigger: { enabled: true } }));
  for (const form of ["NFC", "NFD"] as const) {
    const word = "prosélytisme".normalize(form);
    const text = await runBounded(
      [...toolArgv("prose"), "match", "--text", word, "--local"],
      { CELLM_DIR: root },
    );
    assert.equal(text.stdout, "PROSE: match=no\n", form);
    assert.equal(text.code, 1, form);
    const hook = await runBounded(
      [...toolArgv("prose"), "match", "--hook-input", "--activate", "--local"],
      { CELLM_DIR: root },
      JSON.stringify({ prompt: `un ${word} discret` }),
    );
    assert.equal(hook.stdout, "PROSE: match=no\n", form);
    assert.equal(existsSync(join(root, "prose", ".active")), false, form);
  }
  // The word itself, accents or not, still switches it on.
  const yes = await runBounded(
    [...toolArgv("prose"), "match", "--text", "en prose, s'il vous plaît", "--local"],
    { CELLM_DIR: root },
  );
  assert.equal(yes.stdout, "PROSE: match=yes token=prose\n");
});
