import { ownKafkaCluster } from "../harness/own-kafka.ts";
import { ownRabbitCluster } from "../harness/own-rabbit.ts";
import { paths } from "../infra/kafka/kafka.ts";
import { benchIntake, type Ceiling, type Row, rssMb } from "./intake.ts";
import { benchPipeline } from "./pipeline.ts";
import { measureJit, pidsOf, RABBITMQ } from "./stats.ts";
import { warmKafka } from "./warm.ts";

/** The machine's own RabbitMQ: the Erlang VM that is none of the cluster's nodes. */
const machineRabbitPid = (clusterPids: number[]) =>
  pidsOf(RABBITMQ).find((p) => !clusterPids.includes(p)) ?? null;

/** A Kafka broker started by some checkout's infra with its default config. */
const DEFAULT_BROKER = /\0kafka\.Kafka\0.*\/infra\/kafka\/\.work\/server\.properties\0/;

/**
 * The single Kafka broker the run measured against: this checkout's, or else the one
 * another checkout's infra started (the bench reuses a broker that answers on the port,
 * whoever started it); null if none runs. The clusters' nodes have configs of their own.
 */
function singleKafkaPid(): number | null {
  const ours = paths("default").conf.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return (
    pidsOf(new RegExp(`\\0kafka\\.Kafka\\0${ours}\\0`))[0] ?? pidsOf(DEFAULT_BROKER)[0] ?? null
  );
}

const total = (pids: number[]) => pids.reduce((sum, p) => sum + rssMb(p), 0);

/**
 * Benchmark 5: the event-log edition on a Kafka cluster of three (replication 3,
 * min.insync.replicas 2, acks=all), as a ratio to the single broker's figures of the same
 * run, and what the six broker processes of the two clusters hold in memory against one
 * Kafka broker and one RabbitMQ node.
 */
export async function benchCluster(opts: {
  seconds: number;
  orders: number;
  ceiling: Ceiling;
  /** This run's single-broker figures: intake req/s and the pipeline's orders/s. */
  single: { intakeRps: number; pipelineRate: number };
  log: (l: string) => void;
}): Promise<Row[]> {
  const { log } = opts;
  log("cluster: starting three Kafka brokers and three RabbitMQ nodes of the benchmark's own...");
  const kafka = ownKafkaCluster("bench-cluster");
  const rabbit = await ownRabbitCluster("bench-rc");
  try {
    await kafka.start();
    await warmKafka("cluster", kafka.brokers, kafka.pids(), log);
    const jit = measureJit(kafka.pids());
    const intake = await benchIntake({
      seconds: opts.seconds,
      connections: 64,
      ceiling: opts.ceiling,
      brokers: kafka.brokers,
      // Issue 49: the intake's and the pipeline's CPU per order against their bare twins'
      // on the same cluster (their topics get the cluster's replication too).
      log,
    });
    const intakeRps = (intake[0] as Row).value;
    const [pipeline] = await benchPipeline({
      orders: opts.orders,
      steadySeconds: 0,
      intakeRps,
      brokers: kafka.brokers,
      log,
      burstOnly: true,
    });
    const pipelineRate = (pipeline as Row).value;
    // Shown beside the rows: the brokers were warm while measured.
    const jitText = `; JIT compilers ${Math.round(jit.share() * 100)}% of the brokers' CPU over both runs`;
    const kafkaMb = total(kafka.pids());
    const rabbitMb = total(rabbit.pids());
    const singleKafka = singleKafkaPid();
    const singleRabbit = machineRabbitPid(rabbit.pids());
    const singleMb =
      (singleKafka ? rssMb(singleKafka) : 0) + (singleRabbit ? rssMb(singleRabbit) : 0);
    const row = (
      id: string | undefined,
      benchmark: string,
      measured: string,
      baseline: string,
      value: number,
      baselineValue: number,
      unit: string,
      trials?: Record<string, number>[],
    ): Row => ({
      ...(id ? { id } : {}),
      benchmark,
      measured,
      baseline,
      value,
      baselineValue,
      ratio: value / Math.max(0.001, baselineValue),
      unit,
      ...(trials ? { trials } : {}),
    });
    return [
      row(
        "cluster-intake",
        "cluster: intake, replication 3 / min ISR 2",
        `${Math.round(intakeRps)} req/s, p99 ${(intake[0] as Row).extra?.p99} ms${jitText}`,
        `one broker ${Math.round(opts.single.intakeRps)} req/s`,
        intakeRps,
        opts.single.intakeRps,
        "req/s",
        (intake[0] as Row).trials,
      ),
      row(
        "cluster-pipeline",
        "cluster: pipeline, replication 3",
        `${(pipeline as Row).measured}${jitText}`,
        `one broker ${Math.round(opts.single.pipelineRate)} orders/s`,
        pipelineRate,
        opts.single.pipelineRate,
        "orders/s",
        (pipeline as Row).trials,
      ),
      row(
        undefined,
        "memory: the nine broker processes",
        `${kafkaMb + rabbitMb} MB (three Kafka brokers and three controllers ${kafkaMb} MB, three RabbitMQ ${rabbitMb} MB)`,
        `one Kafka broker${singleKafka ? "" : " (none found: not counted)"} and one RabbitMQ node${singleRabbit ? "" : " (none found: not counted)"} ${singleMb} MB`,
        kafkaMb + rabbitMb,
        singleMb,
        "MB",
      ),
    ];
  } finally {
    await kafka.dispose();
    await rabbit.dispose();
  }
}
