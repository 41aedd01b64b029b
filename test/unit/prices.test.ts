import { describe, expect, it } from "vitest";
import { costRows, costTable, met, pairedRows } from "../../bench/goals.ts";
import type { PriceListResult } from "../../bench/price-list.ts";
import {
  BUDGETS,
  type Pair,
  PROMISES,
  pairedRow,
  priceList,
  priceTable,
  promisesOfStep,
} from "../../bench/prices.ts";

/**
 * Issue 57: the price of each promise and the headline rows against the feature-matched
 * twin, from alternating pairs. The figures are made up for the arithmetic;
 * `npm run bench -- --only=prices` measures the real ones.
 */
const lean = 0.4;
/** A step's pairs: `before` around the step before's CPU, `after` that plus `price` of the lean twin's. */
const stepPairs = (before: number, price: number, noise: number[]): Pair[] =>
  noise.map((n) => ({ before: before + n, after: before + price * lean + n }));

describe("Issue 57: the price list", () => {
  it("When each promise is added to the step before, then its price is the median of its pairs' differences, as a share of the lean twin's CPU, beside its budget", () => {
    const prices = [0.2, 0.1, 0.06, 0.02, 0.08, 0.01, 0.02];
    let before = lean;
    const steps = prices.map((price) => {
      const pairs = stepPairs(before, price, [0, 0.004, -0.004, 0.002, -0.002]);
      before += price * lean;
      return pairs;
    });
    const list = priceList(steps);
    expect(list.leanMs).toBeCloseTo(lean);
    expect(list.prices.map((p) => p.promise)).toEqual([...PROMISES]);
    list.prices.forEach((p, i) => {
      expect(p.share).toBeCloseTo(prices[i] as number);
      expect(p.budget).toBe(BUDGETS[p.promise]);
      expect(p.shares).toHaveLength(5);
    });
    // The timeline at 6 % is over its 5 %; every other promise within its budget.
    expect(list.prices.filter((p) => !p.withinBudget).map((p) => p.promise)).toEqual(["timeline"]);
    const table = priceTable(list);
    expect(table).toContain("The lean twin: 0.400 ms of CPU per request");
    expect(table).toMatch(/\| the timeline \|.*\| 6\.0 % .*\| ≤ 5\.0 % \| over \|/);
    expect(table).toMatch(
      /\| the outbox \(the event never lost\) \|.*\| 20\.0 % .*\| ≤ 25\.0 % \| ✓ \|/,
    );
  });

  it("When a pair reads a price far off, then the median of the pairs is the price, not their mean", () => {
    const [outbox] = priceList([
      [
        { before: 0.4, after: 0.48 },
        { before: 0.4, after: 0.48 },
        { before: 0.4, after: 0.8 },
      ],
    ]).prices;
    expect(outbox?.share).toBeCloseTo(0.2);
  });

  it("When steps are numbered, then step k keeps the first k promises: 0 the lean twin, 7 the feature-matched twin", () => {
    expect(promisesOfStep(0)).toEqual([]);
    expect(promisesOfStep(2)).toEqual(["outbox", "idempotency"]);
    expect(promisesOfStep(PROMISES.length)).toEqual([...PROMISES]);
  });
});

describe("Issue 57: a headline row from alternating pairs", () => {
  const pairs = (ratios: number[]): Pair[] => ratios.map((r) => ({ before: 1, after: r }));

  it("When 4 of 5 pairs are within the goal + 0.1 and their median within the goal, then the row holds", () => {
    const r = pairedRow(pairs([1.1, 1.15, 1.5, 1.2, 1.18]), 1.2);
    expect(r.value).toBeCloseTo(1.18);
    expect(r.within).toBe(4);
    expect(r.met).toBe(true);
  });

  it("When only 3 of 5 pairs are within the goal + 0.1, then the row does not hold, whatever its median", () => {
    const r = pairedRow(pairs([1.1, 1.15, 1.5, 1.2, 1.45]), 1.2);
    expect(r.value).toBeCloseTo(1.2);
    expect(r.within).toBe(3);
    expect(r.met).toBe(false);
  });

  it("When the median is over the goal, then the row does not hold even with every pair within the goal + 0.1", () => {
    expect(pairedRow(pairs([1.25, 1.25, 1.25, 1.25, 1.25]), 1.2).met).toBe(false);
  });

  it("When --quick measures 3 pairs, then all 3 must be within the goal + 0.1", () => {
    expect(pairedRow(pairs([1.1, 1.15, 1.25]), 1.2).met).toBe(true);
    expect(pairedRow(pairs([1.1, 1.15, 1.35]), 1.2).met).toBe(false);
  });

  it("When the price list ran, then the cost table has the intake against the feature-matched twin (goal 1.2) and against the lean twin (goal 2), judged by their pairs", () => {
    const prices: PriceListResult = {
      ceilingRps: 1000,
      rate: 700,
      leanMs: 0.4,
      table: "",
      prices: [],
      headline: pairedRow(pairs([1.1, 1.15, 1.5, 1.2, 1.18]), 1.2),
      againstLean: pairedRow(pairs([1.9, 2.05, 2.2, 1.95, 2.0]), 2),
    };
    const [headline, againstLean] = pairedRows(prices);
    expect(headline?.row).toBe("intake ÷ the feature-matched twin");
    expect(headline?.goal).toBe(1.2);
    expect(headline?.pairs).toEqual({ within: 4, of: 5 });
    expect(met(headline as never)).toBe(true);
    expect(headline?.ratioOf).toContain("at 700 req/s open loop");
    expect(againstLean?.goal).toBe(2);
    expect(met(againstLean as never)).toBe(true); // 2.0 ≤ 2, and 5 of 5 within 2.1
    const table = costTable(costRows({ rows: [], bareCpuMs: 0.1, prices }));
    expect(table).toMatch(/\| intake ÷ the feature-matched twin \|.*\| 1\.18 \| ≤ 1\.2 .*\| ✓ \|/);
    expect(table).toContain("4 of 5 within 1.30");
  });
});
