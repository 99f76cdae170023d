import assert from "node:assert/strict";
import { errorCode, isAbsent } from "../_fs/errors.ts";
import { isLossyPath, measureFile, readFileBytes, statFollow } from "./files.ts";
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

Deno.test("measureFile and readFileBytes: size or bytes of a regular file, through links", () => {
  const dir = makeTempDir("ctxkit-files-");
  Deno.writeTextFileSync(`${dir}/a.md`, "héllo\n");
  Deno.symlinkSync(`${dir}/a.md`, `${dir}/link.md`);
  assert.deepEqual(measureFile(`${dir}/a.md`), { ok: true, size: 7 });
  assert.deepEqual(measureFile(`${dir}/link.md`), { ok: true, size: 7 });
  const read = readFileBytes(`${dir}/link.md`);
  assert.ok(read.ok);
  assert.equal(new TextDecoder().decode(read.bytes), "héllo\n");
});

Deno.test("measureFile and readFileBytes: an OS reason, and a FIFO is refused without being opened", () => {
  const dir = makeTempDir("ctxkit-files-");
  mkfifo(`${dir}/pipe.md`);
  // opening a FIFO would block this test forever: the refusal proves it was never opened
  assert.deepEqual(measureFile(`${dir}/pipe.md`), { ok: false, reason: "Not a regular file" });
  assert.deepEqual(readFileBytes(`${dir}/pipe.md`), { ok: false, reason: "Not a regular file" });
  assert.deepEqual(measureFile(`${dir}/missing.md`), {
    ok: false,
    reason: "No such file or directory",
  });
  assert.deepEqual(readFileBytes(`${dir}/missing/x.md`), {
    ok: false,
    reason: "No such file or directory",
  });
});
