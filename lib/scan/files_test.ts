import assert from "node:assert/strict";
import { errorCode, isAbsent } from "../_fs/errors.ts";
import { isLossyPath, measureFile, scanFile, statFollow } from "./files.ts";
import { DescriptionScanner, HookScanner, RuleScopeScanner } from "./measure.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

function mkfifo(path: string): void {
  const made = new Deno.Command("mkfifo", { args: [path] }).outputSync();
  assert.equal(made.code, 0, "mkfifo");
}

Deno.test("statFollow: the stat through links, or the error to classify", () => {
  const dir = makeTempDir("ctxkit-files-");
  Deno.symlinkSync(dir, `${dir}/up`);
  Deno.symlinkSync(`${dir}/loop`, `${dir}/loop`);
  const st = statFollow(`${dir}/up`);
  assert.ok(!("error" in st) && st.isDirectory);
  const missing = statFollow(`${dir}/missing`);
  assert.ok("error" in missing && isAbsent(missing.error));
  const loop = statFollow(`${dir}/loop`);
  assert.ok("error" in loop && errorCode(loop.error) === "ELOOP");
});

Deno.test("isLossyPath: only a U+FFFD path that does not exist under that spelling", () => {
  const dir = makeTempDir("ctxkit-files-");
  Deno.writeTextFileSync(`${dir}/genuine\uFFFD.md`, "x");
  assert.equal(isLossyPath(`${dir}/plain.md`), false); // absent, but no U+FFFD: not lossy
  assert.equal(isLossyPath(`${dir}/genuine\uFFFD.md`), false);
  assert.equal(isLossyPath(`${dir}/decoded\uFFFD.md`), true);
});

Deno.test("measureFile and scanFile: size (and result) of a regular file, through links", () => {
  const dir = makeTempDir("ctxkit-files-");
  Deno.writeTextFileSync(`${dir}/a.md`, "héllo\n");
  Deno.symlinkSync(`${dir}/a.md`, `${dir}/link.md`);
  assert.deepEqual(measureFile(`${dir}/a.md`), { ok: true, size: 7 });
  assert.deepEqual(measureFile(`${dir}/link.md`), { ok: true, size: 7 });
  assert.deepEqual(scanFile(`${dir}/link.md`, new DescriptionScanner()), {
    ok: true,
    size: 7,
    result: 0,
  });
});

Deno.test("measureFile and scanFile: an OS reason, and a FIFO is refused without being opened", () => {
  const dir = makeTempDir("ctxkit-files-");
  mkfifo(`${dir}/pipe.md`);
  // opening a FIFO would block this test forever: the refusal proves it was never opened
  assert.deepEqual(measureFile(`${dir}/pipe.md`), { ok: false, reason: "Not a regular file" });
  assert.deepEqual(scanFile(`${dir}/pipe.md`, new HookScanner()), {
    ok: false,
    reason: "Not a regular file",
  });
  assert.deepEqual(measureFile(`${dir}/missing.md`), {
    ok: false,
    reason: "No such file or directory",
  });
  assert.deepEqual(scanFile(`${dir}/missing/x.md`, new HookScanner()), {
    ok: false,
    reason: "No such file or directory",
  });
});

Deno.test("scanFile: chunk by chunk, a line split across chunk boundaries; stops once settled", () => {
  const dir = makeTempDir("ctxkit-files-");
  // `paths:` straddles the 4-byte chunks; the rest of the file is never needed.
  Deno.writeTextFileSync(`${dir}/rule.md`, "---\nname: x\npaths: [a]\n---\n" + "z".repeat(5000));
  assert.deepEqual(scanFile(`${dir}/rule.md`, new RuleScopeScanner(), 4), {
    ok: true,
    size: 5027,
    result: true,
  });
  // an unclosed fence is streamed to EOF: `paths:` on the last, unterminated line still counts
  Deno.writeTextFileSync(`${dir}/open.md`, "---\n" + "x: y\n".repeat(3000) + "paths: b");
  assert.deepEqual(scanFile(`${dir}/open.md`, new RuleScopeScanner(), 7), {
    ok: true,
    size: 15012,
    result: true,
  });
  const hook = 'export const REMINDER_TEXT = "Run tests";\nconst X = 1;\nconst MAX_TRIES = 3;\n';
  Deno.writeTextFileSync(`${dir}/h.mjs`, hook);
  for (const chunk of [1, 2, 3, 5, 1 << 20]) {
    const r = scanFile(`${dir}/h.mjs`, new HookScanner(), chunk);
    assert.deepEqual(r, { ok: true, size: hook.length, result: 14 }, `chunk ${chunk}`);
  }
});
