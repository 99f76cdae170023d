import assert from "node:assert/strict";
import fc from "fast-check";
import { pythonFloatRepr, ratioToDouble, roundHalfEven } from "./pyfloat.ts";

Deno.test("roundHalfEven: exact binary value, ties to even, sign of zero kept", () => {
  const cases: [number, string][] = [
    [0.125, "0.12"],
    [0.375, "0.38"],
    [2.675, "2.67"],
    [1.005, "1.0"],
    [-0.001, "-0.0"],
    [-0.005, "-0.01"],
    [-0.015, "-0.01"],
    [0.005, "0.01"],
    [0.015, "0.01"],
    [0.025, "0.03"],
    [1e16, "1e+16"],
    [123456.785, "123456.79"],
    [-2.5e-7, "-0.0"],
  ];
  for (const [x, want] of cases) assert.equal(pythonFloatRepr(roundHalfEven(x, 2)), want, `${x}`);
  // toFixed alone is wrong: it rounds 0.125 up.
  assert.equal((0.125).toFixed(2), "0.13");
});

Deno.test("pythonFloatRepr: CPython repr forms", () => {
  const cases: [number, string][] = [
    [27.14, "27.14"],
    [0, "0.0"],
    [-0, "-0.0"],
    [100, "100.0"],
    [12.5, "12.5"],
    [1e16, "1e+16"],
    [1e15, "1000000000000000.0"],
    [1e-5, "1e-05"],
    [1e-4, "0.0001"],
    [0.1, "0.1"],
    [1.2345678901234568e17, "1.2345678901234568e+17"],
    [1.5e-7, "1.5e-07"],
    [-1e22, "-1e+22"],
    [5e-324, "5e-324"],
    [1.7976931348623157e308, "1.7976931348623157e+308"],
  ];
  for (const [x, want] of cases) assert.equal(pythonFloatRepr(x), want);
});

Deno.test("ratioToDouble: equals IEEE division where that is exact, and for big numerators", () => {
  fc.assert(
    fc.property(
      fc.bigInt({ min: -(2n ** 53n) + 1n, max: 2n ** 53n - 1n }),
      fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }),
      (n, d) => Object.is(ratioToDouble(n, d), Number(n) / Number(d)) || n === 0n,
    ),
  );
  // Big numerators: scaling by a power of two on both sides must not change the quotient.
  fc.assert(
    fc.property(
      fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }),
      fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }),
      fc.integer({ min: 1, max: 40 }),
      (n, d, k) => ratioToDouble(n << BigInt(k), d << BigInt(k)) === Number(n) / Number(d),
    ),
  );
  // A halfway case beyond 2^53: (2^53 + 1) / 1 ties to even (2^53).
  assert.equal(ratioToDouble(2n ** 53n + 1n, 1n), 2 ** 53);
  assert.equal(ratioToDouble(2n ** 53n + 3n, 1n), 2 ** 53 + 4);
  assert.equal(ratioToDouble(-(10n ** 17n), 1n), -1e17);
});
