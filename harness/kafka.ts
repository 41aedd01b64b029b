import { randomBytes } from "node:crypto";
import { waitFor } from "@shop/service";
import { type Admin, Kafka, logLevel, Partitioners } from "kafkajs";

/** What Kafka itself holds now: records, offsets, a group's members and their partitions. */

export interface KafkaRecord {
  partition: number;
  offset: number;
  key: string | null;
  value: Record<string, unknown>;
}

/** A kafkajs client of the given brokers, quiet, for tests' own admin work. */
export function clientOf(brokers: string) {
  return new Kafka({
    clientId: `lab-${randomBytes(3).toString("hex")}`,
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
  });
}

/**
 * Deletes the topics `doomed` picks among the broker's, and returns once the broker lists
 * none of them; returns how many it deleted. Kafka answers a deletion when its controller
 * has recorded it, and a busy broker may list the topics a moment longer (a CI run's replay
 * experiment ended with its four topics listed).
 */
export function deleteTopicsWhere(
  brokers: string,
  doomed: (topic: string) => boolean,
): Promise<number> {
  return withAdmin(brokers, async (admin) => {
    const topics = (await admin.listTopics()).filter(doomed);
    if (topics.length === 0) return 0;
    await admin.deleteTopics({ topics, timeout: 30_000 });
    await waitFor(
      async () => (await admin.listTopics()).filter((t) => topics.includes(t)).length === 0,
      {
        timeoutMs: 15_000,
        intervalMs: 200,
        what: `${topics.length} deleted topics gone from Kafka`,
      },
    );
    return topics.length;
  });
}

/** Runs `work` with an admin client of the brokers, connected, and disconnects it after. */
export async function withAdmin<T>(
  brokers: string,
  work: (admin: Admin) => Promise<T>,
): Promise<T> {
  const admin = clientOf(brokers).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
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
  const want = await endOffsets(brokers, topic);
  const records: KafkaRecord[] = [];
  if ([...want.values()].every((h) => h === 0)) return records;
  const groupId = `lab-reader-${randomBytes(4).toString("hex")}`;
  // A fetch with nothing new waits maxWaitTimeInMs on the broker, and the disconnect below
  // waits for the fetch in flight: at kafkajs's 5 s, every read of a topic ended 5 s after
  // its last record (each fault scenario's count of its state, each lab run's).
  const consumer = kafka.consumer({ groupId, readUncommitted, maxWaitTimeInMs: 100 });
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
        // A record is its position: one handed over again (the reader's own group rebalanced
        // before its commit, and it read from the committed offset again) is not a second
        // record. Without this, a test counting records written twice could count the
        // reader's repeat (exactly-once's "one result per order", red once in CI).
        if (offset < (seen.get(partition) ?? 0)) return;
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
  return withAdmin(brokers, async (a) => {
    const [t] = await a.fetchOffsets({ groupId, topics: [topic] });
    return new Map(t?.partitions.map((p) => [p.partition, Number(p.offset)]) ?? []);
  });
}

/** The end offset (high watermark) of each partition of a topic now. */
export async function endOffsets(brokers: string, topic: string): Promise<Map<number, number>> {
  return withAdmin(
    brokers,
    async (a) =>
      new Map((await a.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)])),
  );
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
