/**
 * context-scan under its shebang's grants (`--no-prompt --allow-read --allow-env --allow-run=git`):
 * a path the Deno sandbox refuses whatever `--allow-read` says (`/proc/self/environ`, anything below
 * `/dev/null`) is an ordinary scan issue, an `import-unreadable` limit, or nothing at all — never a
 * missing-permission error or an `--allow-all` hint (`references/context-scan.md#issues`).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { makeTempDir, TARGET_TAKES_DENO_FLAGS, writeTree } from "./_helpers.ts";
import { scan } from "./context_scan_fixtures.ts";

const SHEBANG = ["--no-prompt", "--allow-read", "--allow-env", "--allow-run=git"];
const REFUSED = "Operation not permitted (refused by the Deno sandbox)";
const linux = existsSync("/proc/self/environ");

Deno.test({
  name:
    "A rule, CLAUDE.local.md or import linked to /proc/self/environ → an ordinary issue or limit, never --allow-all",
  ignore: !linux || !TARGET_TAKES_DENO_FLAGS,
  fn: () => {
    const root = makeTempDir("ctxkit-sandbox-");
    writeTree(root, { "CLAUDE.md": "see @env.md and @/proc/self/environ\n" });
    for (const link of ["CLAUDE.local.md", ".claude/rules/env.md", "env.md"]) {
      Deno.mkdirSync(`${root}/${link}`.replace(/\/[^/]+$/, ""), { recursive: true });
      Deno.symlinkSync("/proc/self/environ", `${root}/${link}`);
    }
    const r = scan(["--root", root], { permissions: SHEBANG, env: { HOME: makeTempDir() } });
    assert.equal(r.code, 2);
    assert.equal(r.stderr, "❌ FAILED EXIT:2\n");
    assert.deepEqual(r.doc?.scan_issues.map((i) => [i.path, i.detail]), [
      [`${root}/CLAUDE.local.md`, `'${root}/CLAUDE.local.md': ${REFUSED}`],
      [`${root}/.claude/rules/env.md`, `'${root}/.claude/rules/env.md': ${REFUSED}`],
    ]);
    const loaded = scan(["--root", root, "--loaded", "--format", "table"], {
      permissions: SHEBANG,
      env: { HOME: makeTempDir(), COLUMNS: "100" },
    });
    assert.equal(loaded.code, 2);
    assert.doesNotMatch(loaded.stdout + loaded.stderr, /allow-all/);
    // env.md leads out of the project (to /proc/self/environ): not followed, as Claude Code does
    assert.match(loaded.stdout, /import-external +1 {2}an import outside the project is not/);
    assert.ok(loaded.stdout.includes(`    'CLAUDE.local.md': ${REFUSED}\n`), loaded.stdout);
    assert.ok(loaded.stdout.includes(`    '.claude/rules/env.md': ${REFUSED}\n`), loaded.stdout);
  },
});

Deno.test({
  name:
    "CLAUDE_CONFIG_DIR=/dev/null --global → a complete document: nothing lies below a non-directory",
  ignore: !linux || !TARGET_TAKES_DENO_FLAGS,
  fn: () => {
    const root = makeTempDir("ctxkit-devnull-");
    writeTree(root, { "CLAUDE.md": "hi\n" });
    for (const extra of [[], ["--loaded"]]) {
      const r = scan(["--root", root, "--global", ...extra], {
        permissions: SHEBANG,
        env: { HOME: makeTempDir(), CLAUDE_CONFIG_DIR: "/dev/null" },
      });
      assert.equal(r.stderr, "✅ EXIT:0\n");
      assert.equal(r.code, 0);
      assert.equal(r.doc?.roots.global, "/dev/null");
      assert.deepEqual(r.doc?.scan_issues, []);
      assert.deepEqual(r.doc?.files.map((f) => f.path), [`${root}/CLAUDE.md`]);
    }
  },
});
