/**
 * `--version` of every tool (`references/cli.md#version`): ctxkit's version and the commit it was
 * built from — stamped into a bundle by `scripts/bundle.ts` (and so into a binary, which
 * `scripts/compile.ts` builds from the bundle), read from the checkout for a source run. Loaded
 * only when `--version` is asked for.
 *
 * @module
 */

import { runGit } from "../git.ts";
import { physicalPath } from "../_fs/inspect.ts";
import { dirname } from "../paths.ts";
import { printable } from "../text.ts";
import { invocation, type Self } from "./self.ts";

/** ctxkit's version: `deno.json`'s and `package.json`'s (`lib/_cli/version_test.ts` holds them equal). */
export const VERSION = "0.1.0";

/**
 * The string literal `scripts/_bundle_file.ts` replaces, in a bundle, with the commit the bundle was
 * built from (`<hex>`, with `-dirty` when the checkout had uncommitted changes to tracked files).
 */
export const BUILD_STAMP_PLACEHOLDER = "@ctxkit-build-commit@";

/**
 * The stamp, or the placeholder still (a source run). Read through a prefix test no bundler folds
 * away, whichever way it inlines the constant.
 */
function stampedCommit(): string | undefined {
  const stamp: string = BUILD_STAMP_PLACEHOLDER;
  return stamp.startsWith("@ctxkit-build") || stamp === "" ? undefined : stamp;
}

/**
 * The commit of the checkout holding `scriptPath` (`<root>/bin/<tool>.ts`), with `-dirty` when it
 * has uncommitted changes to tracked files; `undefined` when `<root>` is no git work tree's top
 * level (a vendored copy of `bin/` and `lib/` inside another repository is not ctxkit's checkout).
 */
export function checkoutCommit(scriptPath: string): string | undefined {
  const root = dirname(dirname(scriptPath));
  const top = runGit(["rev-parse", "--show-toplevel", "HEAD"], root);
  if (top.status !== 0) return undefined;
  const [toplevel, head] = top.stdout.split("\n");
  if (physicalPath(toplevel) !== physicalPath(root) || !/^[0-9a-f]{40,64}$/.test(head)) {
    return undefined;
  }
  const status = runGit(["status", "--porcelain", "--untracked-files=no"], root);
  return status.status === 0 && status.stdout !== "" ? `${head}-dirty` : head;
}

/**
 * The one line `--version` prints:
 * `<tool> <version> (commit <commit>|unknown; <form> <program>)`.
 *
 * @example
 * ```ts ignore
 * versionLine(self); // "context-guard 0.1.0 (commit 18f687a…; bundle dist/context-guard.js)"
 * ```
 */
export function versionLine(self: Self): string {
  const { form, program } = invocation(self);
  const fromSource = !Deno.build.standalone && self.scriptPath.endsWith(".ts");
  const commit = stampedCommit() ?? (fromSource ? checkoutCommit(self.scriptPath) : undefined) ??
    "unknown";
  return `${self.tool} ${VERSION} (commit ${commit}; ${form} ${printable(program)})`;
}
