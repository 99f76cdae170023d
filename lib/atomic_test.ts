import assert from "node:assert/strict";
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { sweepDeadTemps, tempPrefix, writeFileAtomic } from "./atomic.ts";

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("writeFileAtomic sweeps the temp files a killed writer left next to the file", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "ctxkit-atomic-" });
  const path = `${dir}/CLAUDE.md`;
  writeFileSync(path, "old\n");
  const dead = `${tempPrefix(path)}${await deadPid()}-0123456789ab`;
  const live = `${tempPrefix(path)}${Deno.pid}-0123456789ab`; // a writer still running (us)
  const other = `${tempPrefix(`${dir}/other.md`)}${await deadPid()}-0123456789ab`; // dead too
  const odd = `${tempPrefix(path)}notapid-0123456789ab`; // not our naming
  for (const name of [dead, live, other, odd]) writeFileSync(`${dir}/${name}`, "partial");
  mkdirSync(`${dir}/${tempPrefix(path)}999999998-0123456789ab`); // not a regular file
  writeFileAtomic(path, "new\n");
  assert.equal(readFileSync(path, "utf8"), "new\n");
  assert.deepEqual(
    readdirSync(dir).sort(),
    ["CLAUDE.md", live, `${tempPrefix(path)}999999998-0123456789ab`, odd].sort(),
  );
});

Deno.test("sweepDeadTemps never follows or removes a symlink, and tolerates a missing directory", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "ctxkit-atomic-" });
  const path = `${dir}/a.md`;
  const target = `${dir}/keep.txt`;
  writeFileSync(target, "keep");
  const link = `${dir}/${tempPrefix(path)}${await deadPid()}-0123456789ab`;
  symlinkSync(target, link);
  assert.equal(sweepDeadTemps(dir), 0);
  assert.equal(readFileSync(target, "utf8"), "keep");
  assert.deepEqual(readdirSync(dir).sort(), [link.slice(dir.length + 1), "keep.txt"].sort());
  assert.equal(sweepDeadTemps(`${dir}/missing`), 0);
});
