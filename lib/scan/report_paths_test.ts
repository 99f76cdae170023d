import assert from "node:assert/strict";
import { cutLeft, fitColumn, fitPath, nameStart } from "./report_paths.ts";

Deno.test("nameStart: the file; a skill's folder; a plugin's folder", () => {
  assert.equal(nameStart("CLAUDE.md"), 0);
  assert.equal(nameStart(".claude/agents/reviewer.md"), 2);
  assert.equal(nameStart(".claude/skills/release/SKILL.md"), 2);
  assert.equal(nameStart(".claude/skills/release/references/checklist.md"), 2);
  // a folder called skills holding the file directly is not a skill
  assert.equal(nameStart("docs/skills/list.md"), 2);
  assert.equal(nameStart("plugins/ops/agents/k8s.md", true), 1);
  assert.equal(nameStart("/p/ops/skills/deploy/SKILL.md", true), 2);
  assert.equal(nameStart("/p/ops/skills/agents/SKILL.md", true), 2);
  assert.equal(nameStart("/p/ops/hooks/hooks.json", true), 2);
  // not a plugin's row: the plugin folder is not part of the name
  assert.equal(nameStart("plugins/ops/agents/k8s.md"), 3);
});

Deno.test("cutLeft: whole when it fits, else whole segments from the left, never into the name", () => {
  const path = "~/.claude/plugins/cache/foo-tools/skills/manager-setup/SKILL.md";
  assert.equal(cutLeft(path, "", 100, 6), path);
  assert.equal(cutLeft(path, "", 40, 6), "…/skills/manager-setup/SKILL.md");
  assert.equal(cutLeft(path, "", 42, 6), "…/foo-tools/skills/manager-setup/SKILL.md");
  assert.equal(cutLeft(path, "", 30, 6), "…/manager-setup/SKILL.md");
  assert.equal(cutLeft(path, "", 20, 6), undefined);
  assert.equal(cutLeft(path, " [listing]", 34, 6), "…/manager-setup/SKILL.md [listing]");
  assert.equal(fitPath("/tmp/a/very-long-file-name.md", 12), "…ile-name.md");
  assert.equal(fitPath("no-slashes-at-all-here", 10), "…-all-here");
});

Deno.test("fitColumn: rows whose cut texts would be the same keep more, until they differ", () => {
  const col = (path: string, suffix = "", plugin = false) => ({ path, suffix, plugin });
  assert.deepEqual(
    fitColumn([
      col("skills/subagent-driven-development/SKILL.md"),
      col("skills/test-driven-development/SKILL.md"),
    ], 40),
    ["…/subagent-driven-development/SKILL.md", "skills/test-driven-development/SKILL.md"],
  );
  // two files called the same in two folders the name rule does not cover: a folder more each
  assert.deepEqual(
    fitColumn([col("/a/b/one/docs/readme.md"), col("/a/b/two/docs/readme.md")], 16),
    [undefined, undefined],
  );
  assert.deepEqual(
    fitColumn([col("/a/b/one/docs/readme.md"), col("/a/b/two/docs/readme.md")], 20),
    ["…/one/docs/readme.md", "…/two/docs/readme.md"],
  );
  // plugin rows keep the plugin; a name too long for the column is undefined (printed below)
  assert.deepEqual(
    fitColumn([
      col("/x/cloud/agents/k8s-architect.md", " [listing]", true),
      col("/x/ops/agents/k8s-architect.md", " [listing]", true),
    ], 41),
    ["…/cloud/agents/k8s-architect.md [listing]", "/x/ops/agents/k8s-architect.md [listing]"],
  );
  assert.deepEqual(
    fitColumn([col("/x/cloud/agents/k8s-architect.md", " [listing]", true)], 30),
    [undefined],
  );
  // the same path twice (two rows of one file) is not a collision to resolve
  assert.deepEqual(fitColumn([col("a/b/c.md"), col("a/b/c.md")], 6), ["…/c.md", "…/c.md"]);
});
