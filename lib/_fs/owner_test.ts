import assert from "node:assert/strict";
import { chmodSync, chownSync, mkdirSync, symlinkSync } from "node:fs";
import {
  ancestryProblem,
  type Invoker,
  invokingUser,
  ownPrivate,
  writableByOthers,
} from "./owner.ts";
import { IS_ROOT, makeTempDir } from "../../tests/_helpers.ts";

const stat = (mode: number, uid = 1000, gid = 1000) => ({ mode, uid, gid }) as Deno.FileInfo;
const me: Invoker = { uid: 1000, gid: 1000 };

Deno.test("writableByOthers: the other bit, or the group bit of a group that is not the user's own", () => {
  assert.equal(writableByOthers(stat(0o40700), me), false);
  assert.equal(writableByOthers(stat(0o40755), me), false);
  assert.equal(writableByOthers(stat(0o40777), me), true);
  assert.equal(writableByOthers(stat(0o41777), me), true); // sticky: still writable (judged by the walk)
  assert.equal(writableByOthers(stat(0o40775, 1000, 1000), me), false); // user-private group
  assert.equal(writableByOthers(stat(0o40775, 1000, 50), me), true); // a shared group
  assert.equal(ownPrivate(stat(0o40700), me), true);
  assert.equal(ownPrivate(stat(0o40700, 0), me), false);
  assert.equal(ownPrivate(stat(0o100666), me), false);
});

Deno.test("invokingUser: the uid this process runs as", () => {
  assert.deepEqual(invokingUser(), { uid: Deno.uid(), gid: Deno.gid() });
});

Deno.test({
  name:
    "ancestryProblem: a sticky shared folder is fine for entries of the user's own, not for another user's; a non-sticky one never",
  ignore: !IS_ROOT,
  fn: () => {
    const who = invokingUser()!;
    const base = makeTempDir("ctxkit-owner-");
    const sticky = `${base}/shared`;
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    mkdirSync(`${sticky}/mine/backups`, { recursive: true });
    assert.equal(ancestryProblem(`${sticky}/mine/backups`, who), undefined);
    assert.equal(ancestryProblem(`${sticky}/mine/not-made-yet/b`, who), undefined);
    mkdirSync(`${sticky}/theirs`);
    chownSync(`${sticky}/theirs`, 65534, 65534);
    assert.deepEqual(ancestryProblem(`${sticky}/theirs/backups`, who), {
      at: `${sticky}/theirs`,
      why: "not-owned",
      uid: 65534,
    });
    const open = `${base}/open`;
    mkdirSync(`${open}/mine`, { recursive: true });
    chmodSync(open, 0o777);
    assert.deepEqual(ancestryProblem(`${open}/mine`, who), { at: open, why: "writable" });
    // A link into an unsafe place is judged where it leads too.
    symlinkSync(`${open}/mine`, `${base}/link`);
    assert.deepEqual(ancestryProblem(`${base}/link`, who), { at: open, why: "writable" });
  },
});
