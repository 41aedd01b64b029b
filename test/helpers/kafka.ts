import { randomBytes } from "node:crypto";
import { PedidoCriado, pedidoKey } from "@shop/contracts";
import type { OutgoingRecord } from "@shop/kafka";
import { type Consumer, type EachMessagePayload, Kafka, logLevel, Partitioners } from "kafkajs";
import { testConfig } from "./env.ts";
import { waitFor } from "./wait.ts";

/** A name no other test uses: topics and groups are isolated by name, never faked. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

/** The partition kafkajs's default partitioner (murmur2, the Java client's) gives a key. */
export function kafkajsPartition(key: Buffer | string, numPartitions = 3): number {
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: numPartitions }, (_, partitionId) => ({
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    partitionErrorCode: 0,
  }));
  return partitioner({ topic: "t", partitionMetadata, message: { key, value: null } });
}

export function testKafka(clientId = uniqueName("test")): Kafka {
  return new Kafka({ clientId, brokers: testConfig().kafka.brokers, logLevel: logLevel.ERROR });
}

export async function createTopic(kafka: Kafka, topic: string, numPartitions = 3): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions, replicationFactor: 1 }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
}

/** Resolves when the consumer has joined its group and holds partitions. */
export function waitForConsumerToJoinGroup(consumer: Consumer, timeoutMs = 30_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      remove();
      reject(new Error(`consumer did not join its group within ${timeoutMs} ms`));
    }, timeoutMs);
    const remove = consumer.on(consumer.events.GROUP_JOIN, () => {
      clearTimeout(timer);
      remove();
      resolve();
    });
  });
}

/** Runs the consumer and collects messages until `count` have arrived. */
export async function collectMessages(
  consumer: Consumer,
  count: number,
  timeoutMs = 30_000,
): Promise<EachMessagePayload[]> {
  const received: EachMessagePayload[] = [];
  await consumer.run({
    eachMessage: async (payload) => {
      received.push(payload);
    },
  });
  await waitFor(() => received.length >= count, { timeoutMs, what: `${count} messages` });
  return received;
}

export interface KafkaRecord {
  partition: number;
  offset: number;
  key: string | null;
  value: Record<string, unknown>;
}

/** A kafkajs client of the given brokers, quiet, for tests' own admin work. */
export function clientOf(brokers: string) {
  return new Kafka({
    clientId: `faults-${randomBytes(3).toString("hex")}`,
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
  });
}

/**
 * Every record of a topic now, read from offset 0 to its end by a group of its own: those
 * of committed transactions only (read_committed, what the shop's consumers see), or with
 * `readUncommitted` every record written, aborted transactions' too.
 */
export async function readTopic(
  brokers: string,
  topic: string,
  { readUncommitted = false } = {},
): Promise<KafkaRecord[]> {
  const kafka = clientOf(brokers);
  const a = kafka.admin();
  await a.connect();
  const ends = await a.fetchTopicOffsets(topic).finally(() => a.disconnect());
  const want = new Map(ends.map((e) => [e.partition, Number(e.high)]));
  const records: KafkaRecord[] = [];
  if ([...want.values()].every((h) => h === 0)) return records;
  const groupId = `faults-reader-${randomBytes(4).toString("hex")}`;
  const consumer = kafka.consumer({ groupId, readUncommitted });
  // How far the reader got in each partition: past its last record, or, where only a
  // transaction's commit or abort marker follows (never handed over as a record), as far as
  // the group's committed offset says.
  const seen = new Map<number, number>();
  let read = new Map<number, number>();
  const behind = () =>
    [...want].filter(([p, high]) => Math.max(seen.get(p) ?? 0, read.get(p) ?? 0) < high);
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      // Committed after each batch, even one of nothing but markers.
      autoCommitThreshold: 1,
      eachMessage: async ({ partition, message }) => {
        const offset = Number(message.offset);
        if (offset >= (want.get(partition) ?? 0)) return;
        records.push({
          partition,
          offset,
          key: message.key?.toString() ?? null,
          value: JSON.parse(message.value?.toString() ?? "null") as Record<string, unknown>,
        });
        seen.set(partition, offset + 1);
      },
    });
    await waitFor(
      async () => {
        if (behind().length === 0) return true;
        read = await committedOffsets(brokers, groupId, topic);
        return behind().length === 0;
      },
      {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: `${topic} read to its end (behind: ${JSON.stringify(behind())})`,
      },
    );
  } finally {
    await consumer.disconnect();
  }
  return records;
}

/** A group's committed offset of each partition of a topic (the next record it will read). */
export async function committedOffsets(
  brokers: string,
  groupId: string,
  topic: string,
): Promise<Map<number, number>> {
  const a = clientOf(brokers).admin();
  await a.connect();
  try {
    const [t] = await a.fetchOffsets({ groupId, topics: [topic] });
    return new Map(t?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
  } finally {
    await a.disconnect();
  }
}

/** The end offset (high watermark) of each partition of a topic now. */
export async function endOffsets(brokers: string, topic: string): Promise<Map<number, number>> {
  const a = clientOf(brokers).admin();
  await a.connect();
  try {
    return new Map((await a.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
  } finally {
    await a.disconnect();
  }
}

/**
 * `total` PedidoCriado records for orders 1..total, keyed by pedidoId, as the orders API
 * writes them; `valorOf(i)` gives each order's value (2.00 by default).
 */
export function pedidoCriadoRecords(
  topic: string,
  total: number,
  valorOf: (i: number) => number = () => 2,
): OutgoingRecord[] {
  return Array.from({ length: total }, (_, i) => ({
    topic,
    key: pedidoKey(i + 1),
    value: PedidoCriado.encode({
      versao: 1,
      pedidoId: i + 1,
      cliente: "Rui",
      item: "lápis",
      quantidade: 1,
      valor: valorOf(i),
      criadoEm: new Date().toISOString(),
    }),
  }));
}
