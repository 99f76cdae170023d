import assert from "node:assert/strict";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";

import { gitToplevel, runGit } from "./git.ts";
import { git, makeTempDir } from "../tests/_helpers.ts";

Deno.test("runGit captures status and both streams; gitToplevel strips the newline", () => {
  const base = makeTempDir("ctxkit-git-");
  const repo = `${base}/repo`;
  mkdirSync(`${repo}/sub`, { recursive: true });
  git(repo, "init", "-q");
  const ok = runGit(["rev-parse", "--is-inside-work-tree"], `${repo}/sub`);
  assert.deepEqual(ok, { status: 0, stdout: "true\n", stderr: "" });
  assert.equal(gitToplevel(`${repo}/sub`), realpathSync(repo));
  const bad = runGit(["no-such-subcommand"], repo);
  assert.equal(bad.status, 1);
  assert.equal(bad.stdout, "");
  assert.match(bad.stderr, /no-such-subcommand/);
  // Outside any work tree: git fails, no toplevel.
  mkdirSync(`${base}/plain`);
  assert.notEqual(runGit(["rev-parse", "--show-toplevel"], `${base}/plain`).status, 0);
  assert.equal(gitToplevel(`${base}/plain`), undefined);
});

Deno.test("runGit never throws: a git that cannot start (or a missing cwd) is status null", () => {
  const base = makeTempDir("ctxkit-git-");
  const gone = runGit(["status"], `${base}/absent`);
  assert.equal(gone.status, null);
  assert.equal(gone.stdout, "");
  assert.notEqual(gone.stderr, "");
  assert.equal(gitToplevel(`${base}/absent`), undefined);
  // No git on PATH, in a child process (PATH is the process's).
  const script = `${base}/probe.ts`;
  writeFileSync(
    script,
    `import { gitToplevel, runGit } from ${
      JSON.stringify(new URL("./git.ts", import.meta.url).href)
    };\n` +
      `const r = runGit(["--version"], Deno.cwd());\n` +
      `console.log(JSON.stringify([r.status, r.stdout, gitToplevel(Deno.cwd()) ?? null]));\n`,
  );
  const probe = (grants: string[]) => {
    const r = new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", ...grants, script],
      cwd: base,
      clearEnv: true,
      env: { PATH: `${base}/empty-bin`, HOME: base },
      stdout: "piped",
      stderr: "piped",
    }).outputSync();
    assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
    return new TextDecoder().decode(r.stdout);
  };
  assert.equal(probe(["--allow-run=git", "--allow-read"]), '[null,"",null]\n');
  // A missing --allow-run=git grant is "no git" too, never a crash.
  assert.equal(probe(["--allow-read"]), '[null,"",null]\n');
});
