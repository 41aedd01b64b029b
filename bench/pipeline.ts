import autocannon from "autocannon";
import Database from "better-sqlite3";
import { ServiceProcess, serviceEnv, tempDb, testPrefix } from "../test/helpers/shop.ts";
import { waitFor } from "../test/helpers/wait.ts";
import { type Row, rssMb } from "./intake.ts";
import { etapasFromDb, latenciesFromDb } from "./stats.ts";

const ORDER = JSON.stringify({
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  precoUnitario: 18.9,
});

/** created -> decided latencies (ms) and the span from the first creation to the last decision. */
const latencies = (dbPath: string) =>
  latenciesFromDb(
    dbPath,
    "SELECT criado_em AS c, decidido_em AS d FROM pedidos WHERE decidido_em IS NOT NULL",
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

/** POST /pedidos with autocannon: `amount` orders, as fast as allowed or at a set rate. */
const pedidos = (
  url: string,
  load: { connections: number; amount: number; overallRate?: number },
) =>
  autocannon({
    url: `${url}/pedidos`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: ORDER,
    ...load,
  });

/** Benchmark 2: the whole pipeline, payments' wait set to 0, three payments instances. */
export async function benchPipeline(opts: {
  orders: number;
  steadySeconds: number;
  intakeRps: number;
  brokers: string;
  log: (l: string) => void;
}): Promise<Row[]> {
  const run = async (label: string, shape: (url: string) => Promise<unknown>, expected: number) => {
    const prefix = testPrefix(`pipe-${label}`);
    const dbPath = tempDb(`pipe-${label}`);
    const env = (extra: Record<string, string>) => ({
      ...serviceEnv(prefix, extra),
      KAFKA_BROKERS: opts.brokers,
    });
    const api = await ServiceProcess.start(
      "orders-api",
      "orders-api",
      env({ DB_PATH: dbPath }),
      /listening on http/,
    );
    const payments = await Promise.all(
      ["caixa-1", "caixa-2", "caixa-3"].map((i) =>
        ServiceProcess.start(
          i,
          "payments",
          env({ INSTANCIA: i, TEMPO_DECISAO_MS: "0" }),
          /listening on http/,
        ),
      ),
    );
    let paymentsPeak = 0;
    const sampler = setInterval(() => {
      for (const p of payments) paymentsPeak = Math.max(paymentsPeak, rssMb(p.child.pid as number));
    }, 500);
    try {
      await shape(api.url());
      await waitFor(() => decided(dbPath) >= expected, {
        timeoutMs: 600_000,
        intervalMs: 250,
        what: `${expected} orders decided`,
      });
      return { ...latencies(dbPath), etapas: etapasFromDb(dbPath), paymentsPeak };
    } finally {
      clearInterval(sampler);
      await Promise.all([api.stop(), ...payments.map((p) => p.stop())]);
    }
  };

  opts.log(
    `pipeline: ${opts.orders} orders as fast as 64 connections go, 3 payments instances, decision wait 0...`,
  );
  const burst = await run(
    "burst",
    (url) => pedidos(url, { connections: 64, amount: opts.orders }),
    opts.orders,
  );
  const throughput = (burst.n / burst.spanMs) * 1000;

  const steadyTotal = 200 * opts.steadySeconds;
  opts.log(`pipeline: a steady 200 orders/s for ${opts.steadySeconds} s...`);
  const steady = await run(
    "steady",
    (url) => pedidos(url, { connections: 16, overallRate: 200, amount: steadyTotal }),
    steadyTotal,
  );

  return [
    {
      benchmark: `pipeline: ${burst.n} orders, created -> decided`,
      measured: `${Math.round(throughput)} orders/s end to end in ${(burst.spanMs / 1000).toFixed(1)} s, p50 ${burst.p50} ms, p99 ${burst.p99} ms`,
      baseline: `intake ${Math.round(opts.intakeRps)} req/s`,
      value: throughput,
      baselineValue: opts.intakeRps,
      ratio: throughput / opts.intakeRps,
      unit: "orders/s",
    },
    {
      benchmark: "pipeline at a steady 200 orders/s: p99",
      measured: `p50 ${steady.p50} ms, p99 ${steady.p99} ms (${steady.n} orders); p50/p99 by step: ${Object.entries(
        steady.etapas,
      )
        .map(([k, v]) => `${k} ${v.p50}/${v.p99}`)
        .join(", ")}`,
      baseline: "goal 100 ms",
      value: steady.p99,
      baselineValue: 100,
      ratio: steady.p99 / 100,
      unit: "ms",
    },
    {
      benchmark: "memory: payments instance RSS under load",
      measured: `${burst.paymentsPeak} MB`,
      baseline: "goal 150 MB",
      value: burst.paymentsPeak,
      baselineValue: 150,
      ratio: burst.paymentsPeak / 150,
      unit: "MB",
    },
  ];
}
