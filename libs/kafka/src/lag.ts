import { gauge } from "@shop/service";
import type { Kafka } from "kafkajs";
import { groupsLag } from "./platform.ts";

interface Fonte {
  kafka: Kafka;
  groupId: string;
  topics: string[];
}

const fontes = new Set<Fonte>();

gauge(
  "shop_consumer_lag",
  "records not yet committed by the group, per partition (read from Kafka when scraped)",
  ["group", "topic", "partition"],
  async (g) => {
    g.reset();
    for (const f of fontes) {
      const admin = f.kafka.admin();
      try {
        await admin.connect();
        const leitores = Object.fromEntries(f.topics.map((t) => [t, [f.groupId]]));
        for (const { topic, particoes } of await groupsLag(admin, leitores))
          for (const p of particoes)
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
  fontes.add(f);
  return () => fontes.delete(f);
}

const presasPorGrupo = new Map<string, () => number>();

gauge(
  "shop_consumer_stuck_partitions",
  "partitions whose current record keeps failing and is being tried again with backoff",
  ["group"],
  (g) => {
    g.reset();
    for (const [group, contar] of presasPorGrupo) g.set({ group }, contar());
  },
);

/** Reports this consumer's stuck partitions on /metrics until the returned function is called. */
export function countStuck(groupId: string, contar: () => number): () => void {
  presasPorGrupo.set(groupId, contar);
  return () => presasPorGrupo.delete(groupId);
}
