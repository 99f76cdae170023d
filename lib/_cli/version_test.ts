import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILD_STAMP_PLACEHOLDER, checkoutCommit, VERSION, versionLine } from "./version.ts";
import { git, makeTempDir, REPO } from "../../tests/_helpers.ts";
import { withBuildStamp } from "../../scripts/_bundle_file.ts";

Deno.test("VERSION is deno.json's and package.json's", () => {
  for (const file of ["deno.json", "package.json"]) {
    assert.equal(JSON.parse(Deno.readTextFileSync(join(REPO, file))).version, VERSION, file);
  }
});

Deno.test("checkoutCommit: the checkout's HEAD, -dirty with changes; unknown inside another repository", () => {
  const repo = makeTempDir("ctxkit-version-");
  mkdirSync(join(repo, "bin"));
  writeFileSync(join(repo, "bin", "prose.ts"), "1\n");
  git(repo, "init", "-q");
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "one");
  const head = git(repo, "rev-parse", "HEAD").trim();
  const script = join(repo, "bin", "prose.ts");
  assert.equal(checkoutCommit(script), head);
  writeFileSync(script, "2\n");
  assert.equal(checkoutCommit(script), `${head}-dirty`);
  // A vendored bin/ inside someone else's repository is not a ctxkit checkout.
  mkdirSync(join(repo, "plugin", "ctxkit", "bin"), { recursive: true });
  assert.equal(checkoutCommit(join(repo, "plugin", "ctxkit", "bin", "prose.ts")), undefined);
  assert.equal(checkoutCommit(join(makeTempDir("ctxkit-nogit-"), "bin", "x.ts")), undefined);
});

Deno.test("versionLine: tool, version, commit, form and program", () => {
  const line = versionLine({ tool: "prose", scriptPath: join(REPO, "bin", "prose.ts") });
  const commit = checkoutCommit(join(REPO, "bin", "prose.ts")) ?? "unknown";
  assert.match(line, new RegExp(`^prose ${VERSION} \\(commit ${commit}; source `));
  assert.equal(
    versionLine({ tool: "prose", scriptPath: "/nowhere/dist/prose.js", invokedAs: "p.sh" }),
    `prose ${VERSION} (commit unknown; wrapper p.sh)`,
  );
});

Deno.test("withBuildStamp: every placeholder literal replaced; a bundle without one is refused", () => {
  const literal = JSON.stringify(BUILD_STAMP_PLACEHOLDER);
  assert.equal(withBuildStamp(`a=${literal};b=${literal}`, "abc"), 'a="abc";b="abc"');
  assert.equal(withBuildStamp(`a=${literal}`, undefined), 'a="unknown"');
  assert.throws(() => withBuildStamp("a=1", "abc"), /no build stamp placeholder/);
});
