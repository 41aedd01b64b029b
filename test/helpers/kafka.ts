import { randomBytes } from "node:crypto";
import { PedidoCriado, pedidoKey } from "@shop/contracts";
import type { OutgoingRecord } from "@shop/kafka";
import { type Consumer, type EachMessagePayload, Kafka, logLevel } from "kafkajs";
import { testConfig } from "./env.ts";
import { waitFor } from "./wait.ts";

/** A name no other test uses: topics and groups are isolated by name, never faked. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
}

/** uniqueName's stamp: the time in base 36 and 8 hex digits, ending the name or a part of it. */
const STAMP = /-([0-9a-z]{8,10})-[0-9a-f]{8}(?:\.|$)/;

/**
 * Whether a topic's name holds a uniqueName made between `since` (ms since the epoch) and
 * now: a topic of a test of this run. The shop's own names (pedidos.criados, ...) never
 * match, nor a name whose letters only look like a stamp (it reads as a time to come).
 */
export function madeSince(topic: string, since: number): boolean {
  const stamp = STAMP.exec(topic)?.[1];
  if (stamp === undefined) return false;
  const made = Number.parseInt(stamp, 36);
  return made >= since && made <= Date.now();
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

export {
  clientOf,
  committedOffsets,
  deleteTopicsWhere,
  endOffsets,
  type KafkaRecord,
  kafkajsPartition,
  readTopic,
  withAdmin,
} from "../../lab/src/kafka.ts";

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
