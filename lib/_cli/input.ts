/**
 * Reading a command's standard input.
 *
 * @module
 */

/**
 * Read standard input up to `cap` bytes: the bytes, and whether there was more (which is left
 * unread). Reads the descriptor directly: `Deno.stdin.readable` would load the runtime's web
 * streams on a hook's path (≈ 2.5 ms a run, `references/startup.md#imports`).
 *
 * @example
 * ```ts ignore
 * const { bytes, truncated } = await readStdinCapped(64 * 1024);
 * ```
 */
export async function readStdinCapped(
  cap: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const buffer = new Uint8Array(cap + 1);
  let total = 0;
  while (total <= cap) {
    const n = await Deno.stdin.read(buffer.subarray(total));
    if (n === null) break;
    total += n;
  }
  return { bytes: buffer.slice(0, Math.min(total, cap)), truncated: total > cap };
}
