/**
 * The observed request, against the pinned Claude Code (`references/context-scan.md#observe`):
 * each test builds its own fixture, observes it inside a fresh network namespace (tests/_claude.ts)
 * and asserts the exact parts Claude Code sent. Skips, with the reason, where no namespace can be
 * made or Claude Code cannot be installed.
 */
import assert from "node:assert/strict";
import { makeTempDir, writeTree } from "./_helpers.ts";
import { observedClaude, observeFixture } from "./_claude.ts";
import { CLAUDE_CODE_VERSION } from "../scripts/claude_code.ts";
import { utf8Bytes } from "../lib/scan/observe/request.ts";

Deno.test("observe: the pinned Claude Code's first request, split into parts that add up", async () => {
  const claude = await observedClaude();
  if (claude === undefined) return;
  const base = makeTempDir("ctxkit-observe-");
  const root = `${base}/proj`;
  writeTree(root, {
    "CLAUDE.md": "# Project\nsee @extra.md\n",
    "extra.md": "imported text\n",
    ".claude/rules/style.md": "rule text\n",
    ".claude/skills/alpha/SKILL.md":
      "---\nname: alpha\ndescription: Alpha does things\n---\nbody\n",
  });
  writeTree(`${base}/cfg`, { "CLAUDE.md": "global text\n" });
  Deno.mkdirSync(`${base}/home`);
  const { observation, request } = await observeFixture(claude, {
    root,
    home: `${base}/home`,
    configDir: `${base}/cfg`,
  });
  assert.equal(observation.version, CLAUDE_CODE_VERSION);
  assert.equal(observation.sandboxed, true);
  assert.equal(request.version, CLAUDE_CODE_VERSION);
  assert.deepEqual(request.warnings, []);
  const files = request.parts.filter((p) => p.category === "memory-files" && p.path !== undefined);
  assert.deepEqual(files.map((p) => [p.path, p.text]), [
    [`${base}/cfg/CLAUDE.md`, "global text"],
    [`${root}/CLAUDE.md`, "# Project\nsee @extra.md"],
    [`${root}/extra.md`, "imported text"],
    [`${root}/.claude/rules/style.md`, "rule text"],
  ]);
  const alpha = request.parts.find((p) => p.category === "skills" && p.label === "alpha");
  assert.equal(alpha?.text, "- alpha: Alpha does things\n");
  // Nothing dropped: the parts' bytes are every text byte of the request.
  const body = JSON.parse(observation.body);
  const texts: string[] = [];
  for (const s of body.system) texts.push(s.text);
  for (const t of body.tools) texts.push(JSON.stringify(t));
  for (const m of body.messages) {
    for (const b of typeof m.content === "string" ? [{ text: m.content }] : m.content) {
      texts.push(b.text);
    }
  }
  assert.equal(
    request.parts.reduce((n, p) => n + p.bytes, 0),
    texts.reduce((n, t) => n + utf8Bytes(t), 0),
  );
});
