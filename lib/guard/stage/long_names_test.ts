// Any valid file name can be snapshotted, checkpointed and restored
// (references/context-guard.md#draft-records, #conventions): temp and record names fit NAME_MAX
// (255 bytes) whatever the name's length, so a 215–255-byte name keeps its way back.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

import { collectingReporter } from "../report.ts";
import { checkpoint } from "./checkpoint.ts";
import { stageRestore } from "./restore.ts";
import { stageSnapshot } from "./snapshot.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const bytes = (s: string) => new TextEncoder().encode(s).length;

Deno.test("names of 214 to 255 bytes (ASCII and multi-byte) are snapshotted, checkpointed, restored, twice", async () => {
  const names = [214, 215, 230, 248, 249, 255].map((n) => `${"a".repeat(n - 3)}.md`);
  names.push(`${"é".repeat(126)}.md`); // 255 bytes, 129 characters
  for (const name of names) {
    assert.ok(bytes(name) <= 255, name);
    const base = makeTempDir("ctxkit-long-");
    const root = `${base}/root`;
    Deno.mkdirSync(root);
    const file = `${root}/${name}`;
    writeFileSync(file, "original NEVER 1\n");
    const runDir = `${base}/run`;
    // A repeated argument replaces its first copy atomically: a temp file beside the copy.
    await stageSnapshot(
      { projectDir: root, files: [file, file], runDir, allowDirty: true },
      collectingReporter(),
    );
    for (const round of [1, 2]) {
      writeFileSync(file, `draft ${round}\n`);
      // Checkpointed twice: the second replaces the first record atomically (a temp beside it).
      for (let i = 0; i < 2; i++) {
        await checkpoint({ projectDir: root, runDir, files: [file] }, collectingReporter());
      }
      const out = collectingReporter();
      await stageRestore({ projectDir: root, runDir, files: [file] }, out);
      assert.deepEqual(out.lines.map((l) => l.text), [`RESTORED: ${name}`], `${bytes(name)} bytes`);
      assert.equal(readFileSync(file, "utf8"), "original NEVER 1\n");
    }
    // One record, every name within NAME_MAX, no temp file left anywhere.
    const drafts = readdirSync(`${runDir}/draft`);
    assert.equal(drafts.length, 1, drafts.join(" "));
    for (const dir of [root, `${runDir}/orig`, `${runDir}/draft`]) {
      for (const n of readdirSync(dir)) {
        assert.ok(bytes(n) <= 255, n);
        assert.ok(!n.includes(".ctxkit-tmp-"), n);
      }
    }
    assert.equal(readFileSync(`${runDir}/draft/${drafts[0]}`, "utf8"), `${sha("draft 2\n")}\n`);
  }
});
