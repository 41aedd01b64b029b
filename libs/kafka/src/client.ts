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

/**
 * True when Kafka refused a request for good: somewhere in the error's chain (our
 * PublicacaoNaoConfirmada, kafkajs's retry wrapper) is a broker error kafkajs marks not
 * retriable, such as MESSAGE_TOO_LARGE or TOPIC_AUTHORIZATION_FAILED. Sending the same
 * bytes again would fail the same way. A broker that is down or slow is not this.
 */
export function recusadoDeVez(error: unknown): boolean {
  const vistos = new Set<unknown>();
  let atual: unknown = error;
  while (atual && typeof atual === "object" && !vistos.has(atual)) {
    vistos.add(atual);
    const e = atual as { name?: string; retriable?: boolean; cause?: unknown };
    if (e.name === "KafkaJSProtocolError" && e.retriable === false) return true;
    atual = e.cause;
  }
  return false;
}
