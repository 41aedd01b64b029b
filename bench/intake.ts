import { readFileSync } from "node:fs";
import { join } from "node:path";
import autocannon from "autocannon";
import { serviceEnv, tempDb, uniquePrefix } from "../harness/env.ts";
import { ServiceProcess } from "../harness/process.ts";
import { ROOT } from "../infra/config.ts";
import { runKafkaTool } from "../infra/kafka/kafka.ts";
import {
  barePipelineKafka,
  deleteTopics,
  KAFKA_BROKER,
  measureCpu,
  medianOf,
  pidsOf,
} from "./stats.ts";

export interface Row {
  /** What the cost table (goals.ts) finds the row by. */
  id?: string;
  benchmark: string;
  measured: string;
  baseline: string;
  value: number;
  baselineValue: number;
  ratio: number;
  unit: string;
  extra?: Record<string, number>;
  /**
   * Each run's figures, when the row is the median of several runs of one `npm run bench`
   * (issue 36): the cost table divides each run by its own baseline and prints the spread.
   */
  trials?: Record<string, number>[];
}

/** The order every load of POST /pedidos sends (the intake's and the price list's). */
export const ORDER = JSON.stringify({
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  precoUnitario: 18.9,
});

/** Resident memory of a process, in MB. */
export function rssMb(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

/**
 * The memory a process owns, in MB: Private_Clean + Private_Dirty of smaps_rollup. RSS also
 * counts pages it shares with every Node process (Node's own binary, about 49 MB), which
 * no service can save (issue 49).
 */
export function privateMb(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
  const kb = (field: string) =>
    Number(rollup.match(new RegExp(`${field}:\\s+(\\d+) kB`))?.[1] ?? 0);
  return Math.round((kb("Private_Clean") + kb("Private_Dirty")) / 1024);
}

/** A process's highest RSS and private memory, sampled while it works. */
export class PeakMemory {
  rssMb = 0;
  privateMb = 0;
  constructor(private readonly pid: number) {
    this.sample();
  }
  sample(): void {
    this.rssMb = Math.max(this.rssMb, rssMb(this.pid));
    this.privateMb = Math.max(this.privateMb, privateMb(this.pid));
  }
}

export async function load(url: string, seconds: number, connections: number, onTick?: () => void) {
  const timer = onTick ? setInterval(onTick, 1000) : null;
  const result = await autocannon({
    url: `${url}/pedidos`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: ORDER,
    connections,
    duration: seconds,
  });
  if (timer) clearInterval(timer);
  const ok = result["2xx"];
  return {
    rps: ok / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.non2xx + result.errors,
  };
}

/** Kafka's own ProducerPerformance (Java, same jars), acks=all, records of the same size. */
function producerPerformance(brokers: string, topic: string, records: number, size: number) {
  const r = runKafkaTool("org.apache.kafka.tools.ProducerPerformance", [
    "--topic",
    topic,
    "--num-records",
    String(records),
    "--record-size",
    String(size),
    "--throughput",
    "-1",
    "--producer-props",
    `bootstrap.servers=${brokers}`,
    "acks=all",
  ]);
  const line = r.stdout
    .split("\n")
    .find((l) => /records sent, .* records\/sec/.test(l) && /99th/.test(l));
  if (!line) throw new Error(`ProducerPerformance gave no summary:\n${r.stdout}\n${r.stderr}`);
  const num = (re: RegExp) => Number((line.match(re) as RegExpMatchArray)[1]);
  return {
    rps: num(/([\d.]+) records\/sec/),
    p50: num(/(\d+) ms 50th/),
    p99: num(/(\d+) ms 99th/),
  };
}

export type Ceiling = Awaited<ReturnType<typeof load>> & {
  cpu: string;
  /** Bare Express's CPU ms per request: the baseline of the intake and broker cost rows. */
  cpuMs: number;
  /** The program's highest RSS and private memory under the load, in MB. */
  peakRssMb: number;
  peakPrivateMb: number;
};

/** A baseline program of bench/ under load: its rate, latencies and CPU per request. */
async function baselineUnderLoad(
  what: string,
  file: string,
  env: NodeJS.ProcessEnv,
  seconds: number,
  connections: number,
  log: (l: string) => void,
): Promise<Ceiling> {
  const bare = await ServiceProcess.startScript(what, join(ROOT, file), env);
  log(`${what}, ${connections} connections, ${seconds} s...`);
  try {
    const cpu = measureCpu({ [what]: [bare.child.pid as number] });
    const memory = new PeakMemory(bare.child.pid as number);
    const r = await load(bare.url(), seconds, connections, () => memory.sample());
    const spent = cpu.stop(r.rps * seconds);
    return {
      ...r,
      cpu: spent.text,
      cpuMs: spent.total,
      peakRssMb: memory.rssMb,
      peakPrivateMb: memory.privateMb,
    };
  } finally {
    await bare.stop();
  }
}

/** The HTTP ceiling: a bare Express endpoint answering 201 with a fixed body. */
export const bareExpress = (seconds: number, connections: number, log: (l: string) => void) =>
  baselineUnderLoad("bare Express", "bench/bare-express.ts", {}, seconds, connections, log);

/**
 * The intake's baseline (issue 49): the bare pipeline's orders program, which keeps the
 * intake's promises (the order stored durably, its event acknowledged by every in-sync
 * replica, then 201) with the shop's cheapest design (a turn's orders in one transaction,
 * their events in one produce request). A bare program that stored and answered without
 * Kafka cost what bare Express costs once it shared its fsyncs (0.03 ms a request on
 * 2026-11-27): the HTTP ceiling, not the intake's twin.
 */
export async function bareIntake(
  seconds: number,
  connections: number,
  log: (l: string) => void,
  brokers: string,
): Promise<Ceiling> {
  const topics = await barePipelineKafka(brokers, "bare-intake");
  try {
    return await baselineUnderLoad(
      "bare intake",
      "bench/bare-pipeline.ts",
      topics.env({
        ROLE: "orders",
        GROUP: `${topics.prefix}pedidos-api`,
        DB_PATH: tempDb("bare-intake"),
      }),
      seconds,
      connections,
      log,
    );
  } finally {
    await topics.dispose();
  }
}

/** Benchmark 1: order intake against the real Kafka, every request waiting for its ack. */
export async function benchIntake(opts: {
  seconds: number;
  connections: number;
  /** The bare-Express ceiling measured in this run. */
  ceiling: Ceiling;
  /** Runs, each beside its own baselines (bare Express, bare intake); 1 when left out. */
  trials?: number;
  /** false: no bare-intake baseline (the cluster's single-broker figures need none). */
  withBareIntake?: boolean;
  brokers: string;
  log: (l: string) => void;
}): Promise<Row[]> {
  const { seconds, connections, ceiling, log } = opts;

  const trials = opts.trials ?? 1;
  const prefix = uniquePrefix("bench");
  const api = await ServiceProcess.start("orders-api", "orders-api", {
    ...serviceEnv(prefix, { DB_PATH: tempDb("bench") }),
    KAFKA_BROKERS: opts.brokers,
  });
  const restMb = rssMb(api.child.pid as number);
  let peakMb = restMb;
  const runs: Record<string, number>[] = [];
  let measured = { rps: 0, p50: 0, p99: 0, errors: 0 };
  let spentText = "";
  // Each run measures its baselines beside it: on a shared machine a minute apart moves a
  // figure by a fifth, so a ratio divides figures of the same minute.
  for (let t = 1; t <= trials; t++) {
    const of = trials > 1 ? ` (run ${t}/${trials})` : "";
    const express =
      t === 1 && trials === 1 ? ceiling : await bareExpress(seconds, connections, log);
    const bare =
      opts.withBareIntake === false
        ? null
        : await bareIntake(seconds, connections, log, opts.brokers);
    log(`intake: orders API (outbox, acks=all), ${connections} connections, ${seconds} s${of}...`);
    const cpu = measureCpu({
      "orders API": [api.child.pid as number],
      Kafka: pidsOf(KAFKA_BROKER),
    });
    const memory = new PeakMemory(api.child.pid as number);
    const run = await load(api.url(), seconds, connections, () => {
      memory.sample();
      peakMb = Math.max(peakMb, memory.rssMb);
    });
    const spent = cpu.stop(run.rps * seconds);
    runs.push({
      rps: run.rps,
      p50: run.p50,
      p99: run.p99,
      errors: run.errors,
      apiCpuMs: spent.perUnit["orders API"] ?? 0,
      kafkaCpuMs: spent.perUnit.Kafka ?? 0,
      bareExpressCpuMs: express.cpuMs,
      apiPeakRssMb: memory.rssMb,
      apiPeakPrivateMb: memory.privateMb,
      ...(bare
        ? {
            bareIntakeCpuMs: bare.cpuMs,
            bareIntakeRps: bare.rps,
            bareIntakePeakRssMb: bare.peakRssMb,
            bareIntakePeakPrivateMb: bare.peakPrivateMb,
          }
        : {}),
    });
    if (t === Math.ceil(trials / 2)) {
      measured = run;
      spentText = spent.text;
    }
  }
  await api.stop();

  const size = Buffer.byteLength(
    JSON.stringify({
      versao: 1,
      pedidoId: 123456,
      cliente: "Ana",
      item: "caneca",
      quantidade: 2,
      valor: 37.8,
      criadoEm: new Date().toISOString(),
    }),
  );
  const records = Math.max(50_000, Math.round(measured.rps * seconds));
  log(`intake: ProducerPerformance, ${records} records of ${size} bytes, acks=all...`);
  const broker = producerPerformance(opts.brokers, `${prefix}pedidos-criados`, records, size);
  await deleteTopics(opts.brokers, prefix);

  return [
    {
      id: "intake",
      benchmark: "intake: POST /pedidos (outbox, acks=all)",
      measured: `${Math.round(measured.rps)} req/s, p50 ${measured.p50} ms, p99 ${measured.p99} ms, errors ${measured.errors}; ${spentText}${trials > 1 ? ` (run ${Math.ceil(trials / 2)} of ${trials} shown)` : ""}`,
      baseline: `bare Express ${Math.round(ceiling.rps)} req/s (p99 ${ceiling.p99} ms; ${ceiling.cpu})`,
      value: measured.rps,
      baselineValue: ceiling.rps,
      ratio: measured.rps / ceiling.rps,
      unit: "req/s",
      extra: {
        p50: measured.p50,
        p99: measured.p99,
        rssRestMb: restMb,
        rssLoadMb: peakMb,
        apiCpuMs: medianOf(runs, "apiCpuMs"),
        kafkaCpuMs: medianOf(runs, "kafkaCpuMs"),
      },
      trials: runs,
    },
    {
      benchmark: "intake vs the broker ceiling",
      measured: `${Math.round(measured.rps)} req/s`,
      baseline: `ProducerPerformance ${Math.round(broker.rps)} rec/s (p99 ${broker.p99} ms)`,
      value: measured.rps,
      baselineValue: broker.rps,
      ratio: measured.rps / broker.rps,
      unit: "req/s",
    },
    {
      id: "memory-orders-api",
      benchmark: "memory: orders API RSS under load",
      measured: `${peakMb} MB (at rest ${restMb} MB)`,
      baseline: "goal 100 MB",
      value: peakMb,
      baselineValue: 100,
      ratio: peakMb / 100,
      unit: "MB",
    },
  ];
}
