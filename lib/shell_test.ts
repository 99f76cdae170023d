import assert from "node:assert/strict";
import { shellCommand, shellQuote } from "./shell.ts";

Deno.test("shellQuote: plain words stay, everything else is single-quoted, `'` escaped", () => {
  assert.equal(shellQuote("/opt/ctxkit/bin/context-guard.ts"), "/opt/ctxkit/bin/context-guard.ts");
  assert.equal(shellQuote("a b"), "'a b'");
  assert.equal(shellQuote("it's"), "'it'\\''s'");
  assert.equal(shellQuote(""), "''");
  assert.equal(shellQuote("$HOME;rm"), "'$HOME;rm'");
  assert.equal(shellQuote("run", { always: true }), "'run'");
  assert.equal(shellCommand(["deno", "run", "/x y"]), "deno run '/x y'");
});

Deno.test("shellQuote round-trips through a real shell", () => {
  const words = ["plain", "a b", "it's", "", "$(touch x)", "`x`", "a\nb", "\\", '"'];
  const out = new Deno.Command("sh", {
    args: ["-c", `printf '%s\\0' ${shellCommand(words)}`],
  }).outputSync();
  assert.deepEqual(new TextDecoder().decode(out.stdout).split("\0").slice(0, -1), words);
});
