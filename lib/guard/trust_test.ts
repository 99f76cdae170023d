import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { makeTempDir } from "../../tests/_helpers.ts";
import { UsageError } from "../errors.ts";
import { judgeRestore, writeDraftRecord } from "./ownership.ts";
import { isTrustRun, restoreOverride, trustFromEnv, writeTrustMarker } from "./trust.ts";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

function withEnv(value: string | undefined, fn: () => void): void {
  const before = Deno.env.get("CTXKIT_GUARD_TRUST");
  if (value === undefined) Deno.env.delete("CTXKIT_GUARD_TRUST");
  else Deno.env.set("CTXKIT_GUARD_TRUST", value);
  try {
    fn();
  } finally {
    if (before === undefined) Deno.env.delete("CTXKIT_GUARD_TRUST");
    else Deno.env.set("CTXKIT_GUARD_TRUST", before);
  }
}

Deno.test("trustFromEnv: snapshot takes a trust run; unset or empty does not; anything else is a usage error", () => {
  withEnv("snapshot", () => assert.equal(trustFromEnv(), true));
  withEnv(undefined, () => assert.equal(trustFromEnv(), false));
  withEnv("", () => assert.equal(trustFromEnv(), false));
  withEnv("Snapshot", () => assert.throws(() => trustFromEnv(), UsageError));
});

Deno.test("the marker: written once, read only as a regular file holding snapshot", () => {
  const run = makeTempDir("ctxkit-trust-");
  assert.equal(isTrustRun(run), false);
  assert.equal(restoreOverride(run), undefined);
  assert.equal(restoreOverride(run, true), "force");
  writeTrustMarker(run);
  assert.equal(isTrustRun(run), true);
  assert.equal(restoreOverride(run), "trust");
  assert.throws(() => writeTrustMarker(run)); // exclusive
  const linked = makeTempDir("ctxkit-trust-link-");
  symlinkSync(`${run}/trust`, `${linked}/trust`);
  assert.equal(isTrustRun(linked), false, "a planted link is no marker");
  const other = makeTempDir("ctxkit-trust-other-");
  writeFileSync(`${other}/trust`, "yes\n");
  assert.equal(isTrustRun(other), false);
});

Deno.test("judgeRestore under an override: trust needs no record, force ignores one; both displace", () => {
  const root = makeTempDir("ctxkit-judge-");
  const run = `${root}/run`;
  mkdirSync(`${run}/orig`, { recursive: true });
  writeFileSync(`${run}/orig/a.md`, "A\n");
  writeFileSync(`${root}/a.md`, "edited\n");
  const copy = sha("A\n");
  const judge = (o?: "trust" | "force") => judgeRestore(run, "a.md", `${root}/a.md`, copy, o);
  assert.deepEqual([judge().allowed, judge().displace], [false, undefined]);
  assert.deepEqual([judge("trust").allowed, judge("trust").displace], [true, true]);
  // A record that no longer matches is someone else's edit: trust refuses, force does not.
  writeDraftRecord(run, "a.md", sha("the optimizer's\n"));
  assert.equal(judge("trust").allowed, false);
  assert.deepEqual([judge("force").allowed, judge("force").displace], [true, true]);
  // A deleted file is re-created: nothing to keep.
  Deno.removeSync(`${root}/a.md`);
  assert.deepEqual([judge("force").allowed, judge("force").displace], [true, false]);
  // A directory at the target stays refused, whatever the override.
  mkdirSync(`${root}/a.md`);
  assert.equal(judge("force").allowed, false);
});
