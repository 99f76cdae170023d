import assert from "node:assert/strict";
import { ArgCursor } from "./args.ts";
import { UsageError } from "../errors.ts";

Deno.test("ArgCursor: values verbatim, `--` ends options once, operands marked", () => {
  const c = new ArgCursor(["--root", "--", "a", "--", "--x", "--"]);
  assert.equal(c.next(), "--root");
  assert.equal(c.value(), "--"); // a value option takes `--` verbatim
  assert.equal(c.next(), "a");
  assert.equal(c.operand, false);
  assert.equal(c.next(), "--x"); // the first bare `--` (after `a`) was skipped
  assert.equal(c.operand, true);
  assert.equal(c.next(), "--"); // later ones are operands
  assert.equal(c.operand, true);
  assert.equal(c.done, true);
  assert.equal(new ArgCursor(["--"]).done, true);
});

Deno.test("ArgCursor.requireValue: a missing or empty value is a usage error", () => {
  for (const args of [[], [""]]) {
    assert.throws(
      () => new ArgCursor(args).requireValue("--run-dir"),
      (e: unknown) => e instanceof UsageError && e.message === "--run-dir needs a value",
    );
  }
  const c = new ArgCursor(["a", "b"]);
  c.next();
  assert.deepEqual(c.rest(), ["b"]);
});
