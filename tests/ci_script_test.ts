/**
 * `.ci/run` counts the static checks (format, lint, types, doc lint) as tests: one broken check
 * makes the run red and shows in the final `N passed, M failed` line. The script runs here against
 * stand-in `npm` and `npx` commands, so the test is about the script's bookkeeping, not the checks.
 */
import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lines, makeTempDir, REPO, writeTree } from "./_helpers.ts";

/** A copy of `.ci/run` with stand-in `npm`/`npx`: every check passes except the one named `failing`. */
function ciWithStandIns(failing: string): { dir: string; env: Record<string, string> } {
  const dir = makeTempDir("ctxkit-ci-");
  mkdirSync(join(dir, ".ci"));
  copyFileSync(join(REPO, ".ci", "run"), join(dir, ".ci", "run"));
  chmodSync(join(dir, ".ci", "run"), 0o755);
  const bin = join(dir, "stand-ins");
  writeTree(bin, {
    npm: "#!/bin/sh\nexit 0\n",
    // A test task prints Deno's summary line; a static check fails when it is the one named.
    npx: `#!/bin/sh
case "$*" in
  "deno task test:observed") echo "$CTXKIT_REQUIRE_OBSERVED" >"$HOME/observed.env"; echo "ok | 3 passed | 0 failed (1s)"; exit 0 ;;
  "deno task test"*) echo "ok | 3 passed | 0 failed (1s)"; exit 0 ;;
  "${failing}") echo "error: broken"; exit 1 ;;
  *) exit 0 ;;
esac
`,
  });
  chmodSync(join(bin, "npm"), 0o755);
  chmodSync(join(bin, "npx"), 0o755);
  return {
    dir,
    env: { PATH: `${bin}:/usr/bin:/bin`, CTXKIT_CI_STRESS: "0", HOME: dir },
  };
}

function runCi(dir: string, env: Record<string, string>): { code: number; last: string } {
  const out = new Deno.Command(join(dir, ".ci", "run"), {
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  const all = lines(new TextDecoder().decode(out.stdout));
  return { code: out.code, last: all.at(-1) ?? "" };
}

Deno.test(".ci/run: with every check green it passes and counts the four checks", () => {
  const { dir, env } = ciWithStandIns("nothing fails");
  const r = runCi(dir, env);
  assert.equal(r.code, 0);
  // 4 static checks + 3 tests from each of the three test tasks (sources, observed, bundles).
  assert.equal(r.last, "13 passed, 0 failed");
  // The observed suites fail, not skip, when they cannot run (tests/_claude.ts).
  assert.equal(readFileSync(join(dir, "observed.env"), "utf8"), "1\n");
});

for (
  const failing of ["deno fmt --check", "deno lint", "deno task check", "deno doc --lint mod.ts"]
) {
  Deno.test(`.ci/run: a failing \`${failing}\` makes the run red`, () => {
    const { dir, env } = ciWithStandIns(failing);
    const r = runCi(dir, env);
    assert.equal(r.code, 1);
    assert.equal(r.last, "12 passed, 1 failed");
  });
}
