import { describe, expect, it } from "vitest";
import { costRows, costSvg, costTable, met } from "../../bench/goals.ts";
import type { Row } from "../../bench/intake.ts";

/**
 * Issue 20, part 4: the benchmark's headline is cost ratios against baselines of the same
 * run, each beside its goal. The rows are computed from the measured rows here, with
 * figures made up for the arithmetic; `npm run bench` measures the real ones.
 */
const row = (id: string, extra: Record<string, number>, value = 0, ratio = 0): Row => ({
  id,
  benchmark: id,
  measured: `${value}`,
  baseline: "",
  value,
  baselineValue: 0,
  ratio,
  unit: "",
  extra,
});

const rows: Row[] = [
  row("intake", { apiCpuMs: 0.6, kafkaCpuMs: 0.2 }),
  row("pipeline", { apiCpuMs: 0.8, paymentsCpuMs: 0.3, kafkaCpuMs: 0.4 }),
  row("latency-200", { p99: 60 }, 60),
  row("broker", { servicesCpuMs: 1.2, rabbitCpuMs: 0.9, rabbitPerfTestCpuMs: 0.3 }),
  row("replay", {}, 0, 1.2),
  row("memory-orders-api", {}, 130),
  row("memory-analytics", {}, 200),
];

describe("Benchmark cost ratios and their goals", () => {
  const costs = costRows({ rows, bareCpuMs: 0.5, twoHopP99: 25 });
  const byRow = (name: string) => costs.find((c) => c.row === name);

  it("When the rows are measured, then each ratio divides the work's CPU by its baseline's", () => {
    expect(byRow("intake")?.value).toBeCloseTo(0.6 / 0.5);
    // All processes per order ÷ intake's API + Kafka per request.
    expect(byRow("pipeline")?.value).toBeCloseTo(1.5 / 0.8);
    expect(byRow("latency at 200 orders/s")?.value).toBeCloseTo(60 / 25);
    expect(byRow("broker: services")?.value).toBeCloseTo(1.2 / 0.5);
    expect(byRow("broker: RabbitMQ")?.value).toBeCloseTo(3);
    expect(byRow("replay")?.value).toBeCloseTo(1.2);
  });

  it("When a ratio is on the wrong side of its goal, then it is not met; which side depends on the row", () => {
    expect(met(byRow("intake") as never)).toBe(true); // 1.2 ≤ 1.5
    expect(met(byRow("pipeline") as never)).toBe(false); // 1.875 > 1.5
    expect(met(byRow("broker: RabbitMQ") as never)).toBe(false);
    expect(met(byRow("replay") as never)).toBe(true); // higher is better: 1.2 ≥ 1
    expect(met(byRow("memory: orders API under load") as never)).toBe(false); // 130 MB > 120
    expect(met(byRow("memory: analytics, 1,000,000-record replay") as never)).toBe(true);
  });

  it("When a baseline was not measured, then its row is left out rather than guessed", () => {
    const partial = costRows({ rows: [rows[0] as Row], bareCpuMs: 0.5 });
    expect(partial.map((c) => c.row)).toEqual(["intake"]);
  });

  it("When printed and charted, then every row shows its goal, which side is better, and whether it is met", () => {
    const table = costTable(costs);
    expect(table).toMatch(/\| intake \|.*\| 1\.20 \| ≤ 1\.5 \(lower is better\) \| ✓ \|/);
    expect(table).toMatch(/\| replay \|.*\| ≥ 1 \(higher is better\) \| ✓ \|/);
    expect(table).toMatch(/\| memory: orders API under load \|.*\| 130 MB \| ≤ 120 MB .*\| ✗ \|/);
    const svg = costSvg(costs, "test");
    expect(svg.match(/<rect /g)).toHaveLength(costs.length);
    expect(svg).toContain("stroke-dasharray"); // the goal marker
    expect(svg).toContain('fill="#d93025"'); // a row that misses its goal is red
  });
});
