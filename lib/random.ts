/**
 * Random names and secrets from the platform's cryptographic generator (`crypto.getRandomValues`,
 * no import needed): temp-file suffixes, lock nonces, the serve token.
 *
 * @module
 */

/**
 * `bytes` random bytes as lowercase hex (two digits per byte).
 *
 * @example
 * ```ts
 * import { randomHex } from "./random.ts";
 * randomHex(8).length; // 16
 * ```
 */
export function randomHex(bytes: number): string {
  const b = crypto.getRandomValues(new Uint8Array(bytes));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}
