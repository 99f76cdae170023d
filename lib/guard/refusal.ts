/**
 * What a refused restore tells its reader (`references/context-guard.md#may-restore`): under each
 * `RESTORE_REFUSED:` line, where the current bytes (kept) and the original are, and the exact
 * command that restores the file anyway — `restore --run-dir <D> --force <file>`, which keeps the
 * current bytes in `displaced/` first. The command is the running tool's own, as its command line
 * registered it (`force_command.ts`); a library caller gets the bare subcommand.
 *
 * @module
 */

import { shellCommand } from "../shell.ts";
import { type Text, text } from "../text.ts";
import { displacedRoot } from "./displace.ts";
import { forceCommand } from "./force_command.ts";
import type { ResolvedPath } from "./roots.ts";
import { absoluteRunDir, snapshotCopyPath } from "./run_dir.ts";

/** The forced-restore command for `target` of `runDir`, as the running tool spells it. */
export function forcedRestoreCommand(runDir: string, target: ResolvedPath, root: string): string {
  const dir = absoluteRunDir(runDir);
  return forceCommand()?.(dir, target, root) ??
    shellCommand(["restore", "--run-dir", dir, "--force", target.abs]);
}

/**
 * The two lines under a `RESTORE_REFUSED:` line: where the current bytes and the original are,
 * and how to restore the file anyway.
 *
 * @example
 * ```ts ignore
 * refusalHint("/b/run", { arg: "CLAUDE.md", abs: "/p/CLAUDE.md", rel: "CLAUDE.md" }, "/p");
 * // "  current: /p/CLAUDE.md (kept) · original: /b/run/orig/CLAUDE.md"
 * // "  to restore it anyway, keeping the current bytes in /b/run/displaced/: restore --run-dir /b/run --force /p/CLAUDE.md"
 * ```
 */
export function refusalHint(runDir: string, target: ResolvedPath, root: string): Text {
  const dir = absoluteRunDir(runDir);
  return text`  current: ${target.abs} (kept) · original: ${snapshotCopyPath(dir, target.rel)}
  to restore it anyway, keeping the current bytes in ${`${displacedRoot(dir)}/`}: ${
    forcedRestoreCommand(runDir, target, root)
  }`;
}
