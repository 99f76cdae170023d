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

Deno.test("shellQuote quotes only outside A-Za-z0-9_@%+=:,./- (a usable restore_cmd)", () => {
  strictEqual(shellQuote("/opt/ctxkit/bin/context-guard.ts"), "/opt/ctxkit/bin/context-guard.ts");
  strictEqual(shellQuote("a b"), "'a b'");
  strictEqual(shellQuote("it's"), "'it'\\''s'");
  strictEqual(shellQuote(""), "''");
  // restore_cmd runs as printed: the absolute runtime, no config (a vendored copy has none), every
  // word quoted.
  strictEqual(
    restoreCommand("/x y/bin/cg.ts", "global", "/b/r"),
    `${shellQuote(Deno.execPath())} run --allow-all --no-config '/x y/bin/cg.ts' ` +
      "restore --global --run-dir /b/r",
  );
  strictEqual(
    restoreCommand("/opt/dist/cg.js", "project", "/b/r"),
    `${
      shellQuote(Deno.execPath())
    } run --allow-all --no-config /opt/dist/cg.js restore --project --run-dir /b/r`,
  );
});

Deno.test("renderManifest: fixed layout, full JSON escaping, non-ASCII raw, valid per schema", () => {
  const text = renderManifest({
    timestamp: "20261012-140307",
    layer: "project",
    root: "/p",
    runDir: "/b/r",
    restoreCmd: "deno run --allow-all /cg.ts restore --project --run-dir /b/r",
    created: new Date(Date.UTC(2026, 9, 12, 12, 3, 7, 42)),
    seq: 7,
    files: [
      { path: 'a"\\\n\u0001é.md', size: 3, sha256: "0".repeat(64), mode: 0o644 },
      { path: "b.md", size: 0, sha256: "f".repeat(64), mode: 0o600, linkTarget: "/dot/b.md" },
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
  "created": "2026-10-12T12:03:07.042Z",
  "seq": 7,
  "files": [
    {"path": "a\\"\\\\\\n\\u0001é.md", "size": 3, "sha256": "${"0".repeat(64)}", "mode": "0644"},
    {"path": "b.md", "size": 0, "sha256": "${
      "f".repeat(64)
    }", "mode": "0600", "link_target": "/dot/b.md"}
  ]
}
`,
  );
  WrittenManifestSchema.parse(JSON.parse(text));
});

Deno.test("isSafeManifestPath refuses absolute, empty, NUL, empty/./.. components", () => {
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
