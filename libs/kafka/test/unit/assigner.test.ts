import { describe, expect, it } from "vitest";
import { assignByBacklog, type WaitingPartition } from "../../src/consumer/assigner.ts";

const topic = "pedidos-criados";
const waiting = (...counts: number[]): WaitingPartition[] =>
  counts.map((w, partition) => ({ topic, partition, waiting: w }));
/** member → its partitions of the topic, as a plain object. */
const plain = (plan: Map<string, Map<string, number[]>>) =>
  Object.fromEntries([...plan].map(([m, t]) => [m, t.get(topic) ?? []]));

describe("Issue 55: the partitions with the most waiting go to different members (consumer/assigner.ts)", () => {
  it("When nothing waits, then it assigns as kafkajs's round robin does: 0, 1, 2 to A, B, A", () => {
    expect(plain(assignByBacklog(["caixa-2-b", "caixa-1-a"], waiting(0, 0, 0)))).toEqual({
      "caixa-1-a": [0, 2],
      "caixa-2-b": [1],
    });
  });

  it("When a paused member comes back and its two old partitions hold the backlog, then each member gets one of them (round robin gave it both)", () => {
    // caixa-1 sorts first: round robin hands it 0 and 2 again, the two with 11 waiting.
    expect(plain(assignByBacklog(["caixa-1-x", "caixa-2-y"], waiting(11, 0, 11)))).toEqual({
      "caixa-1-x": [0, 1],
      "caixa-2-y": [2],
    });
  });

  it("Rule E9: when there are more members than partitions, then each partition has one member and the extra members none", () => {
    const plan = plain(assignByBacklog(["a", "b", "c", "d"], waiting(5, 0, 3)));
    expect(Object.values(plan).flat().sort()).toEqual([0, 1, 2]);
    expect(Object.values(plan).filter((ps) => ps.length === 0)).toHaveLength(1);
    expect(Object.values(plan).every((ps) => ps.length <= 1)).toBe(true);
  });

  it("When one partition holds most of the backlog, then its member takes no other while the rest share the others", () => {
    const plan = plain(assignByBacklog(["a", "b"], waiting(1, 30, 2, 1)));
    expect(plan).toEqual({ a: [1], b: [2, 0, 3] });
  });

  it("When the group reads two topics, then every partition of both is assigned once", () => {
    const partitions = [
      ...waiting(2, 0, 0),
      { topic: "outro", partition: 0, waiting: 4 },
      { topic: "outro", partition: 1, waiting: 0 },
    ];
    const plan = assignByBacklog(["a", "b"], partitions);
    const all = [...plan.values()].flatMap((t) =>
      [...t].flatMap(([name, ps]) => ps.map((p) => `${name}:${p}`)),
    );
    expect(all.sort()).toEqual(["outro:0", "outro:1", `${topic}:0`, `${topic}:1`, `${topic}:2`]);
    expect(plan.get("a")?.get("outro")).toEqual([0]);
    expect(plan.get("b")?.get(topic)).toContain(0);
  });
});
