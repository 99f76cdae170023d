import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FileSystemError, ScanRejectedError } from "../errors.ts";
import { collectingReporter } from "../report.ts";
import { UsageError } from "../../errors.ts";
import { stateExists, statePath, writeState } from "./state.ts";
import { makeTempDir } from "../../../tests/_helpers.ts";

Deno.test("statePath: --out, then --root, then the project root", () => {
  assert.equal(statePath({ out: "o.json", root: "/r" }, "/p"), "o.json");
  assert.equal(
    statePath({ out: "", root: "/r" }, "/p"),
    "/r/.claude/brewtools/context-slim/state.json",
  );
  assert.equal(statePath({ root: "" }, "/p"), "/p/.claude/brewtools/context-slim/state.json");
});

Deno.test("writeState: names the first missing input, rejects a bad scan, writes the document", async () => {
  const dir = makeTempDir("ctxkit-state-");
  const scan = join(dir, "scan.json");
  writeFileSync(
    scan,
    '{"scan_issues":[],"files":[{"path":"a","tokens":4}],"totals":{"grand":{"tokens":4}}}',
  );
  const bad = join(dir, "bad.json");
  writeFileSync(bad, '{"scan_issues":[1],"files":[],"totals":{"grand":{"tokens":0}}}');
  const out = join(dir, "out", "state.json");
  const ctx = { root: dir, backups: join(dir, "backups") };
  const quiet = collectingReporter();
  const usage = (options: Parameters<typeof writeState>[0], message: string) =>
    assert.rejects(() => writeState(options, out, ctx, quiet), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.message, message);
      return true;
    });
  await usage({ mode: "", before: scan, after: scan }, "state needs --mode");
  await usage({ mode: "m", before: "", after: "" }, "state needs --before <context-scan JSON>");
  await usage({ mode: "m", before: scan, after: "" }, "state needs --after <context-scan JSON>");
  await usage(
    { mode: "m", before: scan, after: dir },
    `cannot read --after ${dir}: not a regular file`,
  );
  await assert.rejects(
    () =>
      writeState({ mode: "m", before: join(dir, "missing.json"), after: scan }, out, ctx, quiet),
    (e: unknown) =>
      e instanceof FileSystemError && e.exitCode === 2 &&
      e.message === `cannot read --before ${join(dir, "missing.json")}: No such file or directory`,
  );
  await assert.rejects(
    () => writeState({ mode: "m", before: bad, after: scan }, out, ctx, quiet),
    (e: unknown) => {
      assert.ok(e instanceof ScanRejectedError);
      assert.equal(e.path, bad);
      assert.equal(
        e.message,
        `State rejected: ${bad}: incomplete scanner inventory: scan_issues must be present and empty`,
      );
      return true;
    },
  );
  assert.equal(stateExists(out), false);
  const now = new Date(2026, 0, 1);
  await writeState({ mode: "slim", before: scan, after: scan, now }, out, ctx, quiet);
  assert.deepEqual(quiet.lines, []);
  assert.equal(stateExists(out), true);
  const doc = JSON.parse(readFileSync(out, "utf8"));
  assert.equal(doc.mode, "slim");
  assert.equal(doc.achieved_ratio_pct, 0);
});
