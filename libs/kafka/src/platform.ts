import type { Plataforma } from "@shop/contracts";
import { type Admin, AssignerProtocol } from "kafkajs";

/**
 * Per topic and partition: its leader, replicas and in-sync replicas, the end offset and, for each group that reads the topic, its
 * committed offset (null: none yet) and lag (from the partition's start when none).
 */
export async function groupsLag(
  admin: Admin,
  readersByTopic: Record<string, string[]>,
): Promise<Plataforma["topicos"]> {
  const topics = Object.keys(readersByTopic);
  const groups = [...new Set(Object.values(readersByTopic).flat())];
  const ends = new Map<string, { partition: number; high: number; low: number }[]>();
  const placement = new Map<string, { leader: number; replicas: number[]; isr: number[] }>();
  for (const t of (await admin.fetchTopicMetadata({ topics })).topics) {
    for (const p of t.partitions) {
      const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
      placement.set(`${t.name}|${p.partitionId}`, {
        leader: p.leader,
        replicas: sorted(p.replicas),
        isr: sorted(p.isr),
      });
    }
  }
  for (const topic of topics) {
    const offsets = await admin.fetchTopicOffsets(topic);
    ends.set(
      topic,
      offsets
        .map((o) => ({ partition: o.partition, high: Number(o.high), low: Number(o.low) }))
        .sort((a, b) => a.partition - b.partition),
    );
  }
  const committed = new Map<string, number | null>(); // group|topic|partition
  for (const grupo of groups) {
    for (const t of await admin.fetchOffsets({ groupId: grupo, topics })) {
      for (const p of t.partitions) {
        committed.set(
          `${grupo}|${t.topic}|${p.partition}`,
          Number(p.offset) >= 0 ? Number(p.offset) : null,
        );
      }
    }
  }
  return topics.map((topic) => ({
    topic,
    particoes: (ends.get(topic) ?? []).map(({ partition, high, low }) => ({
      partition,
      endOffset: high,
      ...(placement.get(`${topic}|${partition}`) ?? { leader: -1, replicas: [], isr: [] }),
      grupos: (readersByTopic[topic] ?? []).map((grupo) => {
        const c = committed.get(`${grupo}|${topic}|${partition}`) ?? null;
        return { grupo, committedOffset: c, lag: high - (c ?? low) };
      }),
    })),
  }));
}

/**
 * A read-only picture of the platform from Kafka's admin API: per partition the end
 * offset and, for each group that reads the topic, its committed offset and lag; per group
 * its members and the partitions each holds.
 */
export async function describePlatform(
  admin: Admin,
  readersByTopic: Record<string, string[]>,
): Promise<Plataforma> {
  const groups = [...new Set(Object.values(readersByTopic).flat())];
  const topics = await groupsLag(admin, readersByTopic);
  const described = await admin.describeGroups(groups);
  const cluster = await admin.describeCluster();
  return {
    cluster: {
      brokers: cluster.brokers
        .map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port }))
        .sort((a, b) => a.nodeId - b.nodeId),
      controller: cluster.controller,
    },
    topicos: topics,
    grupos: described.groups.map((g) => ({
      grupo: g.groupId,
      estado: g.state,
      membros: g.members
        .map((m) => {
          const assignment = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
          const particoes = Object.fromEntries(
            Object.entries(assignment?.assignment ?? {}).map(([t, ps]) => [
              t,
              [...ps].sort((a, b) => a - b),
            ]),
          );
          return { memberId: m.memberId, clientId: m.clientId, host: m.clientHost, particoes };
        })
        .sort((a, b) => a.clientId.localeCompare(b.clientId)),
    })),
    lidoEm: new Date().toISOString(),
  };
}
