/**
 * Python's float arithmetic, exactly, for the state document's `achieved_ratio_pct`
 * (`references/context-guard.md#ratchet-state`): correctly rounded division of big integers,
 * `round(x, n)` half-to-even on the exact binary value, and `repr`.
 *
 * @module
 */

/** The double nearest to `n / d` (ties to even), exactly — also when `n` exceeds 2^53. */
export function ratioToDouble(n: bigint, d: bigint): number {
  if (d <= 0n) throw new RangeError("denominator must be positive");
  if (n === 0n) return 0;
  const negative = n < 0n;
  const abs = negative ? -n : n;
  const limit = 1n << 53n;
  if (abs < limit && d < limit) {
    const q = Number(abs) / Number(d); // both exact: IEEE division rounds once, correctly
    return negative ? -q : q;
  }
  // Scale so the integer quotient holds 54 bits (53 kept + a guard bit); the remainder is sticky.
  const bits = (v: bigint): number => v.toString(2).length;
  let shift = 54 - (bits(abs) - bits(d));
  const num = shift >= 0 ? abs << BigInt(shift) : abs;
  const den = shift >= 0 ? d : d << BigInt(-shift);
  let q = num / den;
  let sticky = num % den !== 0n;
  if (bits(q) > 54) {
    sticky ||= (q & 1n) === 1n;
    q >>= 1n;
    shift -= 1;
  }
  const guard = (q & 1n) === 1n;
  q >>= 1n;
  shift -= 1;
  if (guard && (sticky || (q & 1n) === 1n)) q += 1n;
  const result = Number(q) * 2 ** -shift;
  return negative ? -result : result;
}

/** Exact value of a finite double as `mantissa × 2^exponent` with an integer mantissa. */
function exactBinary(x: number): { mantissa: bigint; exponent: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bitsValue = view.getBigUint64(0);
  const sign = bitsValue >> 63n === 1n ? -1n : 1n;
  const biased = Number((bitsValue >> 52n) & 0x7ffn);
  const fraction = bitsValue & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  return { mantissa: sign * mantissa, exponent };
}

/**
 * Round a double to `places` decimals half-to-even on its exact binary value, like Python's
 * `round(x, places)`: `0.125` → `0.12`, `0.375` → `0.38`, `2.675` → `2.67`. The sign of a zero
 * result follows `x` (`-0.001` → `-0.0`).
 */
export function roundHalfEven(x: number, places: number): number {
  if (!Number.isFinite(x) || x === 0) return x;
  const { mantissa, exponent } = exactBinary(x);
  const scale = 10n ** BigInt(places);
  let rounded: bigint;
  if (exponent >= 0) {
    rounded = mantissa * scale * (1n << BigInt(exponent));
  } else {
    const num = mantissa * scale;
    const den = 1n << BigInt(-exponent);
    const negative = num < 0n;
    const abs = negative ? -num : num;
    let q = abs / den;
    const twice = (abs % den) * 2n;
    if (twice > den || (twice === den && (q & 1n) === 1n)) q += 1n;
    rounded = negative ? -q : q;
  }
  if (rounded === 0n) return x < 0 ? -0 : 0;
  return ratioToDouble(rounded, scale);
}

/**
 * A finite double written as Python's `repr` does: shortest round-trip digits, `.0` on integral
 * values, exponent form when the decimal exponent is below −4 or at least 16.
 *
 * @example
 * ```ts
 * import { pythonFloatRepr } from "./pyfloat.ts";
 * [27.14, 0, -0, 100, 1e16, 1e-5].map(pythonFloatRepr); // ["27.14", "0.0", "-0.0", "100.0", "1e+16", "1e-05"]
 * ```
 */
export function pythonFloatRepr(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  // toExponential() without an argument gives the shortest digits that round-trip.
  const [mant, exp] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "");
  const decpt = Number(exp) + 1; // value = 0.<digits> × 10^decpt
  if (decpt <= -4 || decpt > 16) {
    const e = decpt - 1;
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
  return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}
