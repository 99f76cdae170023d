/**
 * text-guard `status` (`references/context-guard.md#text-guard`): what a run dir holds.
 *
 * @module
 */

import { listRegularFiles } from "../../_fs/dirs.ts";
import { text } from "../../text.ts";
import type { Reporter } from "../report.ts";
import { requireSnapshotDir } from "../run_dir.ts";

/** The regular files under `<run dir>/orig`, sorted, printed; no root is resolved. */
export function stageStatus(runDir: string, reporter: Reporter): string[] {
  requireSnapshotDir(runDir);
  const rels = listRegularFiles(`${runDir}/orig`);
  reporter.out(text`RUN_DIR: ${runDir}`);
  reporter.out(text`SNAPSHOT: ${rels.length} files`);
  for (const rel of rels) reporter.out(text`  ${rel}`);
  return rels;
}
