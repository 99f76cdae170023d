import assert from "node:assert/strict";

import {
  CtxkitError,
  EnvironmentError,
  EXIT_BROKEN_PIPE,
  EXIT_OUTPUT_FAILED,
  OutputError,
  UsageError,
} from "./errors.ts";
import { printed, text } from "./text.ts";

Deno.test("CtxkitError: exit code, the marked text, the raw message, and the subclass's name", () => {
  const cause = new Error("under");
  const e = new CtxkitError(5, text`bad ${"a\nb"} file`, { cause });
  assert.equal(e.exitCode, 5);
  assert.equal(e.message, "bad a\nb file", "message is raw for library callers");
  assert.equal(printed(e.text), 'bad "a\\nb" file', "text prints the name safely");
  assert.equal(e.name, "CtxkitError");
  assert.equal(e.cause, cause);
  assert.ok(e instanceof Error);
  const u = new UsageError(text`unknown option: ${"-x"}`);
  assert.deepEqual([u.exitCode, u.name, u.message], [2, "UsageError", "unknown option: -x"]);
  assert.ok(u instanceof CtxkitError);
  const env = new EnvironmentError("HOME", text`HOME is not set`);
  assert.deepEqual([env.exitCode, env.variable, env.name], [2, "HOME", "EnvironmentError"]);
});

Deno.test("OutputError: 141 for a broken pipe, 74 for every other write failure", () => {
  assert.deepEqual([EXIT_OUTPUT_FAILED, EXIT_BROKEN_PIPE], [74, 141]);
  const pipe = new OutputError("stdout", "EPIPE", text`cannot write stdout: Broken pipe`);
  assert.deepEqual([pipe.exitCode, pipe.stream, pipe.code, pipe.name], [
    141,
    "stdout",
    "EPIPE",
    "OutputError",
  ]);
  for (const code of ["ENOSPC", "EBADF", "EIO"]) {
    assert.equal(new OutputError("stderr", code, text`x`).exitCode, 74, code);
  }
});
