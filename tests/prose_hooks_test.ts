/**
 * `prose install-hooks` (`references/prose.md#git-hooks`): managed blocks in post-commit and pre-push that
 * honour core.hooksPath, never clobber or block an existing hook, and end block flags on commit
 * and push.
 */
import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  lstatSync,
  readFileSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { shellCommand, shellQuote } from "../lib/shell.ts";
import { baseEnv, git, isolatedCommand, lines, makeTempDir, selfCommandWords } from "./_helpers.ts";
import { flagPath, freshRoot, out, prose } from "./_prose_fixtures.ts";

const BEGIN = "# >>> ctxkit prose >>>";
const END = "# <<< ctxkit prose <<<";

function repo(): string {
  const dir = makeTempDir("prose-repo-");
  git(dir, "init", "-q", "-b", "main");
  return dir;
}

function hook(dir: string, name: string): string {
  return join(dir, ".git", "hooks", name);
}

Deno.test("install-hooks creates two 0755 hooks; a rerun is unchanged; --dry-run writes nothing", () => {
  const dir = repo();
  const dry = prose(undefined, ["install-hooks", "--dry-run"], { cwd: dir });
  assert.deepEqual(out(dry), [
    `PROSE: hook=post-commit result=would-create path=${hook(dir, "post-commit")}`,
    `PROSE: hook=pre-push result=would-create path=${hook(dir, "pre-push")}`,
  ]);
  assert.equal(existsSync(hook(dir, "post-commit")), false);
  const r = prose(undefined, ["install-hooks", "--repo", dir]);
  assert.equal(r.code, 0);
  assert.deepEqual(out(r), [
    `PROSE: hook=post-commit result=created path=${hook(dir, "post-commit")}`,
    `PROSE: hook=pre-push result=created path=${hook(dir, "pre-push")}`,
  ]);
  for (const name of ["post-commit", "pre-push"]) {
    assert.equal(lstatSync(hook(dir, name)).mode & 0o777, 0o755);
    const text = readFileSync(hook(dir, name), "utf8");
    const l = lines(text);
    assert.equal(l[0], "#!/bin/sh");
    assert.equal(l[1], BEGIN);
    assert.equal(l[2], "# this hook was created by prose install-hooks; --remove deletes it");
    // The tool's own command line (runtime, grants, config and script, or a binary alone),
    // every word quoted, then the subcommand.
    const self = selfCommandWords("prose", [
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-net=127.0.0.1,localhost,[::1]",
      "--allow-run=git",
    ]);
    assert.equal(
      l[3],
      `${shellCommand([...self, "block-end"], { always: true })} </dev/null >/dev/null 2>&1 || ` +
        `echo ${
          shellQuote(
            `❌ ctxkit prose: block-end did not run (${
              self.at(-1)
            } missing or failing; moved plugin?) - a block flag may still be on: run prose install-hooks again, or prose off`,
            { always: true },
          )
        } >&2`,
    );
    assert.equal(l[4], END);
    assert.equal(l.length, 5);
  }
  const again = prose(undefined, ["install-hooks"], { cwd: dir });
  assert.deepEqual(out(again).map((x) => x.split(" ")[2]), [
    "result=unchanged",
    "result=unchanged",
  ]);
  // An edited command line (still `… 'block-end' </dev/null …`: ours) is rewritten in place.
  const pc = hook(dir, "post-commit");
  writeFileSync(pc, readFileSync(pc, "utf8").replace(" 'block-end'", " '--stale' 'block-end'"));
  assert.match(out(prose(undefined, ["install-hooks"], { cwd: dir }))[0], / result=updated /);
  // --remove deletes hooks that only held the shebang.
  const rm = prose(undefined, ["install-hooks", "--remove"], { cwd: dir });
  assert.deepEqual(out(rm).map((x) => x.split(" ")[2]), ["result=deleted", "result=deleted"]);
  assert.equal(existsSync(pc), false);
  assert.deepEqual(
    out(prose(undefined, ["install-hooks", "--remove"], { cwd: dir })).map((x) => x.split(" ")[2]),
    ["result=not-installed", "result=not-installed"],
  );
});

Deno.test("existing hooks: bash gets the block after line 1 and --remove restores the bytes; python and symlinks are refused", () => {
  const dir = repo();
  const original = '#!/usr/bin/env bash\nset -e\necho "pushing"\nexit 0\n';
  writeFileSync(hook(dir, "pre-push"), original, { mode: 0o750 });
  chmodSync(hook(dir, "pre-push"), 0o750);
  const python = "#!/usr/bin/env python3\nprint('hi')\n";
  writeFileSync(hook(dir, "post-commit"), python, { mode: 0o755 });
  const r = prose(undefined, ["install-hooks"], { cwd: dir });
  assert.equal(r.code, 1);
  assert.deepEqual(out(r), [
    `PROSE: hook=post-commit result=refused reason=not-shell path=${hook(dir, "post-commit")}`,
    `PROSE: hook=pre-push result=inserted path=${hook(dir, "pre-push")}`,
  ]);
  assert.match(
    lines(r.stderr)[0],
    /^PROSE-ERROR: code=not-shell .*add this line .*'block-end' <\/dev\/null/,
  );
  assert.equal(readFileSync(hook(dir, "post-commit"), "utf8"), python);
  const text = readFileSync(hook(dir, "pre-push"), "utf8");
  const l = lines(text);
  assert.deepEqual([l[0], l[1], l[3]], ["#!/usr/bin/env bash", BEGIN, END]);
  assert.deepEqual(l.slice(4), ["set -e", 'echo "pushing"', "exit 0"]);
  assert.equal(lstatSync(hook(dir, "pre-push")).mode & 0o777, 0o750);
  const rm = prose(undefined, ["install-hooks", "--remove"], { cwd: dir });
  assert.deepEqual(out(rm)[1], `PROSE: hook=pre-push result=removed path=${hook(dir, "pre-push")}`);
  assert.equal(readFileSync(hook(dir, "pre-push"), "utf8"), original);
  assert.equal(lstatSync(hook(dir, "pre-push")).mode & 0o777, 0o750);

  const target = join(makeTempDir("prose-hook-target-"), "shared-hook");
  writeFileSync(target, "#!/bin/sh\nexit 0\n");
  unlinkSync(hook(dir, "pre-push"));
  symlinkSync(target, hook(dir, "pre-push"));
  const linked = prose(undefined, ["install-hooks"], { cwd: dir });
  assert.equal(linked.code, 1);
  assert.equal(
    out(linked)[1],
    `PROSE: hook=pre-push result=refused reason=symlink path=${hook(dir, "pre-push")}`,
  );
  assert.equal(readFileSync(target, "utf8"), "#!/bin/sh\nexit 0\n");

  writeFileSync(hook(dir, "post-commit"), `#!/bin/sh\n${BEGIN}\n${BEGIN}\n${END}\n`);
  const corrupt = prose(undefined, ["install-hooks"], { cwd: dir });
  assert.match(out(corrupt)[0], / result=refused reason=corrupt-block /);
});

Deno.test("install-hooks honours core.hooksPath; outside a repository it is rc 2", () => {
  const dir = repo();
  git(dir, "config", "core.hooksPath", "custom-hooks");
  const r = prose(undefined, ["install-hooks"], { cwd: dir });
  assert.equal(r.code, 0);
  assert.equal(existsSync(join(dir, "custom-hooks", "post-commit")), true);
  assert.equal(existsSync(hook(dir, "post-commit")), false);
  const outside = prose(undefined, ["install-hooks"], { cwd: makeTempDir("prose-norepo-") });
  assert.equal(outside.code, 2);
  assert.match(lines(outside.stderr)[0], /^PROSE-ERROR: code=usage /);
});

function gitWith(cwd: string, env: Record<string, string>, ...args: string[]) {
  const [program, programArgs] = isolatedCommand({ ...baseEnv(), ...env }, ["git", ...args]);
  return spawnSync(program, programArgs, { cwd, encoding: "utf8" });
}

Deno.test("a commit clears a block flag; a push whose pre-push reads stdin still succeeds", () => {
  const root = freshRoot();
  const dir = repo();
  const remote = makeTempDir("prose-remote-");
  git(remote, "init", "-q", "--bare", "-b", "main");
  const seen = join(makeTempDir("prose-seen-"), "stdin.txt");
  writeFileSync(hook(dir, "pre-push"), `#!/bin/sh\ncat > '${seen}'\nexit 0\n`, { mode: 0o755 });
  chmodSync(hook(dir, "pre-push"), 0o755);
  assert.equal(prose(undefined, ["install-hooks"], { cwd: dir }).code, 0);

  prose(root, ["on", "block"]);
  writeFileSync(join(dir, "a.txt"), "a\n");
  git(dir, "add", "a.txt");
  const commit = gitWith(dir, { CELLM_DIR: root }, "commit", "-q", "-m", "a");
  assert.equal(commit.status, 0, commit.stderr);
  assert.equal(existsSync(flagPath(root)), false);

  prose(root, ["on", "3", "turns"]);
  writeFileSync(join(dir, "b.txt"), "b\n");
  git(dir, "add", "b.txt");
  assert.equal(gitWith(dir, { CELLM_DIR: root }, "commit", "-q", "-m", "b").status, 0);
  assert.equal(existsSync(flagPath(root)), true, "a turn flag survives a commit");

  prose(root, ["on", "block"]);
  const push = gitWith(dir, { CELLM_DIR: root }, "push", "-q", remote, "main");
  assert.equal(push.status, 0, push.stderr);
  assert.equal(existsSync(flagPath(root)), false);
  assert.match(
    readFileSync(seen, "utf8"),
    /^refs\/heads\/main [0-9a-f]{40} refs\/heads\/main 0{40}\n$/,
  );
});

// --- byte-exact hooks and commands that run as printed (issues 13 and 14) ----------------------

Deno.test("install-hooks is byte-exact: non-UTF-8 bytes and a user's shebang-only hook come back as they were", () => {
  const dir = repo();
  const latin1 = new Uint8Array([
    ...new TextEncoder().encode("#!/bin/sh\necho caf"),
    0xe9,
    0x0a,
    0xff,
    0xfe,
    0x0a,
  ]);
  writeFileSync(hook(dir, "pre-push"), latin1, { mode: 0o755 });
  writeFileSync(hook(dir, "post-commit"), "#!/bin/sh\n", { mode: 0o700 });
  chmodSync(hook(dir, "post-commit"), 0o700);
  const r = prose(undefined, ["install-hooks"], { cwd: dir });
  assert.deepEqual(out(r).map((x) => x.split(" ")[2]), ["result=inserted", "result=inserted"]);
  const rm = prose(undefined, ["install-hooks", "--remove"], { cwd: dir });
  assert.deepEqual(out(rm).map((x) => x.split(" ")[2]), ["result=removed", "result=removed"]);
  assert.deepEqual(new Uint8Array(readFileSync(hook(dir, "pre-push"))), latin1);
  assert.equal(readFileSync(hook(dir, "post-commit"), "utf8"), "#!/bin/sh\n");
  assert.equal(lstatSync(hook(dir, "post-commit")).mode & 0o777, 0o700);
});

Deno.test("the installed block's command line and the not-shell hint both run as printed (sh -c)", () => {
  const root = freshRoot();
  const dir = repo();
  writeFileSync(hook(dir, "pre-push"), "#!/usr/bin/env python3\nprint('hi')\n", { mode: 0o755 });
  const r = prose(undefined, ["install-hooks"], { cwd: dir });
  const block = lines(readFileSync(hook(dir, "post-commit"), "utf8"))[3];
  const hint = /add this line after its first line by hand: (.*)$/.exec(lines(r.stderr)[0])?.[1];
  assert.equal(hint, block);
  for (const line of [block, hint!]) {
    prose(root, ["on", "block"]);
    assert.equal(existsSync(flagPath(root)), true);
    const [program, args] = isolatedCommand({ ...baseEnv(), CELLM_DIR: root }, [
      "sh",
      "-c",
      line,
    ]);
    const ran = spawnSync(program, args, {
      cwd: makeTempDir("prose-elsewhere-"),
      encoding: "utf8",
    });
    assert.equal(ran.status, 0, ran.stderr);
    assert.equal(existsSync(flagPath(root)), false, `not cleared by: ${line}`);
  }
});

Deno.test("a line the user adds inside the block survives re-install, and --remove keeps the hook with it (issue 23, point 10)", () => {
  const dir = repo();
  assert.equal(prose(undefined, ["install-hooks"], { cwd: dir }).code, 0);
  const path = hook(dir, "post-commit");
  const mine = 'echo "committed" >>"$HOME/commits.log"';
  const installed = readFileSync(path, "utf8");
  writeFileSync(path, installed.replace(`${END}\n`, `${mine}\n${END}\n`));
  const again = prose(undefined, ["install-hooks"], { cwd: dir });
  assert.equal(out(again)[0], `PROSE: hook=post-commit result=unchanged path=${path}`);
  assert.equal(readFileSync(path, "utf8"), installed.replace(`${END}\n`, `${mine}\n${END}\n`));
  const rm = prose(undefined, ["install-hooks", "--remove"], { cwd: dir });
  assert.deepEqual(out(rm), [
    `PROSE: hook=post-commit result=removed path=${path}`,
    `PROSE: hook=pre-push result=deleted path=${hook(dir, "pre-push")}`,
  ]);
  assert.equal(readFileSync(path, "utf8"), `#!/bin/sh\n${mine}\n`);
  assert.equal(lstatSync(path).mode & 0o777, 0o755);
});
