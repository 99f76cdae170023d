/**
 * The one pinned Claude Code version ctxkit's observed tests and benches run, and its installer:
 * `npm install --prefix .cache/claude-code/<version>` on demand (not part of the README's `npm ci`,
 * which must stay fast; only `deno task test:observed` and `.ci/run` ask for it), announced on
 * stderr before the download starts. Concurrent installers each install into a private folder and rename it
 * into place; the first rename wins and the others discard theirs.
 *
 * `deno run -A scripts/claude_code.ts` installs it and prints the path of its `claude`.
 *
 * @module
 */

import { isExecutableFile } from "../lib/scan/observe/run.ts";

/** The Claude Code version the observed suites pin (`references/context-scan.md#observe`). */
export const CLAUDE_CODE_VERSION = "2.1.332";
/** The pinned version's install size in MB (`du -sm`), announced before it is downloaded. */
export const CLAUDE_CODE_INSTALL_MB = 384;

const REPO = new URL("..", import.meta.url).pathname.replace(/\/$/, "");

/** The cache folder (ignored by git) holding one installed Claude Code per version. */
export function claudeCodeCache(): string {
  return Deno.env.get("CTXKIT_CLAUDE_CODE_CACHE") ?? `${REPO}/.cache/claude-code`;
}

/** Where the pinned version's `claude` is once installed. */
export function pinnedClaudePath(version = CLAUDE_CODE_VERSION): string {
  return `${claudeCodeCache()}/${version}/node_modules/.bin/claude`;
}

/**
 * Install the pinned Claude Code when it is not there yet and return its `claude`, or a reason it
 * cannot be had (npm missing, the registry unreachable) for a test to skip with.
 */
export async function ensureClaudeCode(
  version = CLAUDE_CODE_VERSION,
): Promise<{ claude: string } | { skip: string }> {
  const claude = pinnedClaudePath(version);
  if (isExecutableFile(claude)) return { claude };
  const cache = claudeCodeCache();
  // A download this large is said before it starts: what, how big, where, and that it is once.
  console.error(
    `Installing Claude Code ${version} for the observed tests (npm, about ${
      version === CLAUDE_CODE_VERSION ? CLAUDE_CODE_INSTALL_MB : "several hundred"
    } MB) into ${cache}/${version}, once: later runs reuse it`,
  );
  Deno.mkdirSync(cache, { recursive: true });
  const staging = Deno.makeTempDirSync({ dir: cache, prefix: `.install-${version}-` });
  try {
    let out: Deno.CommandOutput;
    try {
      out = await new Deno.Command("npm", {
        args: [
          "install",
          "--no-audit",
          "--no-fund",
          "--no-save",
          "--prefix",
          staging,
          `@anthropic-ai/claude-code@${version}`,
        ],
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
    } catch (e) {
      return { skip: `npm cannot be run to install Claude Code ${version}: ${e}` };
    }
    if (!out.success) {
      const why = new TextDecoder().decode(out.stderr).trim().split("\n").at(-1) ?? "";
      return { skip: `npm install @anthropic-ai/claude-code@${version} failed: ${why}` };
    }
    if (!isExecutableFile(`${staging}/node_modules/.bin/claude`)) {
      return { skip: `Claude Code ${version} installed no claude binary for this platform` };
    }
    try {
      Deno.renameSync(staging, `${cache}/${version}`);
    } catch (e) {
      // Another installer won the rename: its copy is the one used.
      if (!isExecutableFile(claude)) throw e;
    }
    return { claude };
  } finally {
    try {
      Deno.removeSync(staging, { recursive: true });
    } catch { /* renamed into place, or already gone */ }
  }
}

if (import.meta.main) {
  const got = await ensureClaudeCode();
  if ("skip" in got) {
    console.error(got.skip);
    Deno.exit(1);
  }
  console.log(got.claude);
}
