/**
 * Bounded, strict reading of HTTP bodies, shared by the prose backend (requests) and its client
 * (responses): neither side ever buffers more than its cap or accepts anything but UTF-8 JSON.
 *
 * @module
 */

import { MAX_BODY_BYTES } from "./server_protocol.ts";

/**
 * Read a request body, stopping (and cancelling the stream) as soon as it exceeds the cap.
 * Returns the bytes, or `"too-large"`.
 */
export async function readBodyCapped(
  body: ReadableStream<Uint8Array> | null,
  cap: number = MAX_BODY_BYTES,
): Promise<Uint8Array | "too-large"> {
  if (body === null) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > cap) {
      await reader.cancel().catch(() => {});
      return "too-large";
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Decode strict UTF-8 JSON; `undefined` when the bytes are not UTF-8 or not JSON. */
export function decodeJson(bytes: Uint8Array): { value: unknown } | undefined {
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}
