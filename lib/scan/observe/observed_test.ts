import assert from "node:assert/strict";
import { buildObserved } from "./observed.ts";
import { pluginName } from "../claude_model.ts";
import { parseObservedRequest } from "./request.ts";
import { resolveClaude } from "./observe.ts";
import { ObserveError } from "./run.ts";

function write(path: string, content: string): void {
  Deno.mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true });
  Deno.writeTextFileSync(path, content);
}

// Listing names as Claude Code 2.1.328 writes them: `folder (name)` when a skill's name differs
// from its folder, and only agents with a description are listed (references/context-scan.md).
Deno.test("buildObserved: groups add up; listing entries matched to files, plugins by name, the rest built-in", () => {
  const base = Deno.makeTempDirSync({ prefix: "ctxkit-observed-test-" });
  const root = `${base}/r`;
  const g = `${base}/g`;
  write(`${root}/.claude/skills/a/SKILL.md`, "---\nname: alpha\ndescription: a\n---\n");
  write(`${root}/.claude/agents/rev.md`, "---\nname: reviewer\ndescription: r\n---\n");
  write(`${base}/plug/skills/p/SKILL.md`, "---\nname: ps\ndescription: p\n---\n");
  write(`${g}/CLAUDE.md`, "global\n");
  const copy = `${base}/copy/config`;
  const system =
    "# Environment\nenv\n\nAvailable agent types for the Agent tool:\n- reviewer: r (Tools: All tools)\n- Plan: p\n\n" +
    "The following skills are available for use with the Skill tool:\n\n- a (alpha): a\n- plug:p (plug:ps): p\n- other:x: o\n- init: i\n\nToday.";
  const body = {
    system: [{ type: "text", text: "x-anthropic-billing-header: cc_version=2.1.328.abc;" }],
    tools: [{ name: "Read" }],
    messages: [
      {
        role: "user",
        content: [
          {
            type: "text",
            text:
              "<system-reminder>\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n" +
              `Contents of ${copy}/CLAUDE.md (user's private global instructions for all projects):\n\nglobal\n</system-reminder>`,
          },
          { type: "image", source: {} },
          { type: "text", text: "hi" },
        ],
      },
      { role: "system", content: [{ type: "text", text: system }] },
    ],
  };
  const request = parseObservedRequest(body);
  assert.equal(request.version, "2.1.328");
  const o = buildObserved(request, { version: "2.1.328", sandboxed: true, warnings: ["w"] }, {
    root,
    global: g,
    pluginDirs: [`${base}/plug`],
    realPath: (p) => p.startsWith(`${copy}/`) ? `${g}${p.slice(copy.length)}` : p,
  });
  const sum = Object.values(o.categories).reduce((n, c) => n + c.bytes, 0);
  assert.equal(o.total.bytes, sum);
  assert.equal(
    o.categories.unattributed.bytes,
    JSON.stringify({ type: "image", source: {} }).length,
  );
  assert.deepEqual(o.warnings, [
    "w",
    `not understood: message 1 (user) block 2 (${o.categories.unattributed.bytes} bytes counted as unattributed)`,
    // An entry no file of the run lists and Claude Code does not list by itself: said so.
    "not attributed: skills entry other:x (13 bytes): no file of this run lists it",
  ]);
  assert.deepEqual(o.sources.map((s) => [s.kind, s.name, s.path, s.built_in]), [
    ["instruction", `${g}/CLAUDE.md`, `${g}/CLAUDE.md`, false],
    ["agent", "reviewer", `${root}/.claude/agents/rev.md`, false],
    ["agent", "Plan", null, true],
    ["skill", "a (alpha)", `${root}/.claude/skills/a/SKILL.md`, false],
    ["skill", "plug:p (plug:ps)", `${base}/plug/skills/p/SKILL.md`, false],
    ["skill", "other:x", null, false], // no file lists it, and not Claude Code's own: a warning
    ["skill", "init", null, true],
  ]);
  assert.equal(o.sources[0].file_bytes, 7);
  // A plugin's name: plugin.json's, else the directory's.
  assert.equal(pluginName(`${base}/plug/`), "plug");
  write(`${base}/plug/.claude-plugin/plugin.json`, '{"name":"named"}');
  assert.equal(pluginName(`${base}/plug`), "named");
  Deno.removeSync(base, { recursive: true });
});

Deno.test("resolveClaude: --claude against the cwd, a bare name on PATH, else claude on PATH", () => {
  const base = Deno.makeTempDirSync({ prefix: "ctxkit-resolve-test-" });
  write(`${base}/bin/claude`, "#!/bin/sh\n");
  Deno.chmodSync(`${base}/bin/claude`, 0o755);
  const env = { PATH: `${base}/bin` };
  assert.equal(resolveClaude("x/claude", env, "/cwd"), "/cwd/x/claude");
  assert.equal(resolveClaude("/abs/claude", env, "/cwd"), "/abs/claude");
  assert.equal(resolveClaude("claude", env, "/cwd"), `${base}/bin/claude`);
  assert.equal(resolveClaude(undefined, env, "/cwd"), `${base}/bin/claude`);
  assert.throws(() => resolveClaude("nope", env, "/cwd"), ObserveError);
  assert.throws(
    () => resolveClaude(undefined, { PATH: "/nonexistent" }, "/cwd"),
    /claude not found on PATH/,
  );
  Deno.removeSync(base, { recursive: true });
});

Deno.test("parseObservedRequest: an agent description with blank lines stays its entry; output style and UserPromptSubmit context are attributed", () => {
  const system = "# Environment\nenv\n\n# Output Style: Terse\nBe terse.\n\nVery.\n\n" +
    "Available agent types for the Agent tool:\n- keep: kept\n\nmore (Tools: All tools)\n- b: x (Tools: Read)\n" +
    "\nWhen you launch multiple agents, be quick.\n\n" +
    "The following skills are available for use with the Skill tool:\n\n- s: d\n\n" +
    "UserPromptSubmit hook success: every prompt\n\n" +
    "Terse output style is active. Remember to follow the specific guidelines for this style.\n\n" +
    "Today's date is 2026-01-01.";
  const request = parseObservedRequest({
    messages: [{ role: "system", content: [{ type: "text", text: system }] }],
  });
  const parts = request.parts.map((p) => [p.category, p.label, p.text]);
  assert.deepEqual(parts, [
    ["environment", "environment", "# Environment\nenv\n\n"],
    ["system-prompt", "output style", "# Output Style: Terse\nBe terse.\n\nVery.\n\n"],
    ["agents", "heading", "Available agent types for the Agent tool:\n"],
    ["agents", "keep", "- keep: kept\n\nmore (Tools: All tools)\n"],
    ["agents", "b", "- b: x (Tools: Read)\n"],
    ["environment", "environment", "\nWhen you launch multiple agents, be quick.\n\n"],
    ["skills", "heading", "The following skills are available for use with the Skill tool:\n\n"],
    ["skills", "s", "- s: d\n"],
    ["environment", "environment", "\n"],
    ["hooks", "UserPromptSubmit hook", "UserPromptSubmit hook success: every prompt\n\n"],
    [
      "system-prompt",
      "output style",
      "Terse output style is active. Remember to follow the specific guidelines for this style.\n\n",
    ],
    ["environment", "environment", "Today's date is 2026-01-01."],
  ]);
  assert.deepEqual(request.warnings, []);
  assert.equal(request.parts.map((p) => p.text).join(""), system);
});

Deno.test("buildObserved: a parent's and a link-reached rule are rules (as the model loaded them), not imports; the output style's parts are its file's", () => {
  const base = Deno.makeTempDirSync({ prefix: "ctxkit-observed-kinds-" });
  const root = `${base}/p/r`;
  const g = `${base}/g`;
  write(`${base}/p/.claude/rules/parent.md`, "a parent's rule\n");
  write(`${root}/docs/linked.md`, "a rule reached through a link\n");
  Deno.mkdirSync(`${root}/.claude/rules`, { recursive: true });
  Deno.symlinkSync(`${root}/docs/linked.md`, `${root}/.claude/rules/linked.md`);
  write(`${root}/CLAUDE.md`, "@notes.md\n");
  write(`${root}/notes.md`, "an import\n");
  write(`${root}/.claude/output-styles/t.md`, "---\nname: Terse\n---\nBe terse.\n");
  write(`${root}/.claude/settings.json`, '{"outputStyle": "Terse"}');
  const section = (path: string, text: string) => `Contents of ${path} (x):\n\n${text}`;
  const reminder =
    "<system-reminder>\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n" +
    [
      section(`${base}/p/.claude/rules/parent.md`, "a parent's rule"),
      section(`${root}/CLAUDE.md`, "@notes.md"),
      section(`${root}/notes.md`, "an import"),
      section(`${root}/docs/linked.md`, "a rule reached through a link"),
    ].join("\n\n") + "\n</system-reminder>";
  const system = "# Environment\nenv\n\n# Output Style: Terse\nBe terse.\n\n" +
    "Terse output style is active. Remember to follow the specific guidelines for this style.\n\n" +
    "Today's date is 2026-01-01.";
  const request = parseObservedRequest({
    messages: [
      { role: "user", content: [{ type: "text", text: reminder }, { type: "text", text: "hi" }] },
      { role: "system", content: [{ type: "text", text: system }] },
    ],
  });
  const o = buildObserved(request, { version: "2.1.332", sandboxed: true, warnings: [] }, {
    root,
    global: g,
    pluginDirs: [],
    realPath: (p) => p,
  });
  assert.deepEqual(o.sources.map((s) => [s.kind, s.path]), [
    ["rule", `${base}/p/.claude/rules/parent.md`],
    ["instruction", `${root}/CLAUDE.md`],
    ["import", `${root}/notes.md`],
    ["rule", `${root}/docs/linked.md`],
    ["output-style", `${root}/.claude/output-styles/t.md`],
    ["output-style", `${root}/.claude/output-styles/t.md`],
  ]);
  assert.deepEqual(o.warnings, []);
  Deno.removeSync(base, { recursive: true });
});
