import { describe, expect, it } from "vitest";
import { placeRecords } from "../../src/publisher/placement.ts";
import { countPerTopic } from "../../src/publisher/time-limit.ts";

describe("the publisher's placement of a batch", () => {
  it("When records share a key, then they share a partition, each one position further; the order given is kept", async () => {
    const records = [
      { topic: "a", key: "1", value: "x" },
      { topic: "b", key: "1", value: "y" },
      { topic: "a", key: "1", value: "z" },
      { topic: "a", key: "2", value: "w" },
    ];
    const { inOrder, perTopic } = await placeRecords(records, async () => 3);
    expect(inOrder.map((p) => p.r)).toEqual(records);
    const [first, , third] = inOrder;
    expect(third?.partition).toBe(first?.partition);
    expect([first?.pos, third?.pos]).toEqual([0, 1]);
    expect(perTopic.get("a")?.map((p) => p.r.value)).toEqual(["x", "z", "w"]);
    expect(perTopic.get("b")?.map((p) => p.pos)).toEqual([0]);
    for (const p of inOrder) expect(p.partition).toBeLessThan(3);
  });

  it("When a batch spans topics, then the metrics count it per topic", () => {
    const counts = countPerTopic([
      { topic: "a", key: "1", value: "" },
      { topic: "a", key: "2", value: "" },
      { topic: "b", key: "3", value: "" },
    ]);
    expect([...counts]).toEqual([
      ["a", 2],
      ["b", 1],
    ]);
  });
});
