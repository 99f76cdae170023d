/**
 * SHA-256 in plain TypeScript, incremental: hashing a file of any size takes fixed memory, and no
 * module has to be loaded for it (`node:crypto` costs more start-up time than most commands take).
 * Verified against the FIPS 180-4 test vectors in `sha256_test.ts`.
 *
 * @module
 */

const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);

/**
 * An incremental SHA-256.
 *
 * @example
 * ```ts
 * import { Sha256 } from "./sha256.ts";
 * new Sha256().update(new TextEncoder().encode("abc")).hex();
 * // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * ```
 */
export class Sha256 {
  readonly #h = new Int32Array([
    0x6a09e667,
    0xbb67ae85,
    0x3c6ef372,
    0xa54ff53a,
    0x510e527f,
    0x9b05688c,
    0x1f83d9ab,
    0x5be0cd19,
  ]);
  readonly #w = new Int32Array(64);
  readonly #buf = new Uint8Array(64);
  #buffered = 0;
  #total = 0;

  /** Add `data` to the hashed stream. */
  update(data: Uint8Array): this {
    let i = 0;
    const n = data.length;
    this.#total += n;
    if (this.#buffered > 0) {
      const take = Math.min(64 - this.#buffered, n);
      this.#buf.set(data.subarray(0, take), this.#buffered);
      this.#buffered += take;
      i = take;
      if (this.#buffered < 64) return this;
      this.#block(this.#buf, 0);
      this.#buffered = 0;
    }
    for (; i + 64 <= n; i += 64) this.#block(data, i);
    if (i < n) {
      this.#buf.set(data.subarray(i), 0);
      this.#buffered = n - i;
    }
    return this;
  }

  #block(d: Uint8Array, o: number): void {
    const w = this.#w;
    const h = this.#h;
    for (let t = 0; t < 16; t++) {
      const j = o + t * 4;
      w[t] = (d[j] << 24) | (d[j + 1] << 16) | (d[j + 2] << 8) | d[j + 3];
    }
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15];
      const b = w[t - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[t] = (w[t - 16] + s0 + w[t - 7] + s1) | 0;
    }
    let a = h[0], b = h[1], c = h[2], d0 = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (let t = 0; t < 64; t++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (hh + s1 + ((e & f) ^ (~e & g)) + K[t] + w[t]) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      hh = g;
      g = f;
      f = e;
      e = (d0 + t1) | 0;
      d0 = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0;
    h[1] = (h[1] + b) | 0;
    h[2] = (h[2] + c) | 0;
    h[3] = (h[3] + d0) | 0;
    h[4] = (h[4] + e) | 0;
    h[5] = (h[5] + f) | 0;
    h[6] = (h[6] + g) | 0;
    h[7] = (h[7] + hh) | 0;
  }

  /** Finish and return the digest as 64 lowercase hex digits (the hasher is spent afterwards). */
  hex(): string {
    const total = this.#total;
    const padLength = (this.#buffered < 56 ? 56 : 120) - this.#buffered + 8;
    const pad = new Uint8Array(padLength);
    pad[0] = 0x80;
    const view = new DataView(pad.buffer);
    const bits = total * 8;
    view.setUint32(padLength - 8, Math.floor(bits / 0x1_0000_0000));
    view.setUint32(padLength - 4, bits >>> 0);
    this.update(pad);
    let out = "";
    for (const v of this.#h) out += (v >>> 0).toString(16).padStart(8, "0");
    return out;
  }
}

/** Lowercase hex SHA-256 of `bytes`. */
export function sha256Hex(bytes: Uint8Array): string {
  return new Sha256().update(bytes).hex();
}
