import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  formatCents,
  fromCents,
  hasAtMostTwoDecimals,
  multiplyCents,
  toCents,
} from "../../src/money.ts";

describe("Money: integer cents inside, JSON numbers with at most two decimals on the wire", () => {
  it("When an amount has at most two decimals, then it converts to exact cents", () => {
    expect(toCents(18.9)).toBe(1890);
    expect(toCents(0.01)).toBe(1);
    expect(toCents(100)).toBe(10000);
    expect(toCents(1.15)).toBe(115); // 1.15 * 100 is 114.99999999999999 in floating point
  });

  it("When any number is checked, then the arithmetic fast path answers as the number's spelling does (at most two decimals)", () => {
    const spelled = (v: number) =>
      Number.isFinite(v) && /^\d+(\.\d{1,2})?$/.test(String(Math.abs(v)));
    const amounts = fc.oneof(
      fc.double({ noNaN: false }),
      fc.integer({ min: -1e12, max: 1e12 }).map((k) => k / 100),
      fc.integer({ min: -1e12, max: 1e12 }).map((k) => k / 1000),
      fc.integer({ min: 0, max: 2 ** 53 }).map((k) => k / 100),
      fc.constantFrom(0.1 + 0.2, 1.005, 1e-7, 1e15, 1e15 + 0.5, 1e21, -0, 18.9, 1.15),
    );
    fc.assert(
      fc.property(amounts, (v) => hasAtMostTwoDecimals(v) === spelled(v)),
      { numRuns: 20_000 },
    );
  });

  it("When an amount has more than two decimals, then it is refused", () => {
    expect(hasAtMostTwoDecimals(0.1 + 0.2)).toBe(false);
    expect(hasAtMostTwoDecimals(1.005)).toBe(false);
    expect(hasAtMostTwoDecimals(1e-7)).toBe(false);
    expect(hasAtMostTwoDecimals(Number.NaN)).toBe(false);
    expect(() => toCents(1.234)).toThrow(RangeError);
  });

  it("When quantity × unit price is computed in cents, then no floating-point error appears", () => {
    // 3 × 0.1 in floating point is 0.30000000000000004
    expect(fromCents(multiplyCents(toCents(0.1), 3))).toBe(0.3);
    expect(fromCents(multiplyCents(toCents(18.9), 2))).toBe(37.8);
    expect(hasAtMostTwoDecimals(fromCents(multiplyCents(toCents(19.99), 49)))).toBe(true);
  });

  it("When cents are formatted for people, then two decimals always show", () => {
    expect(formatCents(3780)).toBe("37.80");
    expect(formatCents(5)).toBe("0.05");
    expect(formatCents(10000)).toBe("100.00");
  });
});
