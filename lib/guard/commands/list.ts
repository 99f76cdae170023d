/**
 * context-guard `list` (`references/context-guard.md#list`): the backups, newest first.
 *
 * @module
 */

import { listRegularFiles } from "../../_fs/dirs.ts";
import { text } from "../../text.ts";
import { listBackups } from "../backups.ts";
import { manifestLayer } from "../manifest.ts";
import { type Reporter, silentReporter } from "../report.ts";
import type { GuardRoots } from "../roots.ts";

/** One row of `list`. */
export interface BackupRow {
  /** Backup directory name. */
  name: string;
  /** Regular files under `orig/` (0 when absent). */
  files: number;
  /** Manifest layer, or `?`. */
  layer: string;
}

/** context-guard `list`: a Markdown table of the backups, newest first. */
export function list(roots: GuardRoots, reporter: Reporter = silentReporter): BackupRow[] {
  const rows = listBackups(roots.backups).map((name) => {
    const dir = `${roots.backups}/${name}`;
    return { name, files: listRegularFiles(`${dir}/orig`).length, layer: manifestLayer(dir) };
  });
  reporter.out(text`| Backup | Files | Layer |`);
  reporter.out(text`|--------|-------|-------|`);
  for (const r of rows) reporter.out(text`| ${r.name} | ${r.files} | ${r.layer} |`);
  return rows;
}
