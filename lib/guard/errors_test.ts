import assert from "node:assert/strict";

import { type CtxkitError, UsageError } from "../errors.ts";
import { printed, text } from "../text.ts";
import { ReadRefusedError } from "../_fs/read.ts";
import {
  asFileSystemError,
  DirtyTreeError,
  errorText,
  FileSystemError,
  LedgerError,
  ManifestError,
  osErrorAsFailure,
  PathRefusedError,
  refusalLine,
  RestoreRefusedError,
  sandboxRefused,
  ScanRejectedError,
  SnapshotMissingError,
  StageFailedError,
  StateWriteError,
} from "./errors.ts";

Deno.test("each guard failure kind carries its data and the exit code of the command line", () => {
  const refused = new PathRefusedError("/p/a", "outside-root", text`${"/p/a"} is outside`);
  assert.deepEqual([refused.exitCode, refused.path, refused.reason], [2, "/p/a", "outside-root"]);
  assert.equal(refused.name, "PathRefusedError");
  const missing = new SnapshotMissingError("no-snapshot", "/b/r", text`no snapshot for a`, "a");
  assert.deepEqual([missing.exitCode, missing.problem, missing.runDir, missing.rel], [
    2,
    "no-snapshot",
    "/b/r",
    "a",
  ]);
  assert.equal(new SnapshotMissingError("no-backups", "/b", text`x`).rel, undefined);
  const manifest = new ManifestError("/m", "unsafe-path", text`unsafe`, "../a");
  assert.deepEqual([manifest.exitCode, manifest.problem, manifest.entry], [
    2,
    "unsafe-path",
    "../a",
  ]);
  assert.equal(new ManifestError("/m", "empty", text`empty`).entry, undefined);
  const ledger = new LedgerError("l.tsv", text`malformed`, 3);
  assert.deepEqual([ledger.exitCode, ledger.ledger, ledger.line], [2, "l.tsv", 3]);
  const dirty = new DirtyTreeError("/p", [" M a.md"], text`dirty`);
  assert.deepEqual([dirty.exitCode, dirty.root, dirty.porcelain], [3, "/p", [" M a.md"]]);
  const state = new StateWriteError("/s.json", "Permission denied");
  assert.deepEqual([state.exitCode, state.path, state.message], [
    2,
    "/s.json",
    "cannot write state file: /s.json (Permission denied)",
  ]);
  const scan = new ScanRejectedError("a.json", "invalid JSON: x");
  assert.deepEqual([scan.exitCode, scan.path, scan.reason, scan.message], [
    2,
    "a.json",
    "invalid JSON: x",
    "State rejected: a.json: invalid JSON: x",
  ]);
  const sandbox = sandboxRefused("/proc/self", "create");
  assert.deepEqual([sandbox.reason, sandbox.path, sandbox.message], [
    "sandbox",
    "/proc/self",
    "cannot create /proc/self: Operation not permitted (refused by the Deno sandbox)",
  ]);
});

Deno.test("RestoreRefusedError: exit 1, one RESTORE_REFUSED line per refused file in order", () => {
  const e = new RestoreRefusedError(["b.md", "a.md"]);
  assert.equal(e.exitCode, 1);
  assert.deepEqual(e.rels, ["b.md", "a.md"]);
  assert.equal(
    e.message,
    "RESTORE_REFUSED: b.md (current bytes lack matching draft ownership)\n" +
      "RESTORE_REFUSED: a.md (current bytes lack matching draft ownership)",
  );
  assert.equal(
    printed(refusalLine("x\ny")),
    'RESTORE_REFUSED: "x\\ny" (current bytes lack matching draft ownership)',
  );
});

Deno.test("StageFailedError keeps the stage's exit code and cause and says so", () => {
  const cause = new DirtyTreeError("/p", [], text`not a git repository`);
  const e = new StageFailedError(cause);
  assert.equal(e.exitCode, 3);
  assert.equal(e.cause, cause);
  assert.equal(e.message, "snapshot failed (text-guard exit 3)");
  assert.equal(new StageFailedError(new UsageError(text`x`)).exitCode, 2);
});

Deno.test("errorText: ❌ before every message except the refusal and rejection lines, names kept as data", () => {
  const cases: [CtxkitError, string][] = [
    [new UsageError(text`unknown option: ${"a\tb"}`), '❌ unknown option: "a\\tb"'],
    [
      new SnapshotMissingError("no-backups", "/b", text`no backups under ${"/b"}`),
      "❌ no backups under /b",
    ],
    [new StageFailedError(new UsageError(text`x`)), "❌ snapshot failed (text-guard exit 2)"],
    [
      new RestoreRefusedError(["a.md"]),
      "RESTORE_REFUSED: a.md (current bytes lack matching draft ownership)",
    ],
    [new ScanRejectedError("b\n.json", "r"), 'State rejected: "b\\n.json": r'],
  ];
  for (const [e, line] of cases) assert.equal(printed(errorText(e)), line, e.name);
});

Deno.test("osErrorAsFailure names the operation and path of an OS error Deno reported, exit 2", () => {
  const raw = Object.assign(
    new Error("Not a directory (os error 20): mkdir '/p/CLAUDE.md/run'"),
    { code: "ENOTDIR" },
  );
  const e = osErrorAsFailure(raw);
  assert.ok(e instanceof FileSystemError);
  assert.equal(e.exitCode, 2);
  assert.equal(e.message, "cannot mkdir /p/CLAUDE.md/run: Not a directory");
  const plainError = new Error("boom");
  assert.equal(osErrorAsFailure(plainError), plainError);
  const unnamed = Object.assign(new Error("No space left on device (os error 28)"), {
    code: "ENOSPC",
  });
  assert.equal(osErrorAsFailure(unnamed), unnamed, "no path to name: left as it is");
});

Deno.test("osErrorAsFailure: a read refusal that reached the command line is one line naming its path, exit 2", () => {
  const e = osErrorAsFailure(new ReadRefusedError("/p/CLAUDE.md", "changed"));
  assert.ok(e instanceof PathRefusedError);
  assert.equal(e.exitCode, 2);
  assert.equal(e.message, "cannot read /p/CLAUDE.md: changed while reading");
  const fifo = asFileSystemError(
    new ReadRefusedError("/p/.gitignore", "not-regular"),
    "update",
    "/p/.gitignore",
  );
  assert.ok(fifo instanceof PathRefusedError);
  assert.equal(fifo.message, "cannot update /p/.gitignore: not a regular file");
});
