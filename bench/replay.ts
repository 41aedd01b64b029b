import { spawn } from "node:child_process";
import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import { ensureTopics } from "@shop/kafka";
import { Kafka, logLevel } from "kafkajs";
import { ferramentaKafka } from "../infra/kafka/kafka.ts";
import { analyticsCli, testPrefix } from "../test/helpers/shop.ts";
import { type Row, rssMb } from "./intake.ts";

/** Writes `total` valid records, half creations and half results, with kafkajs in big batches. */
async function fill(brokers: string, prefix: string, total: number, log: (l: string) => void) {
  const nomes = kafkaNames(prefix);
  const kafka = new Kafka({ brokers: [brokers], logLevel: logLevel.ERROR });
  await ensureTopics(kafka, pedidoTopics(nomes), REPLICATION_FACTOR);
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
          topic: nomes.topics.pedidosCriados,
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
          topic: nomes.topics.pagamentosResultados,
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
  return nomes;
}

function consumerPerformance(brokers: string, topic: string, messages: number): number {
  const started = Date.now();
  const r = ferramentaKafka("org.apache.kafka.tools.ConsumerPerformance", [
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

/** Benchmark 3: analytics rebuilds its view from offset 0 over `total` records. */
export async function benchReplay(opts: {
  total: number;
  brokers: string;
  log: (l: string) => void;
}): Promise<Row[]> {
  const prefix = testPrefix("replay");
  const nomes = await fill(opts.brokers, prefix, opts.total, opts.log);

  opts.log(`replay: ConsumerPerformance over both topics (${opts.total} records)...`);
  const javaMs =
    consumerPerformance(opts.brokers, nomes.topics.pedidosCriados, opts.total / 2) +
    consumerPerformance(opts.brokers, nomes.topics.pagamentosResultados, opts.total / 2);

  opts.log("replay: the analytics CLI from offset 0...");
  const started = Date.now();
  const cli = analyticsCli(opts.brokers, prefix, "bench-replay");
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
  const painel = JSON.parse(out) as { registrosLidos: number };
  const rate = (painel.registrosLidos / ms) * 1000;
  const javaRate = (opts.total / javaMs) * 1000;
  return [
    {
      id: "replay",
      benchmark: `replay: analytics over ${opts.total} records`,
      measured: `${Math.round(rate)} records/s (${(ms / 1000).toFixed(1)} s, process start included)`,
      baseline: `ConsumerPerformance ${Math.round(javaRate)} records/s`,
      value: rate,
      baselineValue: javaRate,
      ratio: rate / javaRate,
      unit: "records/s",
    },
    {
      id: "memory-analytics",
      benchmark: "memory: analytics peak RSS during replay",
      measured: `${peak} MB`,
      baseline: "goal 250 MB",
      value: peak,
      baselineValue: 250,
      ratio: peak / 250,
      unit: "MB",
    },
  ];
}
