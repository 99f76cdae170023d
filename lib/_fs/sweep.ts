/**
 * The sweep of temp files a killed writer left behind (`references/reliability.md#atomic-writes`):
 * after its first successful write into a directory, a process removes the leftovers there — never
 * a link, never a live writer's fresh temp.
 *
 * @module
 */

import { processGone } from "./inspect.ts";

/** A leftover temp file this old is stale whoever wrote it. */
export const STALE_TEMP_MS = 60_000;

/** Options of {@linkcode sweepTemps}. */
export interface SweepOptions {
  /**
   * The temp names to sweep: `<prefix><pid>-<hex>`. Default: any destination's
   * {@linkcode tempPrefix}.
   */
  prefix?: string;
  /** Also remove temps whose writer pid is known to be gone (default `true`). */
  deadWriters?: boolean;
  /** The clock (epoch-ms). */
  now?: number;
}

const ANY_PREFIX = /^\..*\.ctxkit-tmp-([0-9]+)-[0-9a-f]+$/s;

/**
 * Delete the temp files in `dir` left by writers killed between the temp write and the rename, so
 * a crash never leaves ctxkit litter next to a user's file for good: those older than
 * {@linkcode STALE_TEMP_MS}, and (with `deadWriters`) those whose writer pid is gone. Only regular
 * files named like ctxkit's temps are touched, never links, never this process's own; returns how
 * many were removed.
 */
export function sweepTemps(dir: string, options: SweepOptions = {}): number {
  const { deadWriters = true, now = Date.now() } = options;
  const prefix = options.prefix;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch {
    return 0;
  }
  let count = 0;
  for (const entry of entries) {
    const name = entry.name;
    let pid: number;
    if (prefix === undefined) {
      const m = ANY_PREFIX.exec(name);
      if (m === null) continue;
      pid = Number(m[1]);
    } else {
      if (!name.startsWith(prefix)) continue;
      const m = /^([0-9]+)-[0-9a-f]+$/.exec(name.slice(prefix.length));
      if (m === null) continue;
      pid = Number(m[1]);
    }
    if (pid === Deno.pid) continue;
    const path = `${dir}/${name}`;
    try {
      const st = Deno.lstatSync(path);
      if (!st.isFile) continue;
      const age = now - (st.mtime?.getTime() ?? now);
      if (age <= STALE_TEMP_MS && !(deadWriters && processGone(pid))) continue;
      Deno.removeSync(path);
      count++;
    } catch { /* raced with another sweeper, or not ours to remove */ }
  }
  return count;
}
