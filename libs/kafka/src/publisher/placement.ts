import type { Kafka, PartitionMetadata } from "kafkajs";
import { Partitioners } from "kafkajs";
import type { OutgoingRecord } from "./record.ts";

/**
 * Where each record of a batch goes. publishBatch picks each record's partition itself,
 * with kafkajs's own default partitioner (the Java client's murmur2), so that it knows
 * every record's offset: the broker answers with one base offset per partition, and a
 * record's offset is that base plus its position among the batch's records of that
 * partition.
 */

export interface Placed {
  r: OutgoingRecord;
  partition: number;
  /** Its position among the batch's records of its partition. */
  pos: number;
}

/** Each topic's partition count, read again every 30 s (a topic given more is seen). */
export function partitionCounts(kafka: Kafka) {
  const counts = new Map<string, { n: Promise<number>; at: number }>();
  return (topic: string): Promise<number> => {
    const c = counts.get(topic);
    if (c && Date.now() - c.at < 30_000) return c.n;
    const n = (async () => {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        return topics[0]?.partitions.length ?? 1;
      } finally {
        await admin.disconnect();
      }
    })();
    n.catch(() => counts.delete(topic));
    counts.set(topic, { n, at: Date.now() });
    return n;
  };
}

const partitioner = Partitioners.DefaultPartitioner();

/** The batch's records placed: in the order given, and grouped by topic for the send. */
export async function placeRecords(
  records: OutgoingRecord[],
  partitionsOf: (topic: string) => Promise<number>,
): Promise<{ inOrder: Placed[]; perTopic: Map<string, Placed[]> }> {
  // What the partitioner needs of each topic: its partitions (one topic per batch, often).
  const metadata = new Map<string, PartitionMetadata[]>();
  for (const topic of new Set(records.map((r) => r.topic))) {
    const n = await partitionsOf(topic);
    metadata.set(
      topic,
      Array.from({ length: n }, (_, i) => ({
        partitionErrorCode: 0,
        partitionId: i,
        leader: 0,
        replicas: [0],
        isr: [0],
      })),
    );
  }
  const perTopic = new Map<string, Placed[]>();
  const inOrder: Placed[] = [];
  const seen = new Map<string, number>(); // "topic:partition" -> records so far
  for (const r of records) {
    const partition = partitioner({
      topic: r.topic,
      partitionMetadata: metadata.get(r.topic) as PartitionMetadata[],
      message: { key: r.key, value: r.value },
    });
    const k = `${r.topic}:${partition}`;
    const pos = seen.get(k) ?? 0;
    seen.set(k, pos + 1);
    const placed = { r, partition, pos };
    inOrder.push(placed);
    const list = perTopic.get(r.topic);
    if (list) list.push(placed);
    else perTopic.set(r.topic, [placed]);
  }
  return { inOrder, perTopic };
}
