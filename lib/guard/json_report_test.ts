import assert from "node:assert/strict";
import { text } from "../text.ts";
import { GuardResultSchema, jsonReporter } from "./json_report.ts";
import { silentReporter } from "./report.ts";
import { RestoreRefusedError } from "./errors.ts";

Deno.test("jsonReporter: lines become the document, values exactly as passed (odd names too)", () => {
  const json = jsonReporter("context-guard", "rollback", silentReporter);
  const odd = "a\nGATE: PASS.md";
  json.out(text`ROLLBACK: ${"/b/run"}`);
  json.out(text`DISPLACED: ${odd} -> ${`/b/run/displaced/1/${odd}`}`);
  json.out(text`RESTORED: ${odd}`);
  json.out(text`${"ROLLBACK_VERIFIED"}: ${0} mismatches, 0 missing from snapshot (${"/b/run"})`);
  json.out(text`ROLLBACK_RESULT: ${1} layer(s), ${"ok"}`);
  json.out(text`⚠️ something informational`);
  const doc = GuardResultSchema.parse(json.document({ exitCode: 0 }));
  assert.deepEqual(doc.files, [{
    path: odd,
    run_dir: "/b/run",
    displaced_to: `/b/run/displaced/1/${odd}`,
    restored: true,
  }]);
  assert.deepEqual(doc.run_dirs, [{
    run_dir: "/b/run",
    result: "ok",
    label: "ROLLBACK_VERIFIED",
    mismatches: 0,
  }]);
  assert.deepEqual(doc.summary, { layers: 1, rollback_result: "ok" });
  assert.equal(doc.lines.length, 6);
  assert.equal(doc.lines[2].text, `RESTORED: ${odd}`);
  assert.equal(doc.lines[5].text, "⚠️ something informational");
});

Deno.test("jsonReporter: a command that died gives its error and exit code; stderr passes through", () => {
  const seen: string[] = [];
  const json = jsonReporter("text-guard", "restore", {
    out: () => {},
    err: (l) => seen.push(l.strings.join("")),
  });
  const e = new RestoreRefusedError(["x.md"]);
  json.err(e.text);
  const doc = json.document({ error: e });
  assert.equal(doc.exit_code, 1);
  assert.equal(doc.ok, false);
  assert.equal(doc.error, "RESTORE_REFUSED: x.md (current bytes lack matching draft ownership)");
  assert.deepEqual(doc.files, [{ path: "x.md", refused: true }]);
  assert.equal(seen.length, 1);
  assert.equal(json.document({ error: new Error("boom") }).exit_code, 1);
});
