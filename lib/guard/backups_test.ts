import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";

import {
  backupsWithPrefix,
  compareBackups,
  isLayerBackup,
  listBackups,
  newestRunDirs,
  resolveBackup,
} from "./backups.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

const names = [
  "20261012-140307-global_context-slim",
  "20261012-140307-project-2_context-slim",
  "20261012-140306-project_context-slim",
  "20261012-140307-project_context-slim",
  "20261012-140307-project-10_context-slim",
  "20261012-140307-project-9_context-slim",
  "20261012-140307-project-3_context-slim",
];

Deno.test("newest first: timestamp, numeric suffix, project before global (G15)", () => {
  deepStrictEqual([...names].sort(compareBackups), [
    "20261012-140307-project-10_context-slim",
    "20261012-140307-project-9_context-slim",
    "20261012-140307-project-3_context-slim",
    "20261012-140307-project-2_context-slim",
    "20261012-140307-project_context-slim",
    "20261012-140307-global_context-slim",
    "20261012-140306-project_context-slim",
  ]);
});

Deno.test("layer filter, Resolve, newest run, prefix selection", () => {
  const b = makeTempDir("ctxkit-backups-");
  for (const n of names) mkdirSync(`${b}/${n}`);
  mkdirSync(`${b}/not-a-backup`);
  writeFileSync(`${b}/20261012-140308-project_context-slim`, "a file, not a backup");
  symlinkSync(`${b}/${names[0]}`, `${b}/20261012-140309-project_context-slim`);
  strictEqual(listBackups(b).length, names.length);
  strictEqual(isLayerBackup("20261012-140307-project-2_context-slim", "project"), true);
  strictEqual(isLayerBackup("20261012-140307-project-2_context-slim", "global"), false);
  strictEqual(resolveBackup(b, "last", undefined), `${b}/20261012-140307-project-10_context-slim`);
  strictEqual(resolveBackup(b, "last", "global"), `${b}/20261012-140307-global_context-slim`);
  strictEqual(
    resolveBackup(b, "20261012-140306", "project"),
    `${b}/20261012-140306-project_context-slim`,
  );
  strictEqual(
    resolveBackup(b, "20261012-140306", "global"),
    `${b}/20261012-140306-global_context-slim`,
  );
  strictEqual(resolveBackup(b, "2099", undefined), `${b}/2099-project_context-slim`);
  strictEqual(resolveBackup(b, "/abs/x", "global"), "/abs/x");
  strictEqual(resolveBackup(b, "rel_context-slim", "global"), "rel_context-slim");
  deepStrictEqual(newestRunDirs(b).map((d) => d.slice(b.length + 1)), [
    "20261012-140307-project-10_context-slim",
    "20261012-140307-project-9_context-slim",
    "20261012-140307-project-3_context-slim",
    "20261012-140307-project-2_context-slim",
    "20261012-140307-project_context-slim",
    "20261012-140307-global_context-slim",
  ]);
  deepStrictEqual(backupsWithPrefix(b, "20261012-140306"), [
    `${b}/20261012-140306-project_context-slim`,
  ]);
  deepStrictEqual(resolveBackup(`${b}/none`, "last", undefined), "");
  deepStrictEqual(newestRunDirs(`${b}/none`), []);
});
