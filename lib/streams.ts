/**
 * Reading a web stream with a size cap: the one helper every ctxkit stream reader uses (the prose
 * backend's request and response bodies, context-scan's observation recorder), so nothing ever
 * buffers more than its cap.
 *
 * @module
 */

/**
 * Read a stream up to `cap` bytes, stopping (and cancelling it) as soon as it holds more: the
 * first `cap` bytes, and whether there was more. Request and response bodies and `match`'s stdin
 * are all read this way, so nothing ever buffers more than its cap.
 */
export async function readCapped(
  stream: ReadableStream<Uint8Array> | null,
  cap: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = stream?.getReader();
  while (reader !== undefined && total <= cap) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    total += value.length;
  }
  if (total > cap) await reader?.cancel().catch(() => {});
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return { bytes: total > cap ? bytes.slice(0, cap) : bytes, truncated: total > cap };
}
