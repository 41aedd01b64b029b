import { randomBytes } from "node:crypto";
import { type Consumer, type EachMessagePayload, Kafka, logLevel } from "kafkajs";
import { testConfig } from "./env.ts";
import { waitFor } from "./wait.ts";

/** A name no other test uses: topics and groups are isolated by name, never faked. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
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
