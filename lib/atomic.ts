/** TRANSITION(issue 11): moved to `lib/_fs/write.ts`; removed when every tool is migrated. @module */
import { type AtomicWriteOptions, sweepTemps, writeFileAtomic as write } from "./_fs/write.ts";
export { fsyncDirectory, STALE_TEMP_MS, tempPrefix } from "./_fs/write.ts";

/** Legacy atomic write. */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions & { refuseSymlink?: boolean } = {},
): void {
  write(path, data, options);
}

/** Legacy sweep. */
export function sweepDeadTemps(dir: string, now: number = Date.now()): number {
  return sweepTemps(dir, { now });
}
