import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";

import { CtxkitError } from "../errors.ts";
import {
  isSafeManifestPath,
  readManifest,
  renderManifest,
  restoreCommand,
  WrittenManifestSchema,
} from "./manifest.ts";
import { shellQuote } from "../shell.ts";
import { makeTempDir } from "../../tests/_helpers.ts";

Deno.test("shellQuote quotes only outside A-Za-z0-9_@%+=:,./- (G12)", () => {
  strictEqual(shellQuote("/opt/ctxkit/bin/context-guard.ts"), "/opt/ctxkit/bin/context-guard.ts");
  strictEqual(shellQuote("a b"), "'a b'");
  strictEqual(shellQuote("it's"), "'it'\\''s'");
  strictEqual(shellQuote(""), "''");
  strictEqual(
    restoreCommand("/x y/cg.ts", "global", "/b/r"),
    "deno run --allow-all '/x y/cg.ts' restore --global --run-dir /b/r",
  );
});

Deno.test("renderManifest: fixed layout, full JSON escaping, non-ASCII raw, valid per schema", () => {
  const text = renderManifest({
    timestamp: "20261012-140307",
    layer: "project",
    root: "/p",
    runDir: "/b/r",
    restoreCmd: "deno run --allow-all /cg.ts restore --project --run-dir /b/r",
    files: [
      { path: 'a"\\\n\u0001é.md', size: 3, sha256: "0".repeat(64) },
      { path: "b.md", size: 0, sha256: "f".repeat(64) },
    ],
  });
  strictEqual(
    text,
    `{
  "timestamp": "20261012-140307",
  "mode": "snapshot",
  "layer": "project",
  "root": "/p",
  "run_dir": "/b/r",
  "restore_cmd": "deno run --allow-all /cg.ts restore --project --run-dir /b/r",
  "files": [
    {"path": "a\\"\\\\\\n\\u0001é.md", "size": 3, "sha256": "${"0".repeat(64)}"},
    {"path": "b.md", "size": 0, "sha256": "${"f".repeat(64)}"}
  ]
}
`,
  );
  WrittenManifestSchema.parse(JSON.parse(text));
});

Deno.test("isSafeManifestPath refuses absolute, empty, NUL, empty/./.. components (G1)", () => {
  for (const ok of ["a", "a/b.md", ".claude/rules/x.md", "..a", "a.."]) {
    strictEqual(isSafeManifestPath(ok), true, ok);
  }
  for (const bad of ["", "/a", "a//b", "a/", "./a", "a/.", "../a", "a/../b", "a\0b"]) {
    strictEqual(isSafeManifestPath(bad), false, JSON.stringify(bad));
  }
});

Deno.test("readManifest: a non-string sha256 is kept as never-matching; other keys ignored", () => {
  const rd = makeTempDir("ctxkit-manifest-");
  mkdirSync(`${rd}/orig`);
  writeFileSync(
    `${rd}/manifest.json`,
    JSON.stringify({ root: "/p/", extra: 1, files: [{ path: "a", sha256: 5 }, { path: "b" }] }),
  );
  deepStrictEqual(readManifest(rd), {
    path: `${rd}/manifest.json`,
    root: "/p",
    files: [{ path: "a", sha256: undefined }, { path: "b", sha256: undefined }],
  });
  writeFileSync(`${rd}/manifest.json`, '{"root": "/p", "files": [{"path": "a"}, {"path": "a"}]}');
  throws(
    () => readManifest(rd),
    (e) =>
      e instanceof CtxkitError && e.exitCode === 2 &&
      e.message === `duplicate manifest path: a (${rd}/manifest.json)`,
  );
});
