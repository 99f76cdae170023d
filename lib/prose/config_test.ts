import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import {
  defaultConfig,
  loadConfig,
  loopbackOrigin,
  parseConfigText,
  parseDuration,
  ProseConfigSchema,
} from "./config.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

Deno.test("durations: 1s to 30d, strict syntax", () => {
  assert.equal(parseDuration("1s"), 1000);
  assert.equal(parseDuration("30d"), 30 * 86_400_000);
  assert.equal(parseDuration("720h"), 30 * 86_400_000);
  for (const bad of ["0s", "31d", "1w", "01m", "1.5h", "", "1234567s", " 1h"]) {
    assert.equal(parseDuration(bad), null, bad);
  }
});

Deno.test("defaults", () => {
  const c = defaultConfig();
  assert.equal(c.level, "full");
  assert.equal(c.ttl, "block");
  assert.equal(c.turns, 1);
  assert.equal(c.sessionCap, "12h");
  assert.deepEqual(c.trigger, {
    enabled: false,
    caseInsensitive: true,
    pattern: "prose|prosa|plain|normal mode|modo normal|普通|普通模式",
  });
  assert.deepEqual(c.autoClarity, { enabled: true, level: "full", turns: 1, for: "15m" });
  assert.deepEqual(c.backend, { url: null });
});

Deno.test("JSONC: comments, trailing commas, $schema", () => {
  const r = parseConfigText(
    '// top\n{ "$schema": "x", "level": "minimal", /* c */ "trigger": { "enabled": true, }, }\n',
    "c.json",
  );
  assert.equal(r.ok && r.config.level, "minimal");
  assert.equal(r.ok && r.config.trigger.enabled, true);
  assert.equal(r.ok && r.config.trigger.caseInsensitive, true);
  assert.equal(parseConfigText("  \n", "c.json").ok, true);
});

Deno.test("errors name the field (raw: it is escaped where it is printed)", () => {
  const cases: [string, string][] = [
    ['{"level": "full",\n  "ttl": }', "(syntax)"],
    ['{"levle": "full"}', "levle"],
    ['{"\\u001b[31mevil": 1}', "\x1b[31mevil"],
    ['{"trigger": {"pattern": "("}}', "trigger.pattern"],
    ['{"trigger": {"pattern": ""}}', "trigger.pattern"],
    ['{"autoClarity": {"for": "2h"}}', "autoClarity.for"],
    ['{"autoClarity": {"turns": 11}}', "autoClarity.turns"],
    ['{"turns": 0}', "turns"],
    ['{"level": "off"}', "level"],
    ['{"backend": {"url": "http://10.0.0.5:31415"}}', "backend.url"],
    ['{"backend": {"url": "http://127.0.0.1:1/api"}}', "backend.url"],
    ['{"sessionCap": "40d"}', "sessionCap"],
    ["[1]", "(root)"],
  ];
  for (const [text, field] of cases) {
    const r = parseConfigText(text, "c.json");
    assert.equal(r.ok, false, text);
    assert.equal(!r.ok && r.field, field, text);
    assert.equal(!r.ok && r.message.includes("\x1b"), false);
  }
  const syntax = parseConfigText('{"level": "full",\n  "ttl": }', "c.json");
  assert.equal(!syntax.ok && syntax.message, "c.json:2:10: ValueExpected");
});

Deno.test("loopback origins", () => {
  assert.equal(loopbackOrigin("http://localhost:31415/"), "http://localhost:31415");
  assert.equal(loopbackOrigin("http://[::1]:8080"), "http://[::1]:8080");
  for (
    const bad of [
      "https://127.0.0.1",
      "http://127.0.0.2",
      "http://u:p@localhost",
      "http://localhost/x",
      "http://localhost?q",
      "nope",
    ]
  ) {
    assert.equal(loopbackOrigin(bad), null, bad);
  }
});

Deno.test("loadConfig: missing → defaults, symlink allowed, oversize and directories named (file)", () => {
  const r = makeTempDir("prose-cfg-");
  assert.equal(loadConfig({ root: r }).ok, true);
  mkdirSync(join(r, "prose"));
  writeFileSync(join(r, "real.json"), '{"level":"minimal"}');
  symlinkSync(join(r, "real.json"), join(r, "prose", "config.json"));
  const linked = loadConfig({ root: r });
  assert.equal(linked.ok && linked.config.level, "minimal");
  const r2 = makeTempDir("prose-cfg-");
  mkdirSync(join(r2, "prose"));
  writeFileSync(join(r2, "prose", "config.json"), " ".repeat(65 * 1024));
  const big = loadConfig({ root: r2 });
  assert.equal(!big.ok && big.field, "(file)");
  assert.equal(!big.ok && big.message, `${join(r2, "prose", "config.json")}: larger than 64 KiB`);
  const r3 = makeTempDir("prose-cfg-");
  mkdirSync(join(r3, "prose", "config.json"), { recursive: true });
  const dir = loadConfig({ root: r3 });
  assert.equal(!dir.ok && dir.message, `${join(r3, "prose", "config.json")}: not a file`);
  writeFileSync(join(r, "real.json"), new Uint8Array([0x7b, 0xff, 0x7d]));
  const bad = loadConfig({ root: r });
  assert.equal(!bad.ok && bad.message, `${join(r, "prose", "config.json")}: not valid UTF-8`);
  // A dangling link is a missing config: defaults.
  Deno.removeSync(join(r, "real.json"));
  assert.equal(loadConfig({ root: r }).ok, true);
});

Deno.test("defaultConfig is exactly the config schema's parse of {}", () => {
  assert.deepEqual(defaultConfig(), ProseConfigSchema.parse({}));
});

Deno.test("parseConfigText: a __proto__ key is an unknown key, never the prototype of the config", () => {
  for (
    const text of [
      '{"__proto__": {"backend": {"url": "http://127.0.0.1:9"}}}',
      '// JSONC\n{"__proto__": {"backend": {"url": "http://127.0.0.1:9"}},}',
    ]
  ) {
    const r = parseConfigText(text, "/d/config.json");
    assert.equal(r.ok, false, text);
  }
});

Deno.test("parseConfigText answers exactly as the whole config schema does, though it builds only the keys a config sets", () => {
  const valid: Record<string, unknown[]> = {
    $schema: ["https://example.invalid/prose-config.json"],
    level: ["minimal", "full"],
    ttl: ["turn", "session", "explicit"],
    turns: [1, 7],
    sessionCap: [null, "90s", "30d"],
    trigger: [{}, { enabled: true }, { pattern: "x+", caseInsensitive: false, enabled: true }],
    autoClarity: [{}, { enabled: false, level: "minimal", turns: 3, for: "1h" }],
    backend: [{}, { url: null }, { url: "http://127.0.0.1:8787" }],
  };
  const invalid: Record<string, unknown[]> = {
    $schema: [1],
    level: ["max", 1, null],
    ttl: ["week"],
    turns: [0, 1.5, "2", 100_000],
    sessionCap: ["0s", "31d", 12],
    trigger: [null, [], { enabled: "yes" }, { pattern: "(" }, { pattern: "" }, { extra: 1 }],
    autoClarity: [{ for: "2h" }, { turns: 0 }, { level: "off" }, { more: true }],
    backend: [{ url: "https://127.0.0.1" }, { url: "http://127.0.0.1/x" }, "url"],
  };
  const keys = Object.keys(valid);
  const configs: unknown[] = [{}, [], null, 1, "config", [{}], { unknown: 1 }, { a: 1, b: 2 }];
  for (const key of keys) {
    for (const v of valid[key]) configs.push({ [key]: v }, { [key]: v, unknown: true });
    for (const v of invalid[key]) configs.push({ [key]: v });
  }
  // Pairs in both orders, a valid and an invalid field together, every key at once.
  for (const a of keys) {
    for (const b of keys) {
      if (a === b) continue;
      configs.push({ [a]: valid[a][0], [b]: valid[b].at(-1) });
      configs.push({ [b]: invalid[b][0], [a]: invalid[a].at(-1) });
      configs.push({ [a]: valid[a][0], [b]: invalid[b][0] });
    }
  }
  configs.push(Object.fromEntries(keys.map((k) => [k, valid[k].at(-1)])));
  configs.push(Object.fromEntries([...keys].reverse().map((k) => [k, invalid[k][0]])));
  for (const value of configs) {
    const text = JSON.stringify(value);
    const expected = ProseConfigSchema.safeParse(value);
    const actual = parseConfigText(text, "/d/config.json");
    if (expected.success) {
      assert.ok(actual.ok, text);
      // Same values and the same key order.
      assert.equal(JSON.stringify(actual.config), JSON.stringify(expected.data), text);
      assert.deepEqual(actual.config, expected.data, text);
      continue;
    }
    assert.ok(!actual.ok, text);
    const issue = expected.error.issues[0];
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") path.push(String(issue.keys[0]));
    assert.equal(actual.field, path.length === 0 ? "(root)" : path.join("."), text);
    const message = issue.code === "unrecognized_keys" ? "unknown key" : issue.message;
    assert.equal(actual.message, `/d/config.json: ${message}`, text);
  }
  assert.ok(configs.length > 150);
});

Deno.test("nesting deeper than 64 levels is a syntax error found before any parser runs (issue 23, point 12)", () => {
  const deep = (open: string, n: number) => open.repeat(n);
  // Each of these overflowed jsonc-parser's stack (RangeError), or would parse deeper than it
  // counts: a closer of the other kind does not close (the parser skips it while recovering).
  const tooDeep: [string, string][] = [
    [`{"a": ${deep("[", 5000)}`, "1:70"],
    [`{"level": ${deep("[", 5000)}${deep("]", 5000)}} // c`, "1:74"],
    [`// c\n{"level": ${deep('{"a": ', 5000)}`, "2:389"],
    [`[${deep("},[", 5000)}`, "1:193"],
    [`{"a": "x\n${deep("[", 5000)}`, "2:64"], // a string ends at a line break
    [`/* c */ ${deep("[", 65)}`, "1:73"],
  ];
  for (const [text, at] of tooDeep) {
    const r = parseConfigText(text, "c.json");
    assert.deepEqual(r, { ok: false, field: "(syntax)", message: `c.json:${at}: NestingTooDeep` });
  }
  // 64 levels are the parser's business (here: not a valid level); brackets in strings and
  // comments do not count.
  const at64 = parseConfigText(`{"level": ${deep("[", 63)}${deep("]", 63)}}`, "c.json");
  assert.equal(!at64.ok && at64.field, "level");
  const quoted = parseConfigText(
    `// ${deep("[", 100)}\n/* ${deep("{", 100)} */ {"trigger": {"pattern": "${
      deep("\\\\[", 100)
    }x", "enabled": true}}`,
    "c.json",
  );
  assert.equal(quoted.ok, true, JSON.stringify(quoted));
  assert.equal(quoted.ok && quoted.config.trigger.pattern, `${deep("\\[", 100)}x`);
});
