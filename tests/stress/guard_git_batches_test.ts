// The git gate of context-guard `snapshot` (references/context-guard.md#snapshot) on a large input:
// targets whose paths together exceed ARG_MAX are asked of git in batches (slow by nature: 5,500
// files written and committed; references/reliability.md#which-suite).
import assert from "node:assert/strict";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";

import { DirtyTreeError } from "../../lib/guard/errors.ts";
import { commitAll, gate, gateRepo as repo } from "../_git_gate.ts";

Deno.test("git gate: 5,500 tracked targets whose paths exceed ARG_MAX are asked in batches: clean, then one dirty", async () => {
  const { proj, roots } = repo();
  // 5,500 paths of 412 bytes: 2.27 MB of arguments, beyond Linux's 2 MiB ARG_MAX for one git call.
  const dir = `${"d".repeat(200)}/${"e".repeat(200)}`;
  mkdirSync(`${proj}/${dir}`, { recursive: true });
  const files: string[] = [];
  for (let i = 0; i < 5500; i++) {
    const f = `${proj}/${dir}/f${String(i).padStart(4, "0")}.md`;
    writeFileSync(f, `file ${i}\n`);
    files.push(f);
  }
  commitAll(proj);
  const clean = await gate(roots, files);
  assert.equal(clean.error, undefined, String(clean.error));
  assert.equal(clean.out[0], "GIT-COVERED: 5500 tracked target(s), clean");
  appendFileSync(files[4777], "changed\n");
  const dirty = await gate(roots, files);
  assert.ok(dirty.error instanceof DirtyTreeError, String(dirty.error));
  assert.equal(dirty.error.exitCode, 3);
  assert.deepEqual(dirty.error.porcelain, [` M ${dir}/f4777.md`]);
  assert.deepEqual(dirty.out, []);
});
