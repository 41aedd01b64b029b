import { PedidoCriado, pedidoKey } from "@shop/contracts";
import { createTopicsWaiting, describePlatform, type OutgoingRecord } from "@shop/kafka";
import { type Consumer, type EachMessagePayload, Kafka, logLevel } from "kafkajs";
import { shopConfig, uniqueName } from "../../harness/env.ts";
import { withAdmin } from "../../harness/kafka.ts";
import { waitFor } from "./wait.ts";

export function testKafka(clientId = uniqueName("test")): Kafka {
  return new Kafka({ clientId, brokers: shopConfig().kafka.brokers, logLevel: logLevel.ERROR });
}

/**
 * Kafka's own view of a consumer group of `topic`: its state and each member's partitions
 * of it, by the member's client id less a service's prefix (`payments-caixa-1`: caixa-1).
 */
export function groupInKafka(
  topic: string,
  groupId: string,
): Promise<{ estado: string; membros: Map<string, number[]> }> {
  return withAdmin(shopConfig().kafka.brokers.join(","), async (admin) => {
    const [grupo] = (await describePlatform(admin, { [topic]: [groupId] })).grupos;
    return {
      estado: grupo?.estado ?? "",
      membros: new Map(
        (grupo?.membros ?? []).map((m) => [
          m.clientId.replace(/^payments-/, ""),
          m.particoes[topic] ?? [],
        ]),
      ),
    };
  });
}

export async function createTopic(kafka: Kafka, topic: string, numPartitions = 3): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsWaiting(admin, [{ topic, numPartitions, replicationFactor: 1 }]);
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
} from "../../harness/kafka.ts";

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
