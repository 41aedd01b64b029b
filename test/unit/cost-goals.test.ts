import { describe, expect, it } from "vitest";
import { costRows, costSvg, costTable, judgedRuns, met } from "../../bench/goals.ts";
import type { Row } from "../../bench/intake.ts";

/**
 * Issue 20, part 4: the benchmark's headline is cost ratios against baselines of the same
 * run, each beside its goal. The rows are computed from the measured rows here, with
 * figures made up for the arithmetic; `npm run bench` measures the real ones.
 */
const row = (
  id: string,
  extra: Record<string, number>,
  value = 0,
  ratio = 0,
  trials?: Record<string, number>[],
): Row => ({
  id,
  benchmark: id,
  measured: `${value}`,
  baseline: "",
  value,
  baselineValue: 0,
  ratio,
  unit: "",
  extra,
  ...(trials ? { trials } : {}),
});

/** Three intake runs, each with its own baselines (issue 36). */
const memory = (api: number, twin: number) => ({
  apiPeakRssMb: api,
  apiPeakPrivateMb: api - 50,
  bareIntakePeakRssMb: twin,
  bareIntakePeakPrivateMb: twin - 50,
});
const intakeRuns = [
  {
    apiCpuMs: 0.6,
    kafkaCpuMs: 0.2,
    bareExpressCpuMs: 0.5,
    bareIntakeCpuMs: 0.5,
    ...memory(120, 100),
  },
  {
    apiCpuMs: 0.66,
    kafkaCpuMs: 0.2,
    bareExpressCpuMs: 0.5,
    bareIntakeCpuMs: 0.6,
    ...memory(130, 100),
  },
  {
    apiCpuMs: 0.7,
    kafkaCpuMs: 0.2,
    bareExpressCpuMs: 0.5,
    bareIntakeCpuMs: 0.5,
    ...memory(126, 90),
  },
];

const rows: Row[] = [
  row("intake", { apiCpuMs: 0.66, kafkaCpuMs: 0.2 }, 0, 0, intakeRuns),
  row("pipeline", { apiCpuMs: 0.8, paymentsCpuMs: 0.3, kafkaCpuMs: 0.4 }, 0, 0, [
    {
      apiCpuMs: 0.8,
      paymentsCpuMs: 0.3,
      kafkaCpuMs: 0.4,
      bareApiCpuMs: 0.4,
      barePaymentsCpuMs: 0.3,
      bareKafkaCpuMs: 0.4,
      paymentsPeakRssMb: 110,
      paymentsPeakPrivateMb: 60,
      barePaymentsPeakRssMb: 100,
      barePaymentsPeakPrivateMb: 50,
    },
  ]),
  row("latency-200", { p99: 60, bareP99: 40 }, 60),
  row(
    "broker",
    {
      servicesCpuMs: 1.2,
      rabbitCpuMs: 0.9,
      rabbitPerfTestCpuMs: 0.3,
      bareServicesCpuMs: 1.0,
      bareRabbitCpuMs: 0.75,
    },
    0,
    0,
    [
      {
        servicesCpuMs: 1.2,
        rabbitCpuMs: 0.9,
        bareServicesCpuMs: 1.0,
        bareRabbitCpuMs: 0.75,
        servicesPeakRssMb: 300,
        servicesPeakPrivateMb: 200,
        bareServicesPeakRssMb: 200,
        bareServicesPeakPrivateMb: 100,
      },
    ],
  ),
  row("replay", {}, 0, 1.2, [
    { rate: 100, javaRate: 80, bareRate: 105 },
    { rate: 110, javaRate: 90, bareRate: 120 },
    { rate: 90, javaRate: 75, bareRate: 100 },
  ]),
  row("replay-bare", {}, 100),
  row("memory-orders-api", {}, 130),
  row("memory-analytics", {}, 200),
  {
    ...row("cluster-intake", {}, 4000, 0.45, [{ apiCpuMs: 0.9, bareIntakeCpuMs: 0.6 }]),
    measured: "4000 req/s",
    baseline: "8000 req/s",
  },
  row("cluster-pipeline", {}, 900, 0.75, [
    {
      apiCpuMs: 0.5,
      paymentsCpuMs: 0.3,
      kafkaCpuMs: 1.2,
      bareApiCpuMs: 0.3,
      barePaymentsCpuMs: 0.2,
      bareKafkaCpuMs: 1.1,
    },
  ]),
  row("scale-out", { cpuMs: 1.5, baselineCpuMs: 0.3 }, 1100, 0.3, [
    { cpuMs: 1.5, baselineCpuMs: 0.3, twinCpuMs: 0.5 },
    { cpuMs: 1.3, baselineCpuMs: 0.3, twinCpuMs: 0.65 },
    { cpuMs: 1.6, baselineCpuMs: 0.4, twinCpuMs: 0.4 },
  ]),
];

describe("Benchmark cost ratios and their goals", () => {
  const costs = costRows({ rows, bareCpuMs: 0.5, twoHopP99: 25 });
  const byRow = (name: string) => costs.find((c) => c.row === name);

  it("When the rows are measured, then each ratio divides the work's CPU by its baseline's", () => {
    // Each run divided by its own baseline, then the median of the three.
    expect(byRow("intake")?.runs).toEqual([0.6 / 0.5, 0.66 / 0.6, 0.7 / 0.5]);
    expect(byRow("intake")?.value).toBeCloseTo(0.6 / 0.5);
    expect(byRow("intake vs bare Express")?.value).toBeCloseTo(0.66 / 0.5);
    // All processes per order ÷ the bare pipeline's, same run; and ÷ intake's per request.
    expect(byRow("pipeline")?.value).toBeCloseTo(1.5 / 1.1);
    expect(byRow("pipeline ÷ intake")?.value).toBeCloseTo(1.5 / 0.86);
    expect(byRow("latency at 200 orders/s")?.value).toBeCloseTo(60 / 40);
    expect(byRow("latency ÷ Kafka's two hops")?.value).toBeCloseTo(60 / 25);
    expect(byRow("broker: services")?.value).toBeCloseTo(1.2 / 1.0);
    expect(byRow("broker: services ÷ bare Express")?.value).toBeCloseTo(1.2 / 0.5);
    expect(byRow("broker: RabbitMQ")?.value).toBeCloseTo(0.9 / 0.75);
    expect(byRow("broker: RabbitMQ ÷ PerfTest")?.value).toBeCloseTo(3);
    expect(byRow("replay")?.value).toBeCloseTo(110 / 120); // the median of 0.95, 0.92, 0.9
    expect(byRow("replay: outside anchor")?.value).toBeCloseTo(110 / 90);
    // Issue 37: all CPU per order of two instances on PostgreSQL ÷ one on SQLite's; issue 49
    // gave it a goal of 2, and three runs, each divided by its own one on SQLite.
    const scaleOut = byRow("scale-out: 2 instances on PostgreSQL ÷ 1 on SQLite");
    expect(scaleOut?.runs).toEqual([1.5 / 0.3, 1.3 / 0.3, 1.6 / 0.4]);
    expect(scaleOut?.value).toBeCloseTo(1.3 / 0.3); // the median of 5, 4.33 and 4
    expect(scaleOut?.goal).toBe(2);
    expect(met(scaleOut as never)).toBe(false); // 4.33 > 2, the runs within 25 % of each other
    // Issue 57: and against its lean twin on PostgreSQL, run by run: an anchor, no goal.
    const againstTwin = byRow("scale-out ÷ its lean twin on PostgreSQL");
    expect(againstTwin?.runs).toEqual([1.5 / 0.5, 1.3 / 0.65, 1.6 / 0.4]);
    expect(againstTwin?.value).toBeCloseTo(3); // the median of 3, 2 and 4
    expect(againstTwin?.goal).toBeNull();
  });

  it("When the broker and the latency rows have runs, then each run is divided by its own bare run and the median kept", () => {
    const withRuns = costRows({
      rows: [
        row(
          "broker",
          { servicesCpuMs: 0.6, rabbitCpuMs: 0.3, bareServicesCpuMs: 0.5, bareRabbitCpuMs: 0.3 },
          0,
          0,
          [
            { servicesCpuMs: 0.6, rabbitCpuMs: 0.3, bareServicesCpuMs: 0.5, bareRabbitCpuMs: 0.3 },
            {
              servicesCpuMs: 0.55,
              rabbitCpuMs: 0.33,
              bareServicesCpuMs: 0.5,
              bareRabbitCpuMs: 0.3,
            },
            { servicesCpuMs: 0.7, rabbitCpuMs: 0.3, bareServicesCpuMs: 0.5, bareRabbitCpuMs: 0.3 },
          ],
        ),
        row("latency-200", { p99: 12, bareP99: 10 }, 12, 0, [
          { p99: 12, bareP99: 10 },
          { p99: 14, bareP99: 10 },
          { p99: 11, bareP99: 10 },
        ]),
      ],
      bareCpuMs: 0.5,
    });
    const of = (name: string) => withRuns.find((c) => c.row === name);
    expect(of("broker: services")?.runs).toEqual([0.6 / 0.5, 0.55 / 0.5, 0.7 / 0.5]);
    expect(of("broker: services")?.value).toBeCloseTo(0.6 / 0.5);
    expect(of("broker: RabbitMQ")?.value).toBeCloseTo(1);
    expect(of("latency at 200 orders/s")?.value).toBeCloseTo(1.2);
  });

  it("When a row's runs disagree by more than 25%, then it claims nothing, met or not, and says why", () => {
    const noisy = costRows({
      rows: [
        row("intake", { apiCpuMs: 0.6 }, 0, 0, [
          { apiCpuMs: 0.5, bareExpressCpuMs: 0.5, bareIntakeCpuMs: 0.5 },
          { apiCpuMs: 0.6, bareExpressCpuMs: 0.5, bareIntakeCpuMs: 0.5 },
          { apiCpuMs: 0.9, bareExpressCpuMs: 0.5, bareIntakeCpuMs: 0.5 },
        ]),
      ],
      bareCpuMs: 0.5,
    });
    const intake = noisy.find((c) => c.row === "intake");
    expect(met(intake as never)).toBeNull();
    expect(costTable(noisy)).toMatch(
      /\| intake \|.*\| \? \|.*disagree by more than 25%: no result/,
    );
  });

  it("Issue 49: when a row ran five times, then its spread is judged on the middle three; one run far off at either end does not void it", () => {
    const five = (apiCpuMs: number) => ({ apiCpuMs, bareExpressCpuMs: 0.5, bareIntakeCpuMs: 0.5 });
    const ofRuns = (cpus: number[]) =>
      costRows({
        rows: [row("intake", { apiCpuMs: 0.6 }, 0, 0, cpus.map(five))],
        bareCpuMs: 0.5,
      }).find((c) => c.row === "intake");
    const oneFarOff = ofRuns([0.3, 0.6, 0.62, 0.64, 1.2]); // ratios 0.6, 1.2, 1.24, 1.28, 2.4
    expect(judgedRuns(oneFarOff?.runs ?? [])).toEqual([1.2, 1.24, 1.28]);
    expect(oneFarOff?.value).toBeCloseTo(1.24);
    expect(met(oneFarOff as never)).toBe(true); // 1.24 ≤ 1.3, the middle three within 25%
    expect(oneFarOff?.detail).toContain("judged without the highest and the lowest");
    // The middle three themselves disagreeing still claim nothing.
    expect(met(ofRuns([0.3, 0.4, 0.6, 0.8, 0.9]) as never)).toBeNull();
    // Three runs are judged whole, as before.
    expect(judgedRuns([0.6, 1.2, 2.4])).toEqual([0.6, 1.2, 2.4]);
  });

  it("Issue 49: when the orders API and its bare twin ran under the same load, then the memory row divides their peak RSS, private memory beside", () => {
    const twin = byRow("memory: orders API ÷ its twin");
    expect(twin?.runs).toEqual([1.2, 1.3, 1.4]);
    expect(twin?.value).toBeCloseTo(1.3);
    expect(twin?.goal).toBe(1.2);
    expect(met(twin as never)).toBe(false); // 1.3 > 1.2
    expect(twin?.detail).toMatch(/^126 MB \(private 76 MB\) ÷ 100 MB \(private 50 MB\)/);
  });

  it("Issue 49: when the intake and the pipeline ran beside their twins on the 3-node cluster, then each has a CPU row against them", () => {
    const intake = byRow("cluster: intake CPU");
    expect(intake?.value).toBeCloseTo(1.5);
    // Issue 57: against a lean twin the goal is 2 (the promises have prices of their own).
    expect(intake?.goal).toBe(2);
    expect(met(intake as never)).toBe(true);
    const pipeline = byRow("cluster: pipeline CPU");
    expect(pipeline?.value).toBeCloseTo(2 / 1.6);
    expect(met(pipeline as never)).toBe(true); // 1.25 ≤ 2
    expect(pipeline?.detail).toBe("2.00 ms ÷ 1.60 ms");
    // The throughput rows stay anchors.
    expect(byRow("cluster: intake")?.goal).toBeNull();
  });

  it("Issue 49: when payments and the broker services ran beside their twins, then each has its memory row against them", () => {
    const payments = byRow("memory: payments ÷ its twin");
    expect(payments?.value).toBeCloseTo(1.1);
    expect(met(payments as never)).toBe(true); // 1.1 ≤ 1.2
    expect(payments?.detail).toBe("110 MB (private 60 MB) ÷ 100 MB (private 50 MB)");
    const broker = byRow("memory: broker services ÷ their twins");
    expect(broker?.value).toBeCloseTo(1.5);
    expect(met(broker as never)).toBe(false); // 1.5 > 1.2
    expect(broker?.detail).toBe("300 MB (private 200 MB) ÷ 200 MB (private 100 MB)");
  });

  it("When a ratio is on the wrong side of its goal, then it is not met; which side depends on the row", () => {
    expect(met(byRow("intake") as never)).toBe(true); // 1.2 ≤ 2
    // Issue 49: bare Express is the HTTP ceiling, an anchor: no goal, no verdict.
    expect(met(byRow("intake vs bare Express") as never)).toBeNull();
    expect(met(byRow("pipeline") as never)).toBe(true); // 1.36 ≤ 2, the lean twin's goal (issue 57)
    expect(met(byRow("broker: RabbitMQ") as never)).toBe(false);
    expect(met(byRow("replay") as never)).toBe(true); // higher is better: 0.92 ≥ 0.9
    // Issue 49: a service's absolute RSS is an anchor; its goal is against its twin.
    expect(met(byRow("memory: orders API under load") as never)).toBeNull();
    expect(met(byRow("memory: analytics at the peak of a replay") as never)).toBe(true);
    // Three Kafka nodes against one: Kafka's replication on shared cores, anchors.
    expect(met(byRow("cluster: intake") as never)).toBeNull();
    expect(met(byRow("cluster: pipeline") as never)).toBeNull();
  });

  it("When a baseline was not measured, then its row is left out rather than guessed", () => {
    const partial = costRows({ rows: [rows[0] as Row], bareCpuMs: 0.5 });
    expect(partial.map((c) => c.row)).toEqual([
      "intake",
      "intake vs bare Express",
      "memory: orders API ÷ its twin",
    ]);
  });

  it("When printed and charted, then every row shows its goal, which side is better, and whether it is met", () => {
    const table = costTable(costs);
    expect(table).toMatch(/\| intake \|.*\| 1\.20 \| ≤ 2 \(lower is better\) \| ✓ \|/);
    expect(table).toMatch(/\| replay \|.*\| ≥ 0\.9 \(higher is better\) \| ✓ \|/);
    expect(table).toMatch(
      /\| memory: orders API under load \|.*\| 130 MB \| lower is better \| · \|/,
    );
    expect(table).toMatch(/\| memory: orders API ÷ its twin \|.*\| 1\.30 \| ≤ 1\.2 .*\| ✗ \|/);
    const svg = costSvg(costs, "test");
    expect(svg.match(/<rect /g)).toHaveLength(costs.length);
    expect(svg).toContain("stroke-dasharray"); // the goal marker
    expect(svg).toContain('fill="#d93025"'); // a row that misses its goal is red
  });
});
