import assert from "node:assert/strict";
import { memorySlugs } from "./roots.ts";

Deno.test("memorySlugs: original slug first, Claude Code's slug only when different (D7)", () => {
  assert.deepEqual(memorySlugs("/home/u/demo"), ["-home-u-demo"]);
  assert.deepEqual(memorySlugs("/home/u/my_app.v2"), ["-home-u-my_app.v2", "-home-u-my-app-v2"]);
  assert.deepEqual(memorySlugs("/a b/é"), ["-a b-é", "-a-b--"]);
  // every UTF-16 code unit: an astral character becomes two dashes
  assert.deepEqual(memorySlugs("/𝔸"), ["-𝔸", "---"]);
});
