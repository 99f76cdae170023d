import assert from "node:assert/strict";
import { defaultConfig, parseConfigText, type ProseConfig } from "./config.ts";
import {
  isWordList,
  matchTrigger,
  nestedRepetition,
  stopTriggerWorker,
  tokenPattern,
} from "./trigger.ts";

function enabled(patch: Partial<ProseConfig["trigger"]> = {}): ProseConfig {
  const c = defaultConfig();
  return { ...c, trigger: { ...c.trigger, enabled: true, ...patch } };
}

Deno.test("disabled trigger never matches", async () => {
  assert.deepEqual(await matchTrigger("prose please", defaultConfig()), {
    enabled: false,
    matched: false,
    token: null,
  });
});

Deno.test("whole tokens only, multilingual", async () => {
  const c = enabled();
  for (
    const no of [
      "explain this",
      "prosecutor",
      "the prosaic text",
      "plainly",
      "xprose",
      "prose_x",
      "prose2",
    ]
  ) {
    assert.equal((await matchTrigger(no, c)).matched, false, no);
  }
  assert.equal((await matchTrigger("prosa", c)).token, "prosa");
  assert.equal((await matchTrigger("Modo normal, por favor", c)).token, "Modo normal");
  assert.equal((await matchTrigger("用普通模式回答", c)).token, "普通");
  assert.equal((await matchTrigger("prosecutor says: plain!", c)).token, "plain");
  assert.equal((await matchTrigger("(prose)", c)).token, "prose");
  assert.equal((await matchTrigger("PROSE", enabled({ caseInsensitive: false }))).matched, false);
  assert.equal((await matchTrigger("PROSE", c)).token, "PROSE");
});

Deno.test("a word with a combining accent is one token, in NFD as in NFC (issue 30.5)", async () => {
  const c = enabled();
  const nfc = "prosélytisme";
  const nfd = nfc.normalize("NFD");
  assert.notEqual(nfd, nfc);
  assert.equal(nfd.slice(0, 6), "prose\u0301");
  for (const text of [nfc, nfd, `le ${nfd} ambiant`, `${nfd.toUpperCase()}`]) {
    assert.equal((await matchTrigger(text, c)).matched, false, JSON.stringify(text));
  }
  // A mark before the match belongs to the letter before it, too.
  assert.equal((await matchTrigger("e\u0301prose", c)).matched, false);
  // Accents on a word of the pattern's own, in either form: still that word, whole.
  const accented = enabled({ pattern: "très simple" });
  for (const form of ["NFC", "NFD"] as const) {
    const text = `en ${"très simple".normalize(form)}, svp`;
    const m = await matchTrigger(text, enabled({ pattern: "très simple".normalize(form) }));
    assert.equal(m.token, "très simple".normalize(form), form);
  }
  assert.equal((await matchTrigger("très simplement", accented)).matched, false);
  assert.equal((await matchTrigger("prose, s'il vous plaît", c)).token, "prose");
});

Deno.test("tokens are the matched text (the CLI prints them sanitized and clamped)", async () => {
  const c = enabled({ pattern: "a[\\s\\S]*z" });
  const m = await matchTrigger("a\x1b[31m" + "b".repeat(60) + "z", c);
  assert.equal(m.token, "a\x1b[31m" + "b".repeat(60) + "z");
  stopTriggerWorker();
});

Deno.test("isWordList: plain alternatives of literal characters only", () => {
  for (
    const yes of [defaultConfig().trigger.pattern, "prose", "a\\.b|c\\|d", "\\u00e9|\\x41", ""]
  ) {
    assert.equal(isWordList(yes), true, yes);
  }
  for (const no of ["a+", "(a)", "[ab]", "a.b", "^a", "a$", "\\w", "\\bprose", "a{2}", "\\1"]) {
    assert.equal(isWordList(no), false, no);
  }
});

Deno.test("nestedRepetition: a repeated group that repeats inside is named; others pass (issue 30.3)", () => {
  const refused: [string, string][] = [
    ["(\\w+\\s?)+mode", "(\\w+\\s?)+"],
    ["(a*)*", "(a*)*"],
    ["x(?:y{2,}z)+", "(?:y{2,}z)+"],
    ["((ab)+c)*", "((ab)+c)*"],
    ["(a|(b+))+", "(a|(b+))+"],
    ["([a-z]+ ?){2,5}x", "([a-z]+ ?){2,5}"],
  ];
  for (const [pattern, group] of refused) assert.equal(nestedRepetition(pattern), group, pattern);
  for (
    const ok of [
      defaultConfig().trigger.pattern,
      "(\\w+)?mode",
      "(ab)+c",
      "a+b+",
      "[(+)]+",
      "\\(a+\\)+",
      "\\u{1234}+",
      "(a{1})+",
      "(\\p{L}|x)+",
    ]
  ) {
    assert.equal(nestedRepetition(ok), null, ok);
  }
});

Deno.test("a config with a nested repetition in trigger.pattern is refused at load, naming it (issue 30.3)", () => {
  const r = parseConfigText(
    JSON.stringify({ trigger: { enabled: true, pattern: "(\\w+\\s?)+mode" } }),
    "/c.json",
  );
  assert.deepEqual(r, {
    ok: false,
    field: "trigger.pattern",
    message:
      '/c.json: "(\\\\w+\\\\s?)+" repeats a group that repeats inside it, which can take minutes on one prompt; write it without the nested repetition',
  });
});

Deno.test("a pattern that is not a list of words has a hard bound: past it, no match (issue 30.3)", async () => {
  // Exponential in a backtracking engine (each digit is both \w and \d), and not refused at load.
  const c = enabled({ pattern: "(\\w|\\d)+mode" });
  assert.equal(nestedRepetition(c.trigger.pattern), null);
  const m = await matchTrigger("1".repeat(40), c, 200);
  assert.deepEqual(m, { enabled: true, matched: false, token: null, timedOut: true });
  // The next search gets a fresh worker.
  assert.equal((await matchTrigger("1 mode", enabled({ pattern: "\\d mode" }))).token, "1 mode");
  stopTriggerWorker();
});

Deno.test("tokenPattern: the boundaries around the pattern", () => {
  assert.equal(
    tokenPattern("a|b"),
    "(?<![\\p{Script=Latin}\\p{M}0-9_])(?:a|b)(?![\\p{Script=Latin}\\p{M}0-9_])",
  );
});
