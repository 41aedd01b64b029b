import { Kafka, logLevel } from "kafkajs";
import { uniquePrefix } from "../harness/env.ts";
import { deleteTopics, percentile } from "./stats.ts";

/**
 * Kafka's own two-hop latency, the baseline of the pipeline's latency at a steady rate:
 * bare kafkajs, no service around it. A producer sends `perSecond` records a second to a
 * first topic (acks=all); a consumer reads each and produces it on to a second topic
 * (acks=all), as payments does; a second consumer reads it there, as the orders API does.
 * The latency is from the first send to the second read, in this one process's clock.
 * Both topics have the shop's three partitions; the consumers run with kafkajs's defaults.
 */
export async function kafkaTwoHop(opts: {
  brokers: string;
  perSecond: number;
  seconds: number;
  /** Records first sent at the same pace and not counted: connections and JIT warm up. */
  warmup: number;
  log: (l: string) => void;
}): Promise<{ n: number; p50: number; p99: number }> {
  const prefix = uniquePrefix("two-hop");
  const first = `${prefix}primeiro`;
  const second = `${prefix}segundo`;
  const kafka = new Kafka({
    clientId: "two-hop",
    brokers: opts.brokers.split(","),
    logLevel: logLevel.ERROR,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [first, second].map((topic) => ({ topic, numPartitions: 3, replicationFactor: 1 })),
  });
  await admin.disconnect();

  const producer = kafka.producer();
  const relayProducer = kafka.producer();
  const relay = kafka.consumer({ groupId: `${prefix}relay` });
  const sink = kafka.consumer({ groupId: `${prefix}sink` });
  await Promise.all([producer, relayProducer, relay, sink].map((c) => c.connect()));
  await relay.subscribe({ topic: first, fromBeginning: true });
  await sink.subscribe({ topic: second, fromBeginning: true });

  const total = opts.warmup + opts.perSecond * opts.seconds;
  const sentAt = new Float64Array(total);
  const latencies: number[] = [];
  let received = 0;
  let allReceived: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allReceived = resolve;
  });
  // Both groups hold their partitions before the first record is sent.
  const joined = Promise.all(
    [relay, sink].map(
      (c) => new Promise<void>((resolve) => c.on(c.events.GROUP_JOIN, () => resolve())),
    ),
  );
  await relay.run({
    eachMessage: async ({ message }) => {
      await relayProducer.send({
        topic: second,
        acks: -1,
        messages: [{ key: message.key, value: message.value }],
      });
    },
  });
  await sink.run({
    eachMessage: async ({ message }) => {
      const i = Number(message.key?.toString());
      if (i >= opts.warmup) latencies.push(performance.now() - (sentAt[i] as number));
      if (++received === total) allReceived();
    },
  });
  await joined;

  opts.log(
    `latency: bare kafkajs two hops at ${opts.perSecond}/s for ${opts.seconds} s (after ${opts.warmup} of warm-up)...`,
  );
  const interval = 1000 / opts.perSecond;
  const start = performance.now();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + i * interval - performance.now();
    if (wait >= 1) await new Promise((r) => setTimeout(r, wait));
    sentAt[i] = performance.now();
    sends.push(
      producer.send({
        topic: first,
        acks: -1,
        messages: [{ key: String(i), value: JSON.stringify({ i, em: new Date().toISOString() }) }],
      }),
    );
  }
  await Promise.all(sends);
  const timeout = setTimeout(() => allReceived(), 60_000);
  await done;
  clearTimeout(timeout);
  await Promise.all([relay, sink, producer, relayProducer].map((c) => c.disconnect()));
  await deleteTopics(opts.brokers, prefix);
  if (received < total) throw new Error(`two hops: only ${received} of ${total} records arrived`);
  latencies.sort((a, b) => a - b);
  return {
    n: latencies.length,
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
  };
}
