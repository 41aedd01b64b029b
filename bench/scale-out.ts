import { join } from "node:path";
import { kafkaNames } from "@shop/contracts";
import autocannon from "autocannon";
import { serviceEnv, tempDb, uniquePrefix } from "../harness/env.ts";
import { ServiceProcess } from "../harness/process.ts";
import { ROOT } from "../infra/config.ts";
import { tempOrdersDatabase } from "../infra/postgres.ts";
import type { Row } from "./intake.ts";
import {
  deleteTopics,
  KAFKA_BROKER,
  measureCpu,
  medianOf,
  pidsOf,
  rootsOf,
  treeCpuMs,
} from "./stats.ts";

const ORDER = JSON.stringify({
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  precoUnitario: 18.9,
});
/** The machine's PostgreSQL server's processes (backends, workers); their parent is the postmaster. */
const POSTGRES = /^postgres(:|\0)/;

/** POST /pedidos on every url at once, the connections shared among them: 201s per second. */
async function loadAll(urls: string[], seconds: number, connections: number) {
  const results = await Promise.all(
    urls.map((url) =>
      autocannon({
        url: `${url}/pedidos`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: ORDER,
        connections: Math.max(1, Math.round(connections / urls.length)),
        duration: seconds,
      }),
    ),
  );
  return {
    rps: results.reduce((s, r) => s + r["2xx"], 0) / seconds,
    p99: Math.max(...results.map((r) => r.latency.p99)),
    errors: results.reduce((s, r) => s + r.non2xx + r.errors, 0),
  };
}

type Measured = Awaited<ReturnType<typeof measure>>;

/** One setup under load after a warm-up: rate and CPU per order. */
async function measure(
  label: string,
  apis: ServiceProcess[],
  opts: { seconds: number; connections: number; withPostgres: boolean; log: (l: string) => void },
) {
  const urls = apis.map((a) => a.url());
  const postgres = opts.withPostgres ? rootsOf(pidsOf(POSTGRES)) : [];
  // Unmeasured: the pools' connections open, and the new processes' code compiled.
  await loadAll(urls, 5, opts.connections);
  opts.log(`scale-out: ${label}, ${opts.connections} connections, ${opts.seconds} s...`);
  const cpu = measureCpu({
    "orders APIs": apis.map((a) => a.child.pid as number),
    Kafka: pidsOf(KAFKA_BROKER),
    // The whole server: its backends and the workers that start and end during the run.
    ...(opts.withPostgres ? { PostgreSQL: () => treeCpuMs(postgres) } : {}),
  });
  const run = await loadAll(urls, opts.seconds, opts.connections);
  const spent = cpu.stop(run.rps * opts.seconds);
  return { ...run, cpuMs: spent.total, text: spent.text };
}

/**
 * Issue 37: the intake of two orders API instances sharing PostgreSQL against one on its
 * SQLite file, in the same run, on the same Kafka: requests per second and all CPU per
 * order (the APIs, Kafka, and PostgreSQL's server when it is used). `trials` runs, each
 * measuring the one on SQLite and then the two on PostgreSQL (issue 49: one run read 1.75
 * to 2.87 from one half hour to the next), the row the median of their ratios. Each run
 * starts from empty databases and new processes (issue 57): on one database, every run
 * found the dead rows the runs before it left, and the full run's three rose run after run
 * (2.40, 2.52, 2.81).
 */
export async function benchScaleOut(opts: {
  seconds: number;
  connections: number;
  brokers: string;
  trials?: number;
  log: (l: string) => void;
}): Promise<Row[]> {
  const prefix = uniquePrefix("scale-out");
  const env = (extra: Record<string, string>) => ({
    ...serviceEnv(prefix, extra),
    KAFKA_BROKERS: opts.brokers,
  });
  /**
   * One run's programs on empty databases, stopped and dropped after `work`: one orders API
   * on SQLite, two on one PostgreSQL database, and two of the lean twin on another.
   */
  const onFreshDatabases = async <T>(
    t: number,
    work: (single: ServiceProcess, two: ServiceProcess[], twins: ServiceProcess[]) => Promise<T>,
  ): Promise<T> => {
    const database = await tempOrdersDatabase(`bench${t}`);
    const twinDatabase = await tempOrdersDatabase(`twin${t}`);
    const started: ServiceProcess[] = [];
    try {
      const start = async (name: string, extra: Record<string, string>) => {
        const p = await ServiceProcess.start(name, "orders-api", env(extra));
        started.push(p);
        return p;
      };
      const twin = async (name: string) => {
        const p = await ServiceProcess.startScript(
          name,
          join(ROOT, "bench/bare-postgres-orders.ts"),
          {
            KAFKA_BROKERS: opts.brokers,
            TOPIC_PEDIDOS: kafkaNames(prefix).topics.pedidosCriados,
            DATABASE_URL: twinDatabase.url,
          },
        );
        started.push(p);
        return p;
      };
      const single = await start("orders-api", { DB_PATH: tempDb(`scale-out-${t}`) });
      const two = [
        await start("orders-api-1", { DATABASE_URL: database.url }),
        await start("orders-api-2", { DATABASE_URL: database.url }),
      ];
      const twins = [await twin("lean twin 1"), await twin("lean twin 2")];
      return await work(single, two, twins);
    } finally {
      await Promise.all(started.map((p) => p.stop()));
      await database.drop();
      await twinDatabase.drop();
    }
  };
  try {
    const trials = opts.trials ?? 1;
    const measured: { one: Measured; both: Measured; twins: Measured }[] = [];
    for (let t = 1; t <= trials; t++) {
      const of = trials > 1 ? ` (run ${t}/${trials})` : "";
      measured.push(
        await onFreshDatabases(t, async (single, two, twins) => ({
          one: await measure(`one orders API on SQLite${of}`, [single], {
            ...opts,
            withPostgres: false,
          }),
          both: await measure(`two orders APIs on PostgreSQL${of}`, two, {
            ...opts,
            withPostgres: true,
          }),
          twins: await measure(`two lean twins on PostgreSQL${of}`, twins, {
            ...opts,
            withPostgres: true,
          }),
        })),
      );
    }
    const runs = measured.map(({ one, both, twins }) => ({
      cpuMs: both.cpuMs,
      baselineCpuMs: one.cpuMs,
      twinCpuMs: twins.cpuMs,
      rps: both.rps,
      baselineRps: one.rps,
    }));
    // The middle run's figures are the ones printed in full.
    const { one, both, twins } = measured[Math.ceil(trials / 2) - 1] as (typeof measured)[number];
    return [
      {
        id: "scale-out",
        benchmark: "scale-out intake: 2 instances on PostgreSQL vs 1 on SQLite",
        measured: `${Math.round(both.rps)} req/s, p99 ${both.p99} ms, errors ${both.errors}; ${both.text}${trials > 1 ? ` (run ${Math.ceil(trials / 2)} of ${trials} shown)` : ""}`,
        baseline: `one on SQLite ${Math.round(one.rps)} req/s, p99 ${one.p99} ms, errors ${one.errors}; ${one.text}; two lean twins on PostgreSQL ${Math.round(twins.rps)} req/s, errors ${twins.errors}; ${twins.text}`,
        value: medianOf(runs, "rps"),
        baselineValue: medianOf(runs, "baselineRps"),
        ratio: medianOf(runs, "rps") / medianOf(runs, "baselineRps"),
        unit: "req/s",
        extra: {
          cpuMs: medianOf(runs, "cpuMs"),
          baselineCpuMs: medianOf(runs, "baselineCpuMs"),
          twinCpuMs: medianOf(runs, "twinCpuMs"),
        },
        trials: runs,
      },
    ];
  } finally {
    await deleteTopics(opts.brokers, prefix);
  }
}
