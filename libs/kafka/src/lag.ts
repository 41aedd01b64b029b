import { gauge, withTimeLimit } from "@shop/service";
import type { Kafka } from "kafkajs";
import { groupsLag } from "./platform.ts";

interface LagSource {
  kafka: Kafka;
  groupId: string;
  topics: string[];
}

const sources = new Set<LagSource>();

/** How long one scrape waits for Kafka's lag figures: Prometheus gives up at 10 s. */
const LAG_READ_LIMIT_MS = 2_000;

gauge(
  "shop_consumer_lag",
  "records not yet committed by the group, per partition (read from Kafka when scraped)",
  ["group", "topic", "partition"],
  async (g) => {
    g.reset();
    // Every group at once, each within the limit: with Kafka down, kafkajs would retry its
    // connection for half a minute and more, and /metrics would not answer meanwhile.
    await Promise.all(
      [...sources].map(async (f) => {
        try {
          const lags = await readGroupLag(f.kafka, f.groupId, f.topics, LAG_READ_LIMIT_MS);
          for (const { topic, particoes: partitions } of lags)
            for (const p of partitions)
              g.set(
                { group: f.groupId, topic, partition: String(p.partition) },
                Math.max(0, p.grupos[0]?.lag ?? 0),
              );
        } catch {
          // Kafka unreachable or slow: no lag figures this scrape rather than a failed /metrics
        }
      }),
    );
  },
);

/**
 * One group's lag on its topics (groupsLag: the end offset less the committed one, from the
 * partition's start when none), read by an admin client of its own within `limitMs`, and
 * disconnected after whatever happens: with Kafka down, kafkajs would retry its connection
 * for half a minute and more. What /metrics shows and what the backlog assigner deals by
 * (consumer/assigner.ts).
 */
export async function readGroupLag(
  kafka: Kafka,
  groupId: string,
  topics: string[],
  limitMs: number,
) {
  const admin = kafka.admin();
  const reading = (async () => {
    await admin.connect();
    return groupsLag(admin, Object.fromEntries(topics.map((t) => [t, [groupId]])));
  })();
  reading.finally(() => admin.disconnect().catch(() => {})).catch(() => {});
  return withTimeLimit(reading, limitMs, () => new Error("lag not read in time"));
}

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
