import assert from "node:assert/strict";
import fc from "fast-check";
import { chmodSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, makeTempDir } from "../../tests/_helpers.ts";
import { ProseError } from "./errors.ts";
import {
  BLOCK_BEGIN,
  BLOCK_END,
  blockCommandLine,
  installHooks,
  isShellShebang,
  planInstall,
  planRemove,
  shellQuote,
} from "./hooks.ts";

const CMD = ["/opt/deno dir/deno", "run", "/it's/prose.ts", "block-end"];

Deno.test("shell quoting survives quotes and spaces", () => {
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
  assert.equal(
    blockCommandLine(CMD),
    `'/opt/deno dir/deno' 'run' '/it'\\''s/prose.ts' 'block-end' </dev/null >/dev/null 2>&1 || true`,
  );
});

Deno.test("shebangs: sh-family interpreters directly or through env", () => {
  for (
    const yes of [
      "#!/bin/sh",
      "#!/bin/bash -e",
      "#! /usr/bin/zsh",
      "#!/usr/bin/env bash",
      "#!/usr/bin/env -S dash -e",
      "#!/bin/ksh",
    ]
  ) {
    assert.equal(isShellShebang(yes), true, yes);
  }
  for (
    const no of [
      "#!/usr/bin/env python3",
      "#!/usr/bin/perl",
      "echo hi",
      "",
      "#!/usr/bin/env",
      "#!/bin/fish",
    ]
  ) {
    assert.equal(isShellShebang(no), false, no);
  }
});

Deno.test("install plans: create, insert after the shebang, update in place, unchanged, refusals", () => {
  const created = planInstall(null, CMD);
  assert.equal(created.result, "created");
  assert.equal(
    created.content,
    `#!/bin/sh\n${BLOCK_BEGIN}\n${blockCommandLine(CMD)}\n${BLOCK_END}\n`,
  );
  assert.deepEqual(planInstall(created.content!, CMD), { result: "unchanged" });
  const updated = planInstall(created.content!, [...CMD.slice(0, 3), "other"]);
  assert.equal(updated.result, "updated");
  const inserted = planInstall("#!/bin/bash\nexit 0\n", CMD);
  assert.equal(
    inserted.content,
    `#!/bin/bash\n${BLOCK_BEGIN}\n${blockCommandLine(CMD)}\n${BLOCK_END}\nexit 0\n`,
  );
  assert.deepEqual(planInstall("#!/usr/bin/env node\n", CMD), {
    result: "refused",
    reason: "not-shell",
  });
  assert.deepEqual(planInstall(`#!/bin/sh\n${BLOCK_END}\n${BLOCK_BEGIN}\n`, CMD), {
    result: "refused",
    reason: "corrupt-block",
  });
  assert.deepEqual(planInstall(`#!/bin/sh\n${BLOCK_BEGIN}\n`, CMD).reason, "corrupt-block");
  assert.deepEqual(
    planRemove(`#!/bin/sh\n${BLOCK_BEGIN}\n${BLOCK_BEGIN}\n${BLOCK_END}\n`).reason,
    "corrupt-block",
  );
});

Deno.test("property: install then remove restores any shell hook byte for byte", () => {
  const body = fc.array(
    fc.string({ maxLength: 30 }).filter((l) =>
      !l.includes("\n") && l !== BLOCK_BEGIN && l !== BLOCK_END
    ),
    { maxLength: 8 },
  );
  fc.assert(
    fc.property(
      fc.constantFrom("#!/bin/sh", "#!/usr/bin/env bash"),
      body,
      fc.boolean(),
      (shebang, rest, nl) => {
        const original = [shebang, ...rest].join("\n") + (nl ? "\n" : "");
        const plan = planInstall(original, CMD);
        if (plan.result !== "inserted") return false;
        const removed = planRemove(plan.content!);
        const expected = [shebang, ...rest].join("\n") + (nl ? "\n" : "");
        if (removed.result === "deleted") return /^#![^\n]*\n?$/.test(expected);
        return removed.result === "removed" && removed.content === expected;
      },
    ),
  );
});

Deno.test("installHooks: outcomes per hook; a refusal says what to check; bytes and mode survive", () => {
  const repo = makeTempDir("prose-hooks-");
  git(repo, "init", "-q", "-b", "main");
  const dir = join(repo, ".git", "hooks");
  const bom = "\ufeff#!/bin/sh\nexit 0\n";
  writeFileSync(join(dir, "pre-push"), "#!/bin/bash\nexit 0");
  chmodSync(join(dir, "pre-push"), 0o750);
  symlinkSync("/nonexistent", join(dir, "post-commit"));
  const opts = { repo, dryRun: false, remove: false, command: CMD };
  const first = installHooks(opts);
  assert.deepEqual(first.map((o) => [o.name, o.result, o.reason]), [
    ["post-commit", "refused", "symlink"],
    ["pre-push", "inserted", undefined],
  ]);
  assert.equal(first[0].hint, "refusing to touch it");
  assert.equal(first[0].path, join(dir, "post-commit"));
  assert.equal(Deno.statSync(join(dir, "pre-push")).mode! & 0o777, 0o750);
  const removed = installHooks({ ...opts, remove: true });
  assert.equal(removed[1].result, "removed");
  assert.equal(readFileSync(join(dir, "pre-push"), "utf8"), "#!/bin/bash\nexit 0");
  Deno.removeSync(join(dir, "post-commit"));
  writeFileSync(join(dir, "post-commit"), bom);
  assert.deepEqual(installHooks({ ...opts, dryRun: true }).map((o) => o.result), [
    "refused", // a BOM before the shebang is not a shell script
    "would-insert",
  ]);
  assert.equal(readFileSync(join(dir, "post-commit"), "utf8"), bom);
  assert.throws(
    () => installHooks({ ...opts, repo: makeTempDir("prose-norepo-") }),
    (e: unknown) =>
      e instanceof ProseError && e.code === "usage" &&
      /not inside a git repository/.test(e.message),
  );
});
