import type { Logger } from "@shop/service";
import { Kafka, type LogEntry, logLevel } from "kafkajs";

/** A kafkajs client whose own log lines go through our logger, warnings and errors only. */
export function createKafka(brokers: string[], clientId: string, log: Logger): Kafka {
  return new Kafka({
    clientId,
    brokers,
    connectionTimeout: 1000,
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const { message, broker, error, groupId } = entry as {
          message: string;
          broker?: string;
          error?: string;
          groupId?: string;
        };
        const fields = Object.fromEntries(
          Object.entries({ broker, error, groupId }).filter(([, v]) => v !== undefined),
        );
        (level <= logLevel.ERROR ? log.error : log.warn)(`kafkajs: ${message}`, fields);
      },
  });
}

export interface TopicSpec {
  topic: string;
  numPartitions: number;
}

/**
 * Runs fn again while it fails with an error Kafka marks retriable (a broker that has just
 * started may not host its partitions yet), for up to `ms`.
 */
export async function comRetentativas<T>(fn: () => Promise<T>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const retriable = (error as { retriable?: boolean }).retriable === true;
      if (!retriable || Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** Creates the topics when absent; does nothing for those that exist. */
export function ensureTopics(
  kafka: Kafka,
  topics: TopicSpec[],
  replicationFactor: number,
): Promise<string[]> {
  return comRetentativas(() => createMissing(kafka, topics, replicationFactor));
}

async function createMissing(
  kafka: Kafka,
  topics: TopicSpec[],
  replicationFactor: number,
): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({ ...t, replicationFactor })),
      });
    }
    return missing.map((t) => t.topic);
  } finally {
    await admin.disconnect();
  }
}
