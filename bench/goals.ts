import type { Row } from "./intake.ts";
import type { PriceListResult } from "./price-list.ts";
import { LEAN_TWIN_GOAL, PAIR_MARGIN, type PairedRow, pairsHold } from "./prices.ts";
import { median, medianOf } from "./stats.ts";

/**
 * The benchmark's headline: cost ratios, each against a baseline measured in the same run,
 * with the goal beside it (issue 20). A cost ratio holds on any machine: a second core
 * doubles a rate, not the CPU one unit of work takes.
 */
export interface CostRow {
  row: string;
  /** What is divided by what, in words. */
  ratioOf: string;
  value: number;
  /** The goal, or null for a row that only compares (tracing exported against not). */
  goal: number | null;
  better: "lower" | "higher";
  unit: "×" | "MB";
  detail: string;
  /** Each run's ratio, when `value` is their median (issue 36: three runs in one bench). */
  runs?: number[];
  /**
   * A row measured in alternating pairs (issue 57): how many pairs read within goal +
   * PAIR_MARGIN, of how many. It holds with its median within the goal and 4 pairs in 5 so.
   */
  pairs?: { within: number; of: number };
}

/**
 * The runs a row's spread is judged on: all of them, or with five or more, all but the
 * highest and the lowest (issue 49: the pipeline, latency and replay rows run five times in
 * a full run and are judged on their middle three, one run of a shared machine's noise at
 * either end left out).
 */
export const judgedRuns = (runs: readonly number[]): number[] =>
  runs.length >= 5 ? [...runs].sort((a, b) => a - b).slice(1, -1) : [...runs];

/** How far a row's judged runs disagree: (highest − lowest) ÷ median; 0 for one run. */
export const disagreement = (r: CostRow): number => {
  const runs = judgedRuns(r.runs ?? []);
  return runs.length > 1
    ? (Math.max(...runs) - Math.min(...runs)) / Math.max(1e-9, median(runs))
    : 0;
};

/** Runs that disagree by more than this make no claim, met or not. */
export const DISAGREEMENT_LIMIT = 0.25;

export const met = (r: CostRow): boolean | null => {
  if (r.goal === null) return null;
  if (r.pairs) return pairsHold(r.value, r.goal, r.pairs.within, r.pairs.of);
  if (disagreement(r) > DISAGREEMENT_LIMIT) return null;
  return r.better === "lower" ? r.value <= r.goal : r.value >= r.goal;
};

/** A row's value from its runs: the median, and the spread said in its detail. */
function fromRuns(runs: number[], detail: string): Pick<CostRow, "value" | "runs" | "detail"> {
  const f = (n: number) => n.toFixed(2);
  const judged = runs.length >= 5 ? ", the spread judged without the highest and the lowest" : "";
  const spread =
    runs.length > 1
      ? `; median of ${runs.length} runs: ${runs.map(f).join(", ")}${judged}${
          disagreement({ runs } as CostRow) > DISAGREEMENT_LIMIT
            ? ` — they disagree by more than ${DISAGREEMENT_LIMIT * 100}%: no result`
            : ""
        }`
      : "";
  return { value: median(runs), runs, detail: `${detail}${spread}` };
}

const extra = (rows: Row[], id: string, key: string): number | undefined =>
  rows.find((r) => r.id === id)?.extra?.[key];

/**
 * A service's memory against its bare twin's under the same load (issue 49): the ratio of
 * their peak RSS, each one's private memory beside it. `shop` and `bare` name the runs'
 * fields: `${shop}PeakRssMb`, `${shop}PeakPrivateMb` and the same for `bare`. None when
 * no run measured the twin.
 */
export function twinMemory(
  row: string,
  ratioOf: string,
  trials: readonly Record<string, number>[],
  shop: string,
  bare: string,
): CostRow[] {
  const runs = trials.filter(
    (t) => t[`${shop}PeakRssMb`] !== undefined && t[`${bare}PeakRssMb`] !== undefined,
  );
  if (runs.length === 0) return [];
  const mb = (key: string) => Math.round(medianOf(runs, key));
  const side = (who: string) =>
    `${mb(`${who}PeakRssMb`)} MB (private ${mb(`${who}PeakPrivateMb`)} MB)`;
  return [
    {
      row,
      ratioOf: `${ratioOf} (private memory beside each; both without tsx, with the same V8 settings)`,
      goal: 1.2,
      better: "lower",
      unit: "×",
      ...fromRuns(
        runs.map((t) => (t[`${shop}PeakRssMb`] as number) / (t[`${bare}PeakRssMb`] as number)),
        `${side(shop)} ÷ ${side(bare)}`,
      ),
    },
  ];
}

type Run = Record<string, number>;

/**
 * A cost row of CPU per unit of work against a bare twin's (lower is better): each run's
 * `shop` ÷ its own `bare`, the median kept. None when no run measured the twin. The goal
 * against a lean twin, one that keeps the durability promises and nothing else, is 2
 * (issue 57: the shop's other promises have their own prices, measured by the price list,
 * and the shop is held to 1.2-1.25 of a twin that keeps them all: pairedRows).
 */
function againstTwin(
  row: string,
  ratioOf: string,
  runs: readonly Run[],
  shop: (t: Run) => number,
  bare: (t: Run) => number,
  goal = LEAN_TWIN_GOAL,
): CostRow[] {
  if (runs.length === 0) return [];
  const f = (n: number) => n.toFixed(2);
  return [
    {
      row,
      ratioOf,
      goal,
      better: "lower",
      unit: "×",
      ...fromRuns(
        runs.map((t) => shop(t) / bare(t)),
        `${f(median(runs.map((t) => shop(t))))} ms ÷ ${f(median(runs.map((t) => bare(t))))} ms`,
      ),
    },
  ];
}

/** The runs of row `id` that measured both `keys`. */
const runsWith = (rows: Row[], id: string, ...keys: string[]): Run[] =>
  (rows.find((r) => r.id === id)?.trials ?? []).filter((t) =>
    keys.every((k) => t[k] !== undefined),
  );

/** The inputs the cost rows divide, from this run's rows and baselines. */
export interface CostInputs {
  rows: Row[];
  /** Bare Express's CPU ms per request. */
  bareCpuMs: number;
  /** Kafka's own two-hop p99 at 200/s (bare kafkajs), when the pipeline ran. */
  twoHopP99?: number;
  /** The price list and its paired rows, when it ran (npm run bench -- --only=prices). */
  prices?: PriceListResult;
}

/**
 * The price list's headline rows (issue 57): the orders API against the feature-matched
 * twin (FEATURE_MATCHED_GOAL) and against the lean twin (LEAN_TWIN_GOAL), each the median of
 * alternating pairs at one fixed open-loop rate, half the requests keyed.
 */
export function pairedRows(prices: PriceListResult): CostRow[] {
  const at = `at ${prices.rate} req/s open loop (70 % of the orders API's ceiling, ${Math.round(prices.ceilingRps)} req/s), half the requests keyed`;
  const row = (name: string, ratioOf: string, r: PairedRow): CostRow => ({
    row: name,
    ratioOf: `${ratioOf}, ${at}`,
    value: r.value,
    goal: r.goal,
    better: "lower",
    unit: "×",
    runs: r.ratios,
    pairs: { within: r.within, of: r.ratios.length },
    detail: `median of ${r.ratios.length} pairs: ${r.ratios.map((x) => x.toFixed(2)).join(", ")}; ${r.within} of ${r.ratios.length} within ${(r.goal + PAIR_MARGIN).toFixed(2)}`,
  });
  return [
    row(
      "intake ÷ the feature-matched twin",
      "orders API CPU per POST /pedidos ÷ the feature-matched twin's (bench/twin-orders.ts with every promise, each kept lean)",
      prices.headline,
    ),
    row(
      "intake ÷ the lean twin (paired)",
      "orders API CPU per POST /pedidos ÷ the lean twin's (no promise but durability)",
      prices.againstLean,
    ),
  ];
}

export function costRows({ rows, bareCpuMs, twoHopP99, prices }: CostInputs): CostRow[] {
  const out: CostRow[] = prices ? pairedRows(prices) : [];
  const f = (n: number) => n.toFixed(2);
  const apiCpu = extra(rows, "intake", "apiCpuMs");
  const intakeKafkaCpu = extra(rows, "intake", "kafkaCpuMs");
  const intakeRuns = rows.find((r) => r.id === "intake")?.trials ?? [];
  const perRun = (key: string) =>
    intakeRuns.every((t) => t[key] !== undefined)
      ? intakeRuns.map((t) => (t.apiCpuMs as number) / (t[key] as number))
      : [];
  const apiCpuOf = (t: Run) => t.apiCpuMs as number;
  out.push(
    ...againstTwin(
      "intake",
      "orders API CPU per POST /pedidos ÷ the lean twin's CPU per request (bench/twin-orders.ts with no promise: the same durable insert, acks=all, a turn's orders in one transaction and one send), closed loop, no key",
      runsWith(rows, "intake", "apiCpuMs", "bareIntakeCpuMs"),
      apiCpuOf,
      (t) => t.bareIntakeCpuMs as number,
    ),
  );
  if (apiCpu !== undefined)
    out.push({
      row: "intake vs bare Express",
      // Issue 49: the HTTP ceiling, an anchor without a goal (nothing stored, nothing sent).
      ratioOf:
        "orders API CPU per POST /pedidos ÷ bare Express CPU per request (no storage): the HTTP ceiling, an anchor",
      goal: null,
      better: "lower",
      unit: "×",
      ...(perRun("bareExpressCpuMs").length > 0
        ? fromRuns(
            perRun("bareExpressCpuMs"),
            `${f(apiCpu)} ms ÷ ${f(medianOf(intakeRuns, "bareExpressCpuMs"))} ms`,
          )
        : { value: apiCpu / bareCpuMs, detail: `${f(apiCpu)} ms ÷ ${f(bareCpuMs)} ms` }),
    });
  out.push(
    ...twinMemory(
      "memory: orders API ÷ its twin",
      "the orders API's peak RSS under the intake's load ÷ the bare orders program's under the same load",
      intakeRuns,
      "api",
      "bareIntake",
    ),
  );
  const [a, p, k] = ["apiCpuMs", "paymentsCpuMs", "kafkaCpuMs"].map((key) =>
    extra(rows, "pipeline", key),
  );
  const pipelineRuns = (rows.find((r) => r.id === "pipeline")?.trials ?? []).filter(
    (t) => t.bareApiCpuMs !== undefined,
  );
  const SHOP = ["apiCpuMs", "paymentsCpuMs", "kafkaCpuMs"];
  const BARE = ["bareApiCpuMs", "barePaymentsCpuMs", "bareKafkaCpuMs"];
  const all = (t: Run, keys = SHOP) => keys.reduce((sum, key) => sum + (t[key] as number), 0);
  const allBare = (t: Run) => all(t, BARE);
  out.push(
    ...againstTwin(
      "pipeline",
      "all processes' CPU per order, POST to result applied ÷ the bare pipeline's, the pipeline's lean twin (same rules: durable inserts, acks=all, commits after effects)",
      pipelineRuns,
      all,
      allBare,
    ),
  );
  out.push(
    ...twinMemory(
      "memory: payments ÷ its twin",
      "the highest payments instance's peak RSS in the pipeline's burst ÷ the highest bare payments program's in the same burst",
      pipelineRuns,
      "payments",
      "barePayments",
    ),
  );
  if (
    a !== undefined &&
    p !== undefined &&
    k !== undefined &&
    apiCpu !== undefined &&
    intakeKafkaCpu !== undefined
  )
    out.push({
      row: "pipeline ÷ intake",
      ratioOf: "all processes' CPU per order, POST to result applied ÷ intake's CPU per request",
      value: (a + p + k) / (apiCpu + intakeKafkaCpu),
      goal: null,
      better: "lower",
      unit: "×",
      detail: `(API ${f(a)} + payments ${f(p)} + Kafka ${f(k)}) ms ÷ (API ${f(apiCpu)} + Kafka ${f(intakeKafkaCpu)}) ms`,
    });
  const steadyP99 = extra(rows, "latency-200", "p99");
  const bareSteadyP99 = extra(rows, "latency-200", "bareP99");
  const steadyRuns = rows.find((r) => r.id === "latency-200")?.trials ?? [];
  if (steadyP99 !== undefined && bareSteadyP99 !== undefined)
    out.push({
      row: "latency at 200 orders/s",
      ratioOf: "pipeline p99 ÷ the bare pipeline's p99, both at a steady 200/s",
      goal: 2,
      better: "lower",
      unit: "×",
      ...fromRuns(
        steadyRuns.length > 0
          ? steadyRuns.map((t) => (t.p99 as number) / Math.max(1, t.bareP99 as number))
          : [steadyP99 / Math.max(1, bareSteadyP99)],
        `${steadyP99} ms ÷ ${bareSteadyP99} ms`,
      ),
    });
  if (steadyP99 !== undefined && twoHopP99 !== undefined)
    out.push({
      row: "latency ÷ Kafka's two hops",
      ratioOf: "pipeline p99 ÷ bare kafkajs two-hop p99, both at 200/s",
      value: steadyP99 / Math.max(1, twoHopP99),
      goal: null,
      better: "lower",
      unit: "×",
      detail: `${steadyP99} ms ÷ ${twoHopP99} ms`,
    });
  const servicesCpu = extra(rows, "broker", "servicesCpuMs");
  const bareServicesCpu = extra(rows, "broker", "bareServicesCpuMs");
  const brokerRuns = rows.find((r) => r.id === "broker")?.trials ?? [];
  /** Each broker run's `key` ÷ its bare run's, or the one figure when there are no runs. */
  const brokerRatio = (key: string, bareKey: string, value: number, bare: number) =>
    fromRuns(
      brokerRuns.length > 0
        ? brokerRuns.map((t) => (t[key] as number) / Math.max(0.001, t[bareKey] as number))
        : [value / Math.max(0.001, bare)],
      `${f(value)} ms ÷ ${f(bare)} ms`,
    );
  if (servicesCpu !== undefined && bareServicesCpu !== undefined)
    out.push({
      row: "broker: services",
      ratioOf:
        "both services' CPU per payment request, until PAGO ÷ the bare amqplib flow's, the broker edition's lean twin (its durability promises and nothing else)",
      goal: LEAN_TWIN_GOAL,
      better: "lower",
      unit: "×",
      ...brokerRatio("servicesCpuMs", "bareServicesCpuMs", servicesCpu, bareServicesCpu),
    });
  out.push(
    ...twinMemory(
      "memory: broker services ÷ their twins",
      "the broker edition's orders and payments services' peak RSS, summed, while their payment requests run ÷ bare-broker's two programs' under the same requests",
      brokerRuns,
      "services",
      "bareServices",
    ),
  );
  if (servicesCpu !== undefined)
    out.push({
      row: "broker: services ÷ bare Express",
      ratioOf: "both services' CPU per payment request ÷ bare Express CPU per request",
      value: servicesCpu / bareCpuMs,
      goal: null,
      better: "lower",
      unit: "×",
      detail: `${f(servicesCpu)} ms ÷ ${f(bareCpuMs)} ms`,
    });
  const rabbitCpu = extra(rows, "broker", "rabbitCpuMs");
  const bareRabbitCpu = extra(rows, "broker", "bareRabbitCpuMs");
  if (rabbitCpu !== undefined && bareRabbitCpu !== undefined)
    out.push({
      row: "broker: RabbitMQ",
      ratioOf: "RabbitMQ's CPU per payment request ÷ its CPU per request of the bare amqplib flow",
      goal: 1.1,
      better: "lower",
      unit: "×",
      ...brokerRatio("rabbitCpuMs", "bareRabbitCpuMs", rabbitCpu, bareRabbitCpu),
    });
  const perfTestCpu = extra(rows, "broker", "rabbitPerfTestCpuMs");
  if (rabbitCpu !== undefined && perfTestCpu !== undefined)
    out.push({
      row: "broker: RabbitMQ ÷ PerfTest",
      ratioOf: "RabbitMQ's CPU per payment request ÷ its CPU per message under PerfTest",
      value: rabbitCpu / Math.max(0.001, perfTestCpu),
      goal: null,
      better: "lower",
      unit: "×",
      detail: `${f(rabbitCpu)} ms ÷ ${f(perfTestCpu)} ms`,
    });
  const replay = rows.find((r) => r.id === "replay");
  const replayBare = rows.find((r) => r.id === "replay-bare");
  const replayRuns = replay?.trials ?? [];
  if (replay && replayBare)
    out.push({
      row: "replay",
      ratioOf: "analytics records/s ÷ a bare kafkajs consumer's records/s (JSON.parse only)",
      goal: 0.9,
      better: "higher",
      unit: "×",
      ...fromRuns(
        replayRuns.map((t) => (t.rate as number) / (t.bareRate as number)),
        `${replayBare.measured} ÷ ${replayBare.baseline}`,
      ),
    });
  if (replay)
    out.push({
      row: "replay: outside anchor",
      ratioOf: "analytics records/s ÷ Kafka's ConsumerPerformance records/s",
      goal: null,
      better: "higher",
      unit: "×",
      ...fromRuns(
        replayRuns.length > 0
          ? replayRuns.map((t) => (t.rate as number) / (t.javaRate as number))
          : [replay.ratio],
        `${replay.measured} ÷ ${replay.baseline}`,
      ),
    });
  // Issue 49: Kafka's replication on two shared cores, anchors without a goal.
  for (const [id, row, what, goal] of [
    [
      "cluster-intake",
      "cluster: intake",
      "intake req/s on 3 Kafka nodes (RF 3, min ISR 2) ÷ on one: an anchor",
      null,
    ],
    [
      "cluster-pipeline",
      "cluster: pipeline",
      "pipeline orders/s on 3 Kafka nodes ÷ on one: an anchor",
      null,
    ],
  ] as const) {
    const r = rows.find((x) => x.id === id);
    if (r)
      out.push({
        row,
        ratioOf: what,
        value: r.ratio,
        goal,
        better: "higher",
        unit: "×",
        detail: `${r.measured} ÷ ${r.baseline}`,
      });
  }
  // Issue 49: on the cluster, the shop's CPU per order against its bare twin's on the
  // same three nodes, same run: what the shop adds, with replication under both.
  out.push(
    ...againstTwin(
      "cluster: intake CPU",
      "orders API CPU per POST /pedidos ÷ the bare orders program's, both on the 3-node cluster (RF 3, min ISR 2)",
      runsWith(rows, "cluster-intake", "apiCpuMs", "bareIntakeCpuMs"),
      apiCpuOf,
      (t) => t.bareIntakeCpuMs as number,
    ),
    ...againstTwin(
      "cluster: pipeline CPU",
      "all processes' CPU per order, POST to result applied ÷ the bare pipeline's, both on the 3-node cluster",
      runsWith(rows, "cluster-pipeline", ...SHOP, ...BARE),
      all,
      allBare,
    ),
  );
  // Issue 49: a service's RSS counts pages every Node process shares (Node's binary, about
  // 49 MB); its goal is against its bare twin's (the rows "÷ its twin"), so these absolute
  // figures are anchors. The analytics replay keeps an absolute goal: 300 MB (for the full
  // run's 1,000,000 records; the detail says how many a run replayed).
  for (const [id, row, goal] of [
    ["memory-orders-api", "memory: orders API under load", null],
    ["memory-payments", "memory: payments instance under load", null],
    ["memory-broker-orders", "memory: broker orders under load", null],
    ["memory-broker-payments", "memory: broker payments under load", null],
    ["memory-analytics", "memory: analytics at the peak of a replay", 300],
  ] as const) {
    const r = rows.find((x) => x.id === id);
    if (r)
      out.push({
        row,
        ratioOf: "peak resident memory (RSS)",
        value: r.value,
        goal,
        better: "lower",
        unit: "MB",
        detail: r.measured,
      });
  }
  const tracing = rows.find((r) => r.id === "tracing");
  if (tracing)
    out.push({
      row: "tracing exported ÷ not",
      ratioOf: "all processes' CPU per order with every span exported over OTLP ÷ with none",
      value: tracing.ratio,
      goal: null,
      better: "lower",
      unit: "×",
      detail: `${tracing.value.toFixed(2)} ms ÷ ${tracing.baselineValue.toFixed(2)} ms`,
    });
  const scaleOut = rows.find((r) => r.id === "scale-out");
  const scaleOutRuns = runsWith(rows, "scale-out", "cpuMs", "baselineCpuMs");
  if (scaleOut && scaleOutRuns.length > 0)
    out.push({
      row: "scale-out: 2 instances on PostgreSQL ÷ 1 on SQLite",
      ratioOf:
        "all CPU per order (the APIs, Kafka, PostgreSQL) ÷ one orders API on SQLite's (issue 49: the orders handed over while a save is in flight share one statement and one commit)",
      goal: 2,
      better: "lower",
      unit: "×",
      ...fromRuns(
        scaleOutRuns.map((t) => (t.cpuMs as number) / (t.baselineCpuMs as number)),
        `${f(medianOf(scaleOutRuns, "cpuMs"))} ms ÷ ${f(medianOf(scaleOutRuns, "baselineCpuMs"))} ms; ${Math.round(scaleOut.value)} ÷ ${Math.round(scaleOut.baselineValue)} req/s`,
      ),
    });
  // Issue 57: the same two instances against two lean twins on PostgreSQL
  // (bench/bare-postgres-orders.ts), same run: what the shop's promises cost there. An anchor.
  const scaleOutTwinRuns = runsWith(rows, "scale-out", "cpuMs", "twinCpuMs");
  if (scaleOutTwinRuns.length > 0)
    out.push({
      row: "scale-out ÷ its lean twin on PostgreSQL",
      ratioOf:
        "all CPU per order of the two orders APIs on PostgreSQL ÷ two lean twins' on another database of the same server (one INSERT and one produce request a turn, nothing else), same run",
      goal: null,
      better: "lower",
      unit: "×",
      ...fromRuns(
        scaleOutTwinRuns.map((t) => (t.cpuMs as number) / (t.twinCpuMs as number)),
        `${f(medianOf(scaleOutTwinRuns, "cpuMs"))} ms ÷ ${f(medianOf(scaleOutTwinRuns, "twinCpuMs"))} ms`,
      ),
    });
  return out;
}

const mark = (r: CostRow) => {
  const ok = met(r);
  if (ok === null) return r.goal !== null ? "?" : "·";
  return ok ? "✓" : "✗";
};

export const goalText = (r: CostRow) =>
  r.goal === null
    ? `${r.better} is better`
    : `${r.better === "lower" ? "≤" : "≥"} ${r.goal}${r.unit === "MB" ? " MB" : ""} (${r.better} is better)`;

/** The cost table as Markdown: the closing note and the results folder take it as it is. */
export function costTable(rows: CostRow[]): string {
  const lines = [
    "| Row | Ratio | Value | Goal | Met | Measured |",
    "|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.row} | ${r.ratioOf} | ${r.unit === "MB" ? `${Math.round(r.value)} MB` : r.value.toFixed(2)} | ${goalText(r)} | ${mark(r)} | ${r.detail} |`,
    ),
  ];
  return lines.join("\n");
}

const xmlText = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;");

/**
 * The cost rows as a chart: one bar per row, scaled to its goal (the goal is the same
 * vertical marker on every row), green where met, red where not; which way is better is
 * written on the row.
 */
export function costSvg(rows: CostRow[], subtitle: string): string {
  const width = 860;
  const bar = 22;
  const left = 360;
  const span = 380;
  const goalX = left + span / 2;
  const height = 70 + rows.length * (bar + 14);
  const items = rows
    .map((r, i) => {
      const y = 50 + i * (bar + 14);
      const scale = r.goal ?? 1;
      const w = Math.max(2, Math.min(span, (r.value / scale) * (span / 2)));
      const ok = met(r);
      const colour = ok === null ? "#5f6368" : ok ? "#188038" : "#d93025";
      const value = r.unit === "MB" ? `${Math.round(r.value)} MB` : r.value.toFixed(2);
      return `<text x="10" y="${y + 15}" font-size="12">${xmlText(r.row)}</text>
<text x="10" y="${y + 28}" font-size="10" fill="#5f6368">${xmlText(goalText(r))}</text>
<rect x="${left}" y="${y}" width="${w}" height="${bar}" fill="${colour}"/>
<text x="${left + w + 6}" y="${y + 15}" font-size="12">${value} ${mark(r)}</text>`;
    })
    .join("\n");
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" role="img">
<title>Cost ratios against their goals</title>
<text x="10" y="18" font-size="14" font-weight="bold">Cost ratios, each against a baseline of the same run</text>
<text x="10" y="36" font-size="11" fill="#5f6368">${xmlText(subtitle)}; the dashed line is each row's goal (bars scaled to it)</text>
<line x1="${goalX}" y1="44" x2="${goalX}" y2="${height - 10}" stroke="#202124" stroke-dasharray="4 3"/>
${items}
</svg>`;
}
