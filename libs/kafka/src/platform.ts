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
 * Who reads the shop's topics: the spec's groups (`known`), and every other group named
 * with `prefix` that has a committed offset on one of them, such as an analytics replay in
 * `auditoria` (one OffsetFetch per such group).
 */
export async function readersOf(
  admin: Admin,
  known: Record<string, string[]>,
  prefix: string,
): Promise<Record<string, string[]>> {
  const topics = Object.keys(known);
  const readers = Object.fromEntries(topics.map((t) => [t, [...(known[t] ?? [])]]));
  const taken = new Set(Object.values(known).flat());
  const { groups } = await admin.listGroups();
  const others = groups
    .map((g) => g.groupId)
    .filter((g) => g.startsWith(prefix) && !taken.has(g))
    .sort();
  for (const groupId of others) {
    for (const t of await admin.fetchOffsets({ groupId, topics })) {
      if (t.partitions.some((p) => Number(p.offset) >= 0)) readers[t.topic]?.push(groupId);
    }
  }
  return readers;
}

/** Each dead-letter topic that exists, with its letters: records from its start to its end. */
export async function deadLetterCounts(
  admin: Admin,
  dlqByOrigin: Record<string, string>,
): Promise<NonNullable<Plataforma["mortas"]>> {
  const existing = new Set(await admin.listTopics());
  const out: NonNullable<Plataforma["mortas"]> = [];
  for (const [origem, topic] of Object.entries(dlqByOrigin)) {
    if (!existing.has(topic)) continue;
    const offsets = await admin.fetchTopicOffsets(topic);
    const cartas = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
    out.push({ topic, origem, cartas });
  }
  return out;
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
