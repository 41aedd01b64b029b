import type { IHeaders, Kafka, KafkaMessage } from "kafkajs";

/** One record as a reader of the whole topic got it. */
export interface ReadRecord {
  topic: string;
  partition: number;
  message: KafkaMessage;
}

/**
 * Every record of `topics` (those that exist) from their start to the end offsets seen
 * when called, read by a consumer group of its own (`<group>-<pid>-<time>`, deleted after):
 * what the dead-letter CLI lists and the platform panel shows of a dead-letter topic.
 */
export async function readToEnd(
  kafka: Kafka,
  topics: string[],
  group: string,
): Promise<ReadRecord[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const present = topics.filter((t) => existing.has(t));
    const missing = new Map<string, number>(); // "topic:partition" -> end offset still to reach
    for (const topic of present) {
      for (const p of await admin.fetchTopicOffsets(topic)) {
        if (Number(p.high) > Number(p.low)) missing.set(`${topic}:${p.partition}`, Number(p.high));
      }
    }
    if (missing.size === 0) return [];
    const readerGroup = `${group}-${process.pid}-${Date.now()}`;
    const consumer = kafka.consumer({ groupId: readerGroup });
    const records: ReadRecord[] = [];
    // The next offset not yet taken, per "topic:partition": a record handed over again (the
    // reader group rebalanced before its commit) is the same record, taken once.
    const next = new Map<string, number>();
    await consumer.connect();
    try {
      await consumer.subscribe({ topics: present, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        consumer
          .run({
            eachMessage: async ({ topic, partition, message }) => {
              const key = `${topic}:${partition}`;
              const end = missing.get(key);
              const offset = Number(message.offset);
              if (end === undefined || offset >= end || offset < (next.get(key) ?? 0)) return;
              next.set(key, offset + 1);
              records.push({ topic, partition, message });
              if (offset + 1 >= end) missing.delete(key);
              if (missing.size === 0) resolve();
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
      await admin.deleteGroups([readerGroup]).catch(() => {});
    }
    return records;
  } finally {
    await admin.disconnect();
  }
}

/** A header of a record as text ("" when absent). */
export const headerText = (h: IHeaders | undefined, name: string) => h?.[name]?.toString() ?? "";
