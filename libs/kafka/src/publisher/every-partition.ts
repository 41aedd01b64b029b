import type { Logger } from "@shop/service";
import type { Producer } from "kafkajs";
import type { Placed } from "./placement.ts";

/**
 * Sends placed records and returns each partition's base offset, sending again what
 * kafkajs did not write. kafkajs 2.2.4 can resolve a sendBatch without writing some of its
 * records: when one broker answers NOT_LEADER and another answered already, its retry sends
 * nothing to the broker that answered, even for the partitions that moved to it (the open
 * kafkajs pull request #1798). The fault suite's controller kill lost two acknowledged
 * PedidoCriado records that way. So every partition must be in the answer; the records of
 * those that are not are sent again, in a send of their own, up to 5 sends.
 */
export async function sendToEveryPartition(
  producer: Producer,
  perTopic: Map<string, Placed[]>,
  log?: Logger,
): Promise<Map<string, bigint>> {
  const base = new Map<string, bigint>();
  let pending = [...perTopic];
  for (let round = 1; pending.length > 0; round++) {
    const written = await producer.sendBatch({
      acks: -1,
      topicMessages: pending.map(([topic, items]) => ({
        topic,
        messages: items.map(({ r, partition }) => ({
          key: r.key,
          value: r.value,
          partition,
          ...(r.headers ? { headers: r.headers } : {}),
        })),
      })),
    });
    for (const m of written) base.set(`${m.topicName}:${m.partition}`, BigInt(m.baseOffset ?? "0"));
    pending = pending
      .map(([topic, items]): [string, Placed[]] => [
        topic,
        items.filter(({ partition }) => !base.has(`${topic}:${partition}`)),
      ])
      .filter(([, items]) => items.length > 0);
    if (pending.length === 0) break;
    const unanswered = pending.flatMap(([topic, items]) => [
      ...new Set(items.map((i) => `${topic}[${i.partition}]`)),
    ]);
    if (round >= 5)
      throw new Error(`Kafka never answered for ${unanswered.join(", ")} in ${round} sends`);
    log?.warn("kafkajs resolved a send without writing some partitions: sending them again", {
      partitions: unanswered.join(","),
    });
  }
  return base;
}
