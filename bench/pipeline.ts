import { join } from "node:path";
import { Database, waitFor } from "@shop/service";
import autocannon from "autocannon";
import { serviceEnv, tempDb, uniquePrefix } from "../harness/env.ts";
import { otlpCollector } from "../harness/otlp.ts";
import { ServiceProcess } from "../harness/process.ts";
import { ROOT } from "../infra/config.ts";
import { PeakMemory, type Row } from "./intake.ts";
import {
  barePipelineKafka,
  deleteTopics,
  KAFKA_BROKER,
  latenciesFromDb,
  measureCpu,
  medianOf,
  pidsOf,
  stepsFromDb,
} from "./stats.ts";

const ORDER = JSON.stringify({
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  precoUnitario: 18.9,
});

/**
 * created -> decided latencies (ms) and the span from the first creation to the last
 * decision, over the orders with an id above `depoisDe` (a warm-up's orders do not count).
 */
const latencies = (dbPath: string, since: number) =>
  latenciesFromDb(
    dbPath,
    `SELECT criado_em AS c, decidido_em AS d FROM pedidos WHERE decidido_em IS NOT NULL AND id > ${since}`,
  );

function decided(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true });
  const n = (
    db.prepare("SELECT COUNT(*) AS n FROM pedidos WHERE decidido_em IS NOT NULL").get() as {
      n: number;
    }
  ).n;
  db.close();
  return n;
}

/** shop_kafka_requests_total of the services at `urls`, summed by Kafka API. */
async function kafkaRequestsOf(urls: string[]): Promise<Record<string, number>> {
  const sum: Record<string, number> = {};
  for (const url of urls) {
    const text = await (await fetch(`${url}/metrics`)).text();
    for (const m of text.matchAll(/^shop_kafka_requests_total\{api="(\w+)"\} (\d+)/gm))
      sum[m[1] as string] = (sum[m[1] as string] ?? 0) + Number(m[2]);
  }
  return sum;
}

/** Requests per order by API, most first, from two readings of the counters. */
function requestsPerOrder(
  before: Record<string, number>,
  after: Record<string, number>,
  orders: number,
): string {
  return Object.entries(after)
    .map(([api, n]) => [api, (n - (before[api] ?? 0)) / orders] as const)
    .filter(([, perOrder]) => perOrder >= 0.01)
    .sort((a, b) => b[1] - a[1])
    .map(([api, perOrder]) => `${api} ${perOrder.toFixed(2)}`)
    .join(", ");
}

/**
 * Waits until the groups are stable: each payments instance holds one partition of
 * pedidos-criados, and the orders API (the only member of its group) has been assigned all
 * of pagamentos-resultados. Instances that join one after another rebalance the group each
 * time, and a member rejoins only at its next heartbeat; measuring through those pauses
 * measured start-up, not the pipeline.
 */
async function groupsStable(api: ServiceProcess, paymentsUrls: string[]) {
  type Saude = { consumidor: { particoes: Record<string, number[]> } | null };
  const particoes = async (url: string) =>
    Object.entries(
      ((await (await fetch(`${url}/saude`)).json()) as Saude).consumidor?.particoes ?? {},
    );
  await waitFor(
    async () => {
      const pagamentos = await Promise.all(paymentsUrls.map(particoes));
      const held = pagamentos.flatMap((ps) => ps.flatMap(([, p]) => p));
      return (
        pagamentos.every((ps) => ps.flatMap(([, p]) => p).length === 1) && new Set(held).size === 3
      );
    },
    { timeoutMs: 60_000, intervalMs: 200, what: "the pagamentos group to settle" },
  );
  await api.waitForLine(/assigned \S*pagamentos-resultados\[0,1,2\]/, 60_000);
}

/**
 * An open-loop load at an even pace: one POST every 1000/perSecond ms, each on schedule
 * whatever the earlier ones are doing. autocannon's overallRate is not that: each
 * connection sends its quota for the second back to back and then waits for the next
 * second, so "200/s" arrived as a burst of 200 at full speed and then nothing.
 */
async function atSteadyRate(url: string, perSecond: number, total: number) {
  const gapMs = 1000 / perSecond;
  const startedAt = performance.now();
  const sent: Promise<void>[] = [];
  let falhas = 0;
  for (let i = 0; i < total; i++) {
    const waitMs = startedAt + i * gapMs - performance.now();
    if (waitMs >= 1) await new Promise((r) => setTimeout(r, waitMs));
    sent.push(
      fetch(`${url}/pedidos`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ORDER,
      }).then(
        async (r) => {
          await r.arrayBuffer();
          if (r.status !== 201) falhas++;
        },
        () => {
          falhas++;
        },
      ),
    );
  }
  await Promise.all(sent);
  if (falhas > 0) throw new Error(`${falhas} of ${total} orders were not created (201)`);
}

/** POST /pedidos with autocannon: `amount` orders, as fast as the connections go. */
const pedidos = (url: string, load: { connections: number; amount: number }) =>
  autocannon({
    url: `${url}/pedidos`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: ORDER,
    ...load,
  });

/**
 * Runs `load` and waits until `expected` orders of `dbPath` are decided: the CPU per order
 * the orders program, the payments programs and Kafka spent meanwhile.
 */
async function cpuUntilDecided(
  orders: ServiceProcess,
  payments: ServiceProcess[],
  dbPath: string,
  expected: number,
  load: () => Promise<unknown>,
) {
  const cpu = measureCpu({
    "orders API": [orders.child.pid as number],
    payments: payments.map((p) => p.child.pid as number),
    Kafka: pidsOf(KAFKA_BROKER),
  });
  // The payments instances' memory under this load: its twin row compares the highest
  // instance's with the bare payments program's (issue 49).
  const memory = payments.map((p) => new PeakMemory(p.child.pid as number));
  const sampler = setInterval(() => {
    for (const m of memory) m.sample();
  }, 500);
  try {
    await load();
    await waitFor(() => decided(dbPath) >= expected, {
      timeoutMs: 600_000,
      intervalMs: 250,
      what: `${expected} orders decided`,
    });
  } finally {
    clearInterval(sampler);
  }
  return {
    ...cpu.stop(expected),
    paymentsPeakRssMb: Math.max(...memory.map((m) => m.rssMb)),
    paymentsPeakPrivateMb: Math.max(...memory.map((m) => m.privateMb)),
  };
}

/**
 * The pipeline's baseline: bare-pipeline.ts as an orders role and three payments roles,
 * the same load as the shop's (`shape`), until `expected` order rows are decided. CPU per
 * order of each, and created -> decided latencies past the first `warmUp` orders.
 */
async function barePipeline(
  opts: { brokers: string; log: (l: string) => void },
  what: string,
  shape: (url: string) => Promise<unknown>,
  expected: number,
  warmUp = 0,
) {
  const { prefix, env, dispose } = await barePipelineKafka(opts.brokers, "bare-pipe");
  const dbPath = tempDb("bare-pipe");
  const script = join(ROOT, "bench/bare-pipeline.ts");
  const orders = await ServiceProcess.startScript(
    "bare orders",
    script,
    env({ ROLE: "orders", DB_PATH: dbPath, GROUP: `${prefix}pedidos-api` }),
  );
  const payments = await Promise.all(
    ["caixa-1", "caixa-2", "caixa-3"].map((i) =>
      ServiceProcess.startScript(
        `bare ${i}`,
        script,
        env({
          ROLE: "payments",
          INSTANCIA: i,
          DB_PATH: tempDb(`bare-${i}`),
          GROUP: `${prefix}pagamentos`,
        }),
      ),
    ),
  );
  const held = async (p: ServiceProcess) =>
    ((await (await fetch(`${p.url()}/particoes`)).json()) as number[]).length;
  try {
    await waitFor(
      async () =>
        (await held(orders)) === 3 && (await Promise.all(payments.map(held))).every((n) => n === 1),
      { timeoutMs: 60_000, intervalMs: 200, what: "the bare pipeline's groups to settle" },
    );
    opts.log(`pipeline: the bare pipeline, ${what}...`);
    const spent = await cpuUntilDecided(orders, payments, dbPath, expected, () =>
      shape(orders.url()),
    );
    return {
      apiCpuMs: spent.perUnit["orders API"] ?? 0,
      paymentsCpuMs: spent.perUnit.payments ?? 0,
      kafkaCpuMs: spent.perUnit.Kafka ?? 0,
      paymentsPeakRssMb: spent.paymentsPeakRssMb,
      paymentsPeakPrivateMb: spent.paymentsPeakPrivateMb,
      ...latencies(dbPath, warmUp),
    };
  } finally {
    await Promise.all([orders.stop(), ...payments.map((p) => p.stop())]);
    await dispose();
  }
}

/** Benchmark 2: the whole pipeline, payments' wait set to 0, three payments instances. */
export async function benchPipeline(opts: {
  orders: number;
  steadySeconds: number;
  intakeRps: number;
  brokers: string;
  log: (l: string) => void;
  /** The burst alone (its row only): the cluster benchmark's comparison. */
  burstOnly?: boolean;
  /** Bursts, each beside a burst of the bare pipeline; 1 when left out. */
  trials?: number;
  /** false: no bare pipeline (the cluster's single-broker figures need none). */
  withBare?: boolean;
}): Promise<Row[]> {
  const run = async (
    label: string,
    shape: (url: string) => Promise<unknown>,
    expected: number,
    warmUp = 0,
    paymentsEnv: Record<string, string> = {},
    everyEnv: Record<string, string> = {},
  ) => {
    const prefix = uniquePrefix(`pipe-${label}`);
    const dbPath = tempDb(`pipe-${label}`);
    const env = (extra: Record<string, string>) => ({
      ...serviceEnv(prefix, extra),
      KAFKA_BROKERS: opts.brokers,
      ...everyEnv,
    });
    const api = await ServiceProcess.start("orders-api", "orders-api", env({ DB_PATH: dbPath }));
    const payments = await Promise.all(
      ["caixa-1", "caixa-2", "caixa-3"].map((i) =>
        ServiceProcess.start(
          i,
          "payments",
          env({ INSTANCIA: i, TEMPO_DECISAO_MS: "0", ...paymentsEnv }),
        ),
      ),
    );
    try {
      await groupsStable(
        api,
        payments.map((p) => p.url()),
      );
      const paymentsUrls = payments.map((p) => p.url());
      const requestsBefore = await Promise.all([
        kafkaRequestsOf([api.url()]),
        kafkaRequestsOf(paymentsUrls),
      ]);
      const spent = await cpuUntilDecided(api, payments, dbPath, expected, () => shape(api.url()));
      const requestsAfter = await Promise.all([
        kafkaRequestsOf([api.url()]),
        kafkaRequestsOf(paymentsUrls),
      ]);
      return {
        requests: `Kafka requests per order: orders API ${requestsPerOrder(requestsBefore[0], requestsAfter[0], expected)}; payments ${requestsPerOrder(requestsBefore[1], requestsAfter[1], expected)}`,
        cpu: spent.text,
        apiCpuMs: spent.perUnit["orders API"] ?? 0,
        paymentsCpuMs: spent.perUnit.payments ?? 0,
        kafkaCpuMs: spent.perUnit.Kafka ?? 0,
        ...latencies(dbPath, warmUp),
        etapas: stepsFromDb(dbPath, warmUp),
        paymentsPeak: spent.paymentsPeakRssMb,
        paymentsPeakPrivateMb: spent.paymentsPeakPrivateMb,
      };
    } finally {
      await Promise.all([api.stop(), ...payments.map((p) => p.stop())]);
      await deleteTopics(opts.brokers, prefix);
    }
  };

  const trials = opts.trials ?? 1;
  const runs: Record<string, number>[] = [];
  let burst: Awaited<ReturnType<typeof run>> | null = null;
  // Each run beside its baseline (the bare pipeline), alternately.
  for (let t = 1; t <= trials; t++) {
    const bare =
      opts.withBare === false
        ? null
        : await barePipeline(
            opts,
            `${opts.orders} orders as fast as 64 connections go`,
            (url) => pedidos(url, { connections: 64, amount: opts.orders }),
            opts.orders,
          );
    opts.log(
      `pipeline: ${opts.orders} orders as fast as 64 connections go, 3 payments instances, decision wait 0${trials > 1 ? ` (run ${t}/${trials})` : ""}...`,
    );
    const shop = await run(
      "burst",
      (url) => pedidos(url, { connections: 64, amount: opts.orders }),
      opts.orders,
    );
    runs.push({
      apiCpuMs: shop.apiCpuMs,
      paymentsCpuMs: shop.paymentsCpuMs,
      kafkaCpuMs: shop.kafkaCpuMs,
      ...(bare
        ? {
            bareApiCpuMs: bare.apiCpuMs,
            barePaymentsCpuMs: bare.paymentsCpuMs,
            bareKafkaCpuMs: bare.kafkaCpuMs,
            bareRate: (bare.n / bare.spanMs) * 1000,
            paymentsPeakRssMb: shop.paymentsPeak,
            paymentsPeakPrivateMb: shop.paymentsPeakPrivateMb,
            barePaymentsPeakRssMb: bare.paymentsPeakRssMb,
            barePaymentsPeakPrivateMb: bare.paymentsPeakPrivateMb,
          }
        : {}),
    });
    if (t === Math.ceil(trials / 2)) burst = shop;
  }
  if (!burst) throw new Error("the pipeline ran no burst");
  const throughput = (burst.n / burst.spanMs) * 1000;
  const burstRow: Row = {
    id: "pipeline",
    benchmark: `pipeline: ${burst.n} orders, created -> decided`,
    measured: `${Math.round(throughput)} orders/s end to end in ${(burst.spanMs / 1000).toFixed(1)} s, p50 ${burst.p50} ms, p99 ${burst.p99} ms; ${burst.cpu}; ${burst.requests}`,
    baseline: `intake ${Math.round(opts.intakeRps)} req/s`,
    value: throughput,
    baselineValue: opts.intakeRps,
    ratio: throughput / opts.intakeRps,
    unit: "orders/s",
    extra: {
      apiCpuMs: medianOf(runs, "apiCpuMs"),
      paymentsCpuMs: medianOf(runs, "paymentsCpuMs"),
      kafkaCpuMs: medianOf(runs, "kafkaCpuMs"),
    },
    trials: runs,
  };
  if (opts.burstOnly) return [burstRow];

  // OpenTelemetry's cost: the same burst with every span recorded and exported over OTLP
  // (to a sink of this process that takes and counts them), against the burst above,
  // where nothing is exported and so nothing recorded.
  opts.log("pipeline: the same burst with tracing exported over OTLP...");
  const sink = await otlpCollector();
  const traced = await run(
    "burst-otel",
    (url) => pedidos(url, { connections: 64, amount: opts.orders }),
    opts.orders,
    0,
    {},
    { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_BSP_SCHEDULE_DELAY: "1000" },
  );
  const exports = sink.exports;
  await sink.close();
  if (exports === 0) throw new Error("tracing on: the OTLP sink received no export");
  const allCpu = (r: typeof burst) => r.apiCpuMs + r.paymentsCpuMs + r.kafkaCpuMs;
  const tracingRow: Row = {
    id: "tracing",
    benchmark: "tracing exported (OTLP) ÷ not: CPU per order",
    measured: `${allCpu(traced).toFixed(2)} ms (API ${traced.apiCpuMs.toFixed(2)}, payments ${traced.paymentsCpuMs.toFixed(2)}, Kafka ${traced.kafkaCpuMs.toFixed(2)}); ${exports} OTLP exports of ${Math.round(sink.bytes / 1024)} KB`,
    baseline: `not exported ${allCpu(burst).toFixed(2)} ms`,
    value: allCpu(traced),
    baselineValue: allCpu(burst),
    ratio: allCpu(traced) / Math.max(0.001, allCpu(burst)),
    unit: "CPU ms/order",
  };

  opts.log("pipeline: the same burst with payments at ENTREGA=exatamente-uma-vez...");
  const exactlyOnce = await run(
    "burst-eos",
    (url) => pedidos(url, { connections: 64, amount: opts.orders }),
    opts.orders,
    0,
    { ENTREGA: "exatamente-uma-vez" },
  );
  const eosThroughput = (exactlyOnce.n / exactlyOnce.spanMs) * 1000;
  const perOrder = (r: typeof burst) => r.paymentsCpuMs + r.kafkaCpuMs;

  const steadyTotal = 200 * opts.steadySeconds;
  opts.log(`pipeline: a steady 200 orders/s for ${opts.steadySeconds} s, after 1 s of warm-up...`);
  // One second at the same pace first, not counted: the first orders through fresh
  // processes and topics wait for JIT compilation and first connections (up to 280 ms, in
  // the first half second only), which is start-up, not the steady state measured here.
  const warmUp = 200;
  const atTwoHundred = async (url: string) => {
    await atSteadyRate(url, 200, warmUp);
    await atSteadyRate(url, 200, steadyTotal);
  };
  const steadyRuns: { p99: number; bareP99: number }[] = [];
  let steady: Awaited<ReturnType<typeof run>> | null = null;
  let bareSteady: Awaited<ReturnType<typeof barePipeline>> | null = null;
  // Each run beside its baseline (the bare pipeline at the same pace), alternately.
  for (let t = 1; t <= trials; t++) {
    const shop = await run("steady", atTwoHundred, warmUp + steadyTotal, warmUp);
    const bare = await barePipeline(
      opts,
      `a steady 200 orders/s for ${opts.steadySeconds} s, after 1 s of warm-up${trials > 1 ? ` (run ${t}/${trials})` : ""}`,
      atTwoHundred,
      warmUp + steadyTotal,
      warmUp,
    );
    steadyRuns.push({ p99: shop.p99, bareP99: bare.p99 });
    if (t === Math.ceil(trials / 2)) {
      steady = shop;
      bareSteady = bare;
    }
  }
  if (!steady || !bareSteady) throw new Error("the pipeline ran no steady run");

  return [
    burstRow,
    tracingRow,
    {
      benchmark: "pipeline, exactly-once: payments + Kafka CPU per order",
      measured: `${perOrder(exactlyOnce).toFixed(2)} ms (payments ${exactlyOnce.paymentsCpuMs.toFixed(2)}, Kafka ${exactlyOnce.kafkaCpuMs.toFixed(2)}); ${Math.round(eosThroughput)} orders/s, p50 ${exactlyOnce.p50} ms, p99 ${exactlyOnce.p99} ms`,
      baseline: `at-least-once ${perOrder(burst).toFixed(2)} ms (payments ${burst.paymentsCpuMs.toFixed(2)}, Kafka ${burst.kafkaCpuMs.toFixed(2)}); ${Math.round(throughput)} orders/s`,
      value: perOrder(exactlyOnce),
      baselineValue: perOrder(burst),
      ratio: perOrder(exactlyOnce) / Math.max(0.001, perOrder(burst)),
      unit: "CPU ms/order",
    },
    {
      id: "latency-200",
      benchmark: "pipeline at a steady 200 orders/s: p99",
      measured: `p50 ${steady.p50} ms, p99 ${steady.p99} ms (${steady.n} orders after ${warmUp} of warm-up); p50/p99 by step: ${Object.entries(
        steady.etapas,
      )
        .map(([k, v]) => `${k} ${v.p50}/${v.p99}`)
        .join(", ")}`,
      baseline: `the bare pipeline at 200/s: p50 ${bareSteady.p50} ms, p99 ${bareSteady.p99} ms`,
      value: steady.p99,
      baselineValue: bareSteady.p99,
      ratio: steady.p99 / Math.max(1, bareSteady.p99),
      unit: "ms",
      extra: {
        p50: steady.p50,
        p99: medianOf(steadyRuns, "p99"),
        bareP99: medianOf(steadyRuns, "bareP99"),
      },
      trials: steadyRuns,
    },
    {
      id: "memory-payments",
      benchmark: "memory: payments instance RSS under load",
      measured: `${burst.paymentsPeak} MB`,
      baseline: "goal 100 MB",
      value: burst.paymentsPeak,
      baselineValue: 100,
      ratio: burst.paymentsPeak / 100,
      unit: "MB",
    },
  ];
}
