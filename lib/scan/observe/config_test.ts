import assert from "node:assert/strict";
import { makePrivateConfig, redirectReasons } from "./config.ts";
import { instructionKind } from "./observed.ts";
import { splitHookContext } from "./request.ts";

function tempDir(): string {
  return Deno.makeTempDirSync({ prefix: "ctxkit-config-test-" });
}

function write(path: string, content: string): void {
  Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  Deno.writeTextFileSync(path, content);
}

Deno.test("makePrivateConfig: copies what shapes loading, follows links only inside, maps paths back, removes all", () => {
  const base = tempDir();
  const g = `${base}/g`;
  write(`${g}/CLAUDE.md`, "global\n");
  write(`${g}/skills/a/SKILL.md`, "skill\n");
  write(`${g}/projects/-r/memory/MEMORY.md`, "memory\n");
  write(`${g}/projects/-other/memory/MEMORY.md`, "not this project\n");
  write(`${g}/.claude.json`, "{}");
  write(`${g}/shared/rule.md`, "inside\n");
  write(`${base}/outside/secret.md`, "secret\n");
  Deno.mkdirSync(`${g}/rules`);
  Deno.symlinkSync(`${g}/shared/rule.md`, `${g}/rules/in.md`);
  Deno.symlinkSync(`${base}/outside/secret.md`, `${g}/rules/out.md`);
  Deno.symlinkSync(`${g}/rules`, `${g}/rules/loop`);
  const c = makePrivateConfig(g, { memorySlugs: ["-r"] });
  try {
    assert.equal(Deno.readTextFileSync(`${c.dir}/CLAUDE.md`), "global\n");
    assert.equal(Deno.readTextFileSync(`${c.dir}/skills/a/SKILL.md`), "skill\n");
    assert.equal(Deno.readTextFileSync(`${c.dir}/rules/in.md`), "inside\n");
    assert.equal(Deno.readTextFileSync(`${c.dir}/projects/-r/memory/MEMORY.md`), "memory\n");
    assert.throws(() => Deno.statSync(`${c.dir}/rules/out.md`), Deno.errors.NotFound);
    assert.throws(() => Deno.statSync(`${c.dir}/projects/-other`), Deno.errors.NotFound);
    assert.throws(() => Deno.statSync(`${c.dir}/.claude.json`), Deno.errors.NotFound);
    assert.throws(() => Deno.statSync(`${c.dir}/shared`), Deno.errors.NotFound);
    assert.deepEqual(c.warnings, [`not copied: ${g}/rules/out.md (a link leading outside ${g})`]);
    assert.equal(Deno.statSync(c.dir).mode! & 0o777, 0o700);
    assert.equal(c.realPath(`${c.dir}/rules/in.md`), `${g}/rules/in.md`);
    assert.equal(c.realPath("/elsewhere/x.md"), "/elsewhere/x.md");
  } finally {
    c.remove();
  }
  assert.throws(() => Deno.statSync(c.dir), Deno.errors.NotFound);
  assert.throws(() => Deno.statSync(c.tmp), Deno.errors.NotFound);
  // An absent global root gives an empty copy.
  const empty = makePrivateConfig(`${base}/absent`, { memorySlugs: ["-r"] });
  try {
    assert.deepEqual([...Deno.readDirSync(empty.dir)], []);
  } finally {
    empty.remove();
  }
  Deno.removeSync(base, { recursive: true });
});

Deno.test("redirectReasons: env that redirects or authenticates, helpers, unreadable or invalid files", () => {
  const base = tempDir();
  const file = `${base}/settings.json`;
  assert.deepEqual(redirectReasons(file), []);
  const reasons = (value: string) => {
    Deno.writeTextFileSync(file, value);
    return redirectReasons(file);
  };
  assert.deepEqual(reasons('{"env":{"DEBUG":"1"},"model":"x","hooks":{}}'), []);
  assert.deepEqual(
    reasons('{"env":{"ANTHROPIC_BASE_URL":"u","https_proxy":"p","CLAUDE_CODE_USE_BEDROCK":"1"}}'),
    ["sets env ANTHROPIC_BASE_URL", "sets env https_proxy", "sets env CLAUDE_CODE_USE_BEDROCK"],
  );
  assert.deepEqual(reasons('{"apiKeyHelper":"k","otelHeadersHelper":"h"}'), [
    "sets apiKeyHelper",
    "sets otelHeadersHelper",
  ]);
  assert.deepEqual(reasons("{oops"), ["is not valid JSON"]);
  assert.deepEqual(reasons('["a"]'), ["is not a settings object"]);
  assert.deepEqual(reasons('{"env":"x"}'), ["is not a settings object"]);
  Deno.removeSync(base, { recursive: true });
});

Deno.test("instructionKind: CLAUDE.md files, rules, MEMORY.md, anything else is an import", () => {
  const places = { root: "/r", global: "/g" };
  assert.equal(instructionKind("/r/CLAUDE.md", places), "instruction");
  assert.equal(instructionKind("/r/.claude/CLAUDE.md", places), "instruction");
  assert.equal(instructionKind("/r/CLAUDE.local.md", places), "instruction");
  assert.equal(instructionKind("/r/.claude/rules/a/b.md", places), "rule");
  assert.equal(instructionKind("/g/rules/x.md", places), "rule");
  assert.equal(instructionKind("/g/projects/-r/memory/MEMORY.md", places), "memory-index");
  assert.equal(instructionKind("/r/docs/MEMORY.md", places), "import");
  assert.equal(instructionKind("/r/rules/x.md", places), "import");
});

Deno.test("splitHookContext: one part per SessionStart paragraph, up to the environment heading", () => {
  const text =
    "SessionStart:startup hook success: a\n\nb\n\nSessionStart hook additional context: c\n\n# Environment\nrest";
  const parts = splitHookContext(text);
  assert.deepEqual(parts.map((p) => [p.category, p.label, p.text]), [
    ["hooks", "SessionStart:startup hook success", "SessionStart:startup hook success: a\n\nb\n\n"],
    [
      "hooks",
      "SessionStart hook additional context",
      "SessionStart hook additional context: c\n\n",
    ],
  ]);
  assert.deepEqual(splitHookContext("# Environment\nx"), []);
  assert.deepEqual(splitHookContext("SessionStart: no heading follows"), []);
});
