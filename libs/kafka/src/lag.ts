import { gauge } from "@shop/service";
import type { Kafka } from "kafkajs";
import { groupsLag } from "./platform.ts";

interface LagSource {
  kafka: Kafka;
  groupId: string;
  topics: string[];
}

const sources = new Set<LagSource>();

gauge(
  "shop_consumer_lag",
  "records not yet committed by the group, per partition (read from Kafka when scraped)",
  ["group", "topic", "partition"],
  async (g) => {
    g.reset();
    for (const f of sources) {
      const admin = f.kafka.admin();
      try {
        await admin.connect();
        const readers = Object.fromEntries(f.topics.map((t) => [t, [f.groupId]]));
        for (const { topic, particoes: partitions } of await groupsLag(admin, readers))
          for (const p of partitions)
            g.set(
              { group: f.groupId, topic, partition: String(p.partition) },
              Math.max(0, p.grupos[0]?.lag ?? 0),
            );
      } catch {
        // Kafka unreachable: no lag figures this scrape rather than a failed /metrics
      } finally {
        await admin.disconnect().catch(() => {});
      }
    }
  },
);

/** Reports this consumer group's lag on /metrics until the returned function is called. */
export function measureLag(kafka: Kafka, groupId: string, topics: string[]): () => void {
  const f = { kafka, groupId, topics };
  sources.add(f);
  return () => sources.delete(f);
}

const stuckByGroup = new Map<string, () => number>();

gauge(
  "shop_consumer_stuck_partitions",
  "partitions whose current record keeps failing and is being tried again with backoff",
  ["group"],
  (g) => {
    g.reset();
    for (const [group, count] of stuckByGroup) g.set({ group }, count());
  },
);

/** Reports this consumer's stuck partitions on /metrics until the returned function is called. */
export function countStuck(groupId: string, count: () => number): () => void {
  stuckByGroup.set(groupId, count);
  return () => stuckByGroup.delete(groupId);
}
