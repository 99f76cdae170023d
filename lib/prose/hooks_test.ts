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
  CREATED_LINE,
  installHooks,
  isShellShebang,
  planInstall,
  planRemove,
} from "./hooks.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

const CMD = ["/opt/deno dir/deno", "run", "/it's/prose.ts", "block-end"];

Deno.test("shell quoting survives quotes and spaces; a failure is said, never silent", () => {
  assert.equal(
    blockCommandLine(CMD),
    `'/opt/deno dir/deno' 'run' '/it'\\''s/prose.ts' 'block-end' </dev/null >/dev/null 2>&1 || ` +
      `echo '❌ ctxkit prose: block-end did not run (/it'\\''s/prose.ts missing or failing; moved plugin?) - ` +
      `a block flag may still be on: run prose install-hooks again, or prose off' >&2`,
  );
  // The line runs as printed: the program is gone, one line on stderr, and git is never failed.
  const gone = ["/nonexistent/deno", "run", "/nonexistent/prose.js", "block-end"];
  const r = new Deno.Command("sh", { args: ["-c", blockCommandLine(gone)], stderr: "piped" })
    .outputSync();
  assert.equal(r.code, 0);
  assert.equal(
    dec(r.stderr),
    "❌ ctxkit prose: block-end did not run (/nonexistent/prose.js missing or failing; moved plugin?) - " +
      "a block flag may still be on: run prose install-hooks again, or prose off\n",
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
    dec(created.content),
    `#!/bin/sh\n${BLOCK_BEGIN}\n${CREATED_LINE}\n${blockCommandLine(CMD)}\n${BLOCK_END}\n`,
  );
  assert.deepEqual(planInstall(created.content!, CMD), { result: "unchanged" });
  const updated = planInstall(created.content!, [...CMD.slice(0, 3), "other"]);
  assert.equal(updated.result, "updated");
  assert.match(dec(updated.content), new RegExp(`^#!/bin/sh\n${BLOCK_BEGIN}\n${CREATED_LINE}\n`));
  const inserted = planInstall(enc("#!/bin/bash\nexit 0\n"), CMD);
  assert.equal(
    dec(inserted.content),
    `#!/bin/bash\n${BLOCK_BEGIN}\n${blockCommandLine(CMD)}\n${BLOCK_END}\nexit 0\n`,
  );
  assert.deepEqual(planInstall(enc("#!/usr/bin/env node\n"), CMD), {
    result: "refused",
    reason: "not-shell",
  });
  assert.deepEqual(planInstall(enc(`#!/bin/sh\n${BLOCK_END}\n${BLOCK_BEGIN}\n`), CMD), {
    result: "refused",
    reason: "corrupt-block",
  });
  assert.deepEqual(planInstall(enc(`#!/bin/sh\n${BLOCK_BEGIN}\n`), CMD).reason, "corrupt-block");
  assert.deepEqual(
    planRemove(enc(`#!/bin/sh\n${BLOCK_BEGIN}\n${BLOCK_BEGIN}\n${BLOCK_END}\n`)).reason,
    "corrupt-block",
  );
});

Deno.test("property: install then remove restores any shell hook byte for byte", () => {
  const body = fc.array(fc.uint8Array({ maxLength: 30 }), { maxLength: 8 });
  fc.assert(
    fc.property(
      fc.constantFrom("#!/bin/sh", "#!/usr/bin/env bash"),
      body,
      fc.boolean(),
      (shebang, rest, nl) => {
        // Arbitrary bytes (not UTF-8, CRs, anything but a NUL or a newline) after the shebang.
        const lines = [
          enc(shebang),
          ...rest.map((l) => l.map((b) => (b === 0 || b === 10 ? 65 : b))),
        ];
        const parts = lines.flatMap((l, i) => (i === 0 ? [l] : [enc("\n"), l]));
        if (nl) parts.push(enc("\n"));
        const original = new Uint8Array(parts.flatMap((p) => [...p]));
        const plan = planInstall(original, CMD);
        if (plan.result !== "inserted") return false;
        const removed = planRemove(plan.content!);
        return removed.result === "removed" &&
          removed.content!.length === original.length &&
          removed.content!.every((b, i) => b === original[i]);
      },
    ),
  );
});

Deno.test("a hook install-hooks created is deleted by --remove; a user's shebang-only hook is not", () => {
  const created = planInstall(null, CMD).content!;
  assert.deepEqual(planRemove(created), { result: "deleted" });
  const own = enc("#!/bin/sh\n");
  const inserted = planInstall(own, CMD);
  assert.equal(inserted.result, "inserted");
  assert.deepEqual(planRemove(inserted.content!), { result: "removed", content: own });
  // A created hook the user added lines to comes back with those lines.
  const grown = new Uint8Array([...created, ...enc("echo mine\n")]);
  assert.equal(dec(planRemove(grown).content), "#!/bin/sh\necho mine\n");
});

Deno.test("installHooks: outcomes per hook; a refusal says what to check; bytes and mode survive", () => {
  const repo = makeTempDir("prose-hooks-");
  git(repo, "init", "-q", "-b", "main");
  const dir = join(repo, ".git", "hooks");
  const bom = "\ufeff#!/bin/sh\nexit 0\n";
  const latin1 = new Uint8Array([...enc("#!/bin/sh\necho caf"), 0xe9, 0x0a]);
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
  // Bytes that are not UTF-8 survive an install and a removal exactly.
  writeFileSync(join(dir, "pre-push"), latin1);
  assert.equal(installHooks(opts)[1].result, "inserted");
  assert.equal(installHooks({ ...opts, remove: true })[1].result, "removed");
  assert.deepEqual(new Uint8Array(readFileSync(join(dir, "pre-push"))), latin1);
  assert.throws(
    () => installHooks({ ...opts, repo: makeTempDir("prose-norepo-") }),
    (e: unknown) =>
      e instanceof ProseError && e.code === "usage" &&
      /not inside a git repository/.test(e.message),
  );
});

Deno.test("a user's line inside the block survives re-install and --remove; the hook is kept (issue 23, point 10)", () => {
  const created = dec(planInstall(null, CMD).content);
  const mine = "export PROSE_NOTE=mine # added by hand";
  // The user's line right after the begin marker, and one after the command line.
  const edited = created.replace(`${BLOCK_BEGIN}\n`, `${BLOCK_BEGIN}\n${mine}\n`)
    .replace(`${BLOCK_END}\n`, `echo second\n${BLOCK_END}\n`);
  const other = [...CMD.slice(0, 3), "block-end"].map((w) => w.replace("deno dir", "deno2"));
  const reinstalled = planInstall(enc(edited), other);
  assert.equal(reinstalled.result, "updated");
  assert.equal(
    dec(reinstalled.content),
    `#!/bin/sh\n${BLOCK_BEGIN}\n${mine}\n${CREATED_LINE}\n${
      blockCommandLine(other)
    }\necho second\n${BLOCK_END}\n`,
  );
  assert.deepEqual(planInstall(reinstalled.content!, other), { result: "unchanged" });
  // --remove takes only its own lines: the hook stays, with the user's lines where they were.
  assert.deepEqual(planRemove(reinstalled.content!), {
    result: "removed",
    content: enc(`#!/bin/sh\n${mine}\necho second\n`),
  });
  // Inserted into a user's hook: the same.
  const inserted = dec(planInstall(enc("#!/bin/sh\nexit 0\n"), CMD).content);
  const grown = inserted.replace(`${BLOCK_END}\n`, `echo mine\n${BLOCK_END}\n`);
  assert.equal(dec(planInstall(enc(grown), CMD).content ?? enc(grown)), grown);
  assert.equal(dec(planRemove(enc(grown)).content), "#!/bin/sh\necho mine\nexit 0\n");
  // A block whose command line is gone gets it back after the marker lines.
  const bare = `#!/bin/sh\n${BLOCK_BEGIN}\necho mine\n${BLOCK_END}\n`;
  assert.equal(
    dec(planInstall(enc(bare), CMD).content),
    `#!/bin/sh\n${BLOCK_BEGIN}\n${blockCommandLine(CMD)}\necho mine\n${BLOCK_END}\n`,
  );
  // An earlier release's command line (words quoted only where needed) is ours, not the user's.
  const older = `#!/bin/sh\n${BLOCK_BEGIN}\n/opt/deno run /p/prose.ts block-end ` +
    `</dev/null >/dev/null 2>&1 || true\n${BLOCK_END}\nexit 0\n`;
  assert.equal(
    dec(planInstall(enc(older), CMD).content),
    `#!/bin/sh\n${BLOCK_BEGIN}\n${blockCommandLine(CMD)}\n${BLOCK_END}\nexit 0\n`,
  );
  assert.equal(dec(planRemove(enc(older)).content), "#!/bin/sh\nexit 0\n");
});
