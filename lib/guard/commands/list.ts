/**
 * context-guard `list` (`references/context-guard.md#list`): this invocation's runs, newest first.
 *
 * @module
 */

import { listRegularFiles } from "../../_fs/dirs.ts";
import { text } from "../../text.ts";
import { type Reporter, silentReporter } from "../report.ts";
import type { GuardRoots } from "../roots.ts";
import { sameRootAs, scanRuns, warnIgnored } from "../runs.ts";

/** One row of `list`. */
export interface BackupRow {
  /** Backup directory name. */
  name: string;
  /** Regular files under `orig/` (0 when absent). */
  files: number;
  /** The manifest's layer, or `?` for an incomplete run. */
  layer: string;
}

/**
 * context-guard `list`: a Markdown table of the runs of this project root and of the global root,
 * plus incomplete runs (layer `?`, they belong to no one yet), newest first. Other projects' runs
 * are not shown, nor another user's (one line names each, as every command that reads runs does).
 */
export function list(roots: GuardRoots, reporter: Reporter = silentReporter): BackupRow[] {
  const isProject = sameRootAs(() => roots.project);
  const isGlobal = sameRootAs(() => roots.global);
  const scan = scanRuns(roots.backups);
  warnIgnored(scan, roots.backups, reporter);
  const rows = scan.runs.filter((r) => {
    const h = r.head;
    if (h === undefined) return true;
    return h.layer === "project" ? isProject.run(h) : isGlobal.run(h);
  }).map((r) => ({
    name: r.name,
    files: listRegularFiles(`${r.dir}/orig`).length,
    layer: r.head?.layer ?? r.rawLayer,
  }));
  reporter.out(text`| Backup | Files | Layer |`);
  reporter.out(text`|--------|-------|-------|`);
  for (const r of rows) reporter.out(text`| ${r.name} | ${r.files} | ${r.layer} |`);
  return rows;
}
