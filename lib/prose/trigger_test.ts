import assert from "node:assert/strict";
import { defaultConfig, type ProseConfig } from "./config.ts";
import { matchTrigger } from "./trigger.ts";

function enabled(patch: Partial<ProseConfig["trigger"]> = {}): ProseConfig {
  const c = defaultConfig();
  return { ...c, trigger: { ...c.trigger, enabled: true, ...patch } };
}

Deno.test("disabled trigger never matches", () => {
  assert.deepEqual(matchTrigger("prose please"), { enabled: false, matched: false, token: null });
});

Deno.test("whole tokens only, multilingual", () => {
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
    assert.equal(matchTrigger(no, c).matched, false, no);
  }
  assert.equal(matchTrigger("prosa", c).token, "prosa");
  assert.equal(matchTrigger("Modo normal, por favor", c).token, "Modo normal");
  assert.equal(matchTrigger("用普通模式回答", c).token, "普通");
  assert.equal(matchTrigger("prosecutor says: plain!", c).token, "plain");
  assert.equal(matchTrigger("(prose)", c).token, "prose");
  assert.equal(matchTrigger("PROSE", enabled({ caseInsensitive: false })).matched, false);
  assert.equal(matchTrigger("PROSE", c).token, "PROSE");
});

Deno.test("tokens are sanitized and clamped to 40 code points", () => {
  const c = enabled({ pattern: "a[\\s\\S]*z" });
  const m = matchTrigger("a\x1b[31m" + "b".repeat(60) + "z", c);
  assert.equal(m.token, "a" + "b".repeat(39) + "…");
});
