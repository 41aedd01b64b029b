import { AssignerProtocol, type Kafka, type PartitionAssigner } from "kafkajs";
import { readGroupLag } from "../lag.ts";

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
  const ahead = (a: (typeof members)[number], b: (typeof members)[number]) =>
    Number(a.count > 0) - Number(b.count > 0) || a.waiting - b.waiting || a.count - b.count;
  for (const p of byWaiting) {
    const [first, ...rest] = members;
    if (!first) break;
    const least = rest.reduce((best, m) => (ahead(m, best) < 0 ? m : best), first);
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
 * partition's records waiting, read by the group's leader as it assigns: the group's lag,
 * as /metrics shows it (readGroupLag, lag.ts). When it cannot be read within a second (a
 * coordinator moving, say), it assigns as if nothing waited.
 */
export const backlogAssigner =
  (kafka: Kafka): PartitionAssigner =>
  ({ groupId, cluster }) => ({
    name: "BacklogFirst",
    version: 0,
    async assign({ members, topics }) {
      const lags = await readGroupLag(kafka, groupId, topics, BACKLOG_READ_LIMIT_MS).catch(
        () => [],
      );
      const waiting = new Map(
        lags.flatMap(({ topic, particoes }) =>
          particoes.map((p) => [`${topic}:${p.partition}`, Math.max(0, p.grupos[0]?.lag ?? 0)]),
        ),
      );
      const partitions = topics.flatMap((topic) =>
        cluster.findTopicPartitionMetadata(topic).map(({ partitionId: partition }) => ({
          topic,
          partition,
          waiting: waiting.get(`${topic}:${partition}`) ?? 0,
        })),
      );
      const plan = assignByBacklog(
        members.map((m) => m.memberId),
        partitions,
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
