import { describe, expect, it } from "vitest";
import {
  createTopic,
  testKafka,
  uniqueName,
  waitForConsumerToJoinGroup,
} from "../helpers/kafka.ts";
import { waitFor } from "../helpers/wait.ts";

describe("The real Kafka broker started by infra/", () => {
  it("When a 3-partition topic gets keyed records, then a group consumes them all, each key on one partition", async () => {
    const kafka = testKafka();
    const topic = uniqueName("harness");
    await createTopic(kafka, topic, 3);

    const admin = kafka.admin();
    await admin.connect();
    const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    expect(meta?.partitions).toHaveLength(3);
    await admin.disconnect();

    const producer = kafka.producer();
    await producer.connect();
    const messages = Array.from({ length: 30 }, (_, i) => ({
      key: String(i % 10),
      value: `v${i}`,
    }));
    await producer.send({ topic, acks: -1, messages });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: uniqueName("harness-group") });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const joined = waitForConsumerToJoinGroup(consumer);
    const seen: { key: string; value: string; partition: number }[] = [];
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ key: String(message.key), value: String(message.value), partition });
      },
    });
    await joined;
    await waitFor(() => seen.length === 30, { what: "30 records" });
    await consumer.disconnect();

    expect(seen.map((s) => s.value).sort()).toEqual(messages.map((m) => m.value).sort());
    const partitionsByKey = new Map<string, Set<number>>();
    for (const s of seen)
      partitionsByKey.set(s.key, (partitionsByKey.get(s.key) ?? new Set()).add(s.partition));
    for (const partitions of partitionsByKey.values()) expect(partitions.size).toBe(1);
    // Within a key, records arrive in write order.
    const forKey0 = seen.filter((s) => s.key === "0").map((s) => s.value);
    expect(forKey0).toEqual(["v0", "v10", "v20"]);
  });
});
