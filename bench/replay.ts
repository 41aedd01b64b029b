import { spawn } from "node:child_process";
import { join } from "node:path";
import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import { ensureTopics } from "@shop/kafka";
import { Kafka, logLevel } from "kafkajs";
import { uniquePrefix } from "../harness/env.ts";
import { analyticsCli } from "../harness/process.ts";
import { ROOT } from "../infra/config.ts";
import { runKafkaTool } from "../infra/kafka/kafka.ts";
import { type Row, rssMb } from "./intake.ts";
import { deleteTopics, median } from "./stats.ts";

/** Writes `total` valid records, half creations and half results, with kafkajs in big batches. */
async function fill(brokers: string, prefix: string, total: number, log: (l: string) => void) {
  const names = kafkaNames(prefix);
  const kafka = new Kafka({ brokers: [brokers], logLevel: logLevel.ERROR });
  await ensureTopics(kafka, pedidoTopics(names), REPLICATION_FACTOR);
  const producer = kafka.producer();
  await producer.connect();
  const half = total / 2;
  const at = new Date().toISOString();
  for (let start = 1; start <= half; start += 10_000) {
    const ids = Array.from({ length: Math.min(10_000, half - start + 1) }, (_, i) => start + i);
    await producer.sendBatch({
      acks: 1,
      topicMessages: [
        {
          topic: names.topics.pedidosCriados,
          messages: ids.map((id) => ({
            key: String(id),
            value: JSON.stringify({
              versao: 1,
              pedidoId: id,
              cliente: "c",
              item: `item-${id % 50}`,
              quantidade: 1 + (id % 5),
              valor: (id % 150) + 0.5,
              criadoEm: at,
            }),
          })),
        },
        {
          topic: names.topics.pagamentosResultados,
          messages: ids.map((id) => ({
            key: String(id),
            value: JSON.stringify({
              versao: 1,
              pedidoId: id,
              status: id % 150 < 100 ? "APROVADO" : "RECUSADO",
              motivo: null,
              instancia: "caixa-1",
              processadoEm: at,
            }),
          })),
        },
      ],
    });
    if ((start - 1) % 100_000 === 0)
      log(`replay: written ${Math.min(total, (start - 1 + 10_000) * 2)} / ${total} records`);
  }
  await producer.disconnect();
  return names;
}

function consumerPerformance(brokers: string, topic: string, messages: number): number {
  const started = Date.now();
  const r = runKafkaTool("org.apache.kafka.tools.ConsumerPerformance", [
    "--bootstrap-server",
    brokers,
    "--topic",
    topic,
    "--messages",
    String(messages),
    "--timeout",
    "60000",
  ]);
  if (r.status !== 0) throw new Error(`ConsumerPerformance failed: ${r.stderr}`);
  return Date.now() - started;
}

/** The analytics CLI from offset 0 in a group of its own: its wall time and peak RSS. */
async function analyticsRun(brokers: string, prefix: string, grupo: string) {
  const started = Date.now();
  const cli = analyticsCli(brokers, prefix, grupo);
  const child = spawn(process.execPath, cli.args, {
    env: cli.env,
    stdio: ["ignore", "pipe", "ignore"],
  });
  let peak = 0;
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, rssMb(child.pid as number));
    } catch {}
  }, 200);
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  clearInterval(sampler);
  const ms = Date.now() - started;
  if (code !== 0) throw new Error(`analytics exited ${code}`);
  const dashboard = JSON.parse(out) as { registrosLidos: number };
  return { ms, peak, read: dashboard.registrosLidos };
}

/**
 * The bare kafkajs consumer (bare-replay.ts) over the same records: its wall time, process
 * start included as the analytics CLI's is. Run by Node itself (type stripping), as the CLI
 * runs bundled: neither pays a TypeScript loader.
 */
async function bareRun(brokers: string, topics: string[], total: number) {
  const started = Date.now();
  const child = spawn(process.execPath, [join(ROOT, "bench/bare-replay.ts")], {
    env: { ...process.env, KAFKA_BROKERS: brokers, TOPICS: topics.join(","), TOTAL: String(total) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    err += d;
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  const ms = Date.now() - started;
  if (code !== 0) throw new Error(`the bare kafkajs consumer exited ${code}: ${err.trim()}`);
  return { ms, read: (JSON.parse(out) as { read: number }).read };
}

/**
 * Benchmark 3: analytics rebuilds its view from offset 0 over `total` records, against
 * ConsumerPerformance over the same records. On a shared machine one run of either moved
 * by a fifth from one minute to the next, so each runs `trials` times, alternately, and
 * the row compares their medians.
 */
export async function benchReplay(opts: {
  total: number;
  brokers: string;
  trials?: number;
  log: (l: string) => void;
}): Promise<Row[]> {
  const prefix = uniquePrefix("replay");
  const names = await fill(opts.brokers, prefix, opts.total, opts.log);
  const trials = opts.trials ?? 3;

  const javaRates: number[] = [];
  const bareRates: number[] = [];
  const rates: number[] = [];
  let peak = 0;
  try {
    for (let t = 1; t <= trials; t++) {
      opts.log(
        `replay ${t}/${trials}: ConsumerPerformance over both topics (${opts.total} records)...`,
      );
      const javaMs =
        consumerPerformance(opts.brokers, names.topics.pedidosCriados, opts.total / 2) +
        consumerPerformance(opts.brokers, names.topics.pagamentosResultados, opts.total / 2);
      javaRates.push((opts.total / javaMs) * 1000);
      opts.log(`replay ${t}/${trials}: a bare kafkajs consumer from offset 0...`);
      const bare = await bareRun(
        opts.brokers,
        [names.topics.pedidosCriados, names.topics.pagamentosResultados],
        opts.total,
      );
      bareRates.push((bare.read / bare.ms) * 1000);
      opts.log(`replay ${t}/${trials}: the analytics CLI from offset 0...`);
      const run = await analyticsRun(opts.brokers, prefix, `bench-replay-${t}`);
      if (run.read !== opts.total) throw new Error(`analytics read ${run.read} of ${opts.total}`);
      rates.push((run.read / run.ms) * 1000);
      peak = Math.max(peak, run.peak);
    }
  } finally {
    await deleteTopics(opts.brokers, prefix);
  }
  const rate = median(rates);
  const javaRate = median(javaRates);
  const bareRate = median(bareRates);
  const spread = (xs: number[]) =>
    `${Math.round(Math.min(...xs) / 1000)}k-${Math.round(Math.max(...xs) / 1000)}k`;
  return [
    {
      id: "replay",
      benchmark: `replay: analytics over ${opts.total} records`,
      measured: `${Math.round(rate)} records/s (median of ${trials}: ${spread(rates)}; process start included)`,
      baseline: `ConsumerPerformance ${Math.round(javaRate)} records/s (median of ${trials}: ${spread(javaRates)})`,
      value: rate,
      baselineValue: javaRate,
      ratio: rate / javaRate,
      unit: "records/s",
      trials: rates.map((r, i) => ({
        rate: r,
        javaRate: javaRates[i] as number,
        bareRate: bareRates[i] as number,
      })),
    },
    {
      id: "replay-bare",
      benchmark: `replay: analytics vs a bare kafkajs consumer`,
      measured: `${Math.round(rate)} records/s`,
      baseline: `bare kafkajs + JSON.parse ${Math.round(bareRate)} records/s (median of ${trials}: ${spread(bareRates)}; process start included)`,
      value: rate,
      baselineValue: bareRate,
      ratio: rate / bareRate,
      unit: "records/s",
    },
    {
      id: "memory-analytics",
      benchmark: "memory: analytics peak RSS during replay",
      measured: `${peak} MB (highest of ${trials} replays of ${opts.total.toLocaleString("en")} records)`,
      baseline: "goal 300 MB",
      value: peak,
      baselineValue: 300,
      ratio: peak / 300,
      unit: "MB",
    },
  ];
}
