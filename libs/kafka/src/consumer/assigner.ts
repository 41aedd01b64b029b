import { withTimeLimit } from "@shop/service";
import { AssignerProtocol, type PartitionAssigner } from "kafkajs";

/** One partition of a subscribed topic and the records waiting on it for the group. */
export interface WaitingPartition {
  topic: string;
  partition: number;
  /** Records past the group's committed offset (0 when unknown). */
  waiting: number;
}

/**
 * Who reads which partition after a rebalance: the partitions with the most records waiting
 * first, each to the member with the least waiting so far (fewest partitions on a tie, then
 * the first by member id). Every member gets one before any gets a second, so no member
 * holds two partitions while another holds none. With nothing waiting it is kafkajs's round
 * robin: 0, 1, 2 to A, B, A.
 *
 * Why (issue 55): a payments instance paused past its session comes back to a group where
 * its two old partitions hold the backlog. kafkajs's round robin sorts members by id and gave
 * it both of them again, while the other instance, holding the third and caught up, idled:
 * 27 orders waiting drained at one instance's pace, 9.4-10.7 s against an 11.1 s bound.
 */
export function assignByBacklog(
  memberIds: string[],
  partitions: WaitingPartition[],
): Map<string, Map<string, number[]>> {
  const members = [...memberIds].sort().map((id) => ({ id, waiting: 0, count: 0 }));
  const plan = new Map(members.map((m) => [m.id, new Map<string, number[]>()]));
  const byWaiting = [...partitions].sort(
    (a, b) =>
      b.waiting - a.waiting ||
      (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0) ||
      a.partition - b.partition,
  );
  // Who takes the next partition: one with none yet, then the least waiting, then the fewest.
  const rank = (m: (typeof members)[number]) => [m.count > 0 ? 1 : 0, m.waiting, m.count];
  const before = (a: number[], b: number[]) => {
    const i = a.findIndex((x, j) => x !== b[j]);
    return i >= 0 && (a[i] as number) < (b[i] as number);
  };
  for (const p of byWaiting) {
    const [first, ...rest] = members;
    if (!first) break;
    const least = rest.reduce((best, m) => (before(rank(m), rank(best)) ? m : best), first);
    least.waiting += p.waiting;
    least.count += 1;
    const topics = plan.get(least.id) as Map<string, number[]>;
    topics.set(p.topic, [...(topics.get(p.topic) ?? []), p.partition]);
  }
  return plan;
}

/** How long the group's leader looks for the backlog before it assigns without it. */
const BACKLOG_READ_LIMIT_MS = 1_000;

/**
 * kafkajs's assigner for the shop's groups (consumerConfig): assignByBacklog with each
 * partition's records waiting, read by the group's leader from Kafka (the log's end and the
 * group's committed offset) as it assigns. When they cannot be read within a second (a
 * coordinator moving, say), it assigns as if nothing waited.
 */
export const backlogAssigner: PartitionAssigner = ({ groupId, cluster }) => ({
  name: "BacklogFirst",
  version: 0,
  async assign({ members, topics }) {
    const partitions = topics.flatMap((topic) =>
      cluster
        .findTopicPartitionMetadata(topic)
        .map((m) => ({ topic, partition: m.partitionId, waiting: 0 })),
    );
    const waiting = await withTimeLimit(
      waitingOn(cluster, groupId, topics, partitions),
      BACKLOG_READ_LIMIT_MS,
      () => new Error("backlog not read in time"),
    ).catch(() => new Map<string, number>());
    const plan = assignByBacklog(
      members.map((m) => m.memberId),
      partitions.map((p) => ({ ...p, waiting: waiting.get(`${p.topic}:${p.partition}`) ?? 0 })),
    );
    return [...plan].map(([memberId, assignment]) => ({
      memberId,
      memberAssignment: AssignerProtocol.MemberAssignment.encode({
        version: 0,
        assignment: Object.fromEntries(assignment),
        userData: Buffer.alloc(0),
      }),
    }));
  },
  protocol: ({ topics }) => ({
    name: "BacklogFirst",
    metadata: AssignerProtocol.MemberMetadata.encode({
      version: 0,
      topics,
      userData: Buffer.alloc(0),
    }),
  }),
});

type Cluster = Parameters<PartitionAssigner>[0]["cluster"];

/** "topic:partition" → records past the group's committed offset (all of them without one). */
async function waitingOn(
  cluster: Cluster,
  groupId: string,
  topics: string[],
  partitions: WaitingPartition[],
): Promise<Map<string, number>> {
  const asked = topics.map((topic) => ({
    topic,
    partitions: partitions
      .filter((p) => p.topic === topic)
      .map((p) => ({ partition: p.partition })),
  }));
  // kafkajs's Cluster has these; its types name only the assigner's part of it.
  const c = cluster as unknown as KafkajsCluster;
  const coordinator = await c.findGroupCoordinator({ groupId });
  const [ends, committed] = await Promise.all([
    c.fetchTopicsOffset(asked),
    coordinator.offsetFetch({ groupId, topics: asked }),
  ]);
  const done = new Map<string, number>();
  for (const t of committed.responses)
    for (const p of t.partitions) done.set(`${t.topic}:${p.partition}`, Number(p.offset));
  const waiting = new Map<string, number>();
  for (const t of ends)
    for (const p of t.partitions) {
      const key = `${t.topic}:${p.partition}`;
      waiting.set(key, Math.max(0, Number(p.offset) - Math.max(0, done.get(key) ?? 0)));
    }
  return waiting;
}

interface KafkajsCluster {
  findGroupCoordinator(o: { groupId: string }): Promise<{
    offsetFetch(o: {
      groupId: string;
      topics: { topic: string; partitions: { partition: number }[] }[];
    }): Promise<{
      responses: { topic: string; partitions: { partition: number; offset: string }[] }[];
    }>;
  }>;
  fetchTopicsOffset(
    topics: { topic: string; partitions: { partition: number }[] }[],
  ): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]>;
}
