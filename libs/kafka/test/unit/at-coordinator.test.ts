import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

/**
 * The kafkajs patch's coordinator retry (patches/kafkajs+2.2.4.patch,
 * src/consumer/atCoordinator.js), on coordinators that answer as Kafka's do: a node that
 * no longer coordinates the group, one still loading it. The fault suite moves a real
 * group's coordinator (event-log-cluster.test.ts); this pins each answer's handling.
 */
const atCoordinator = createRequire(import.meta.url)(
  "kafkajs/src/consumer/atCoordinator.js",
) as (options: {
  cluster: { findGroupCoordinator: (o: { groupId: string }) => Promise<Node> };
  groupId: string;
  coordinator: Node;
  send: (c: Node) => Promise<void>;
  timeout?: number;
}) => Promise<Node>;

interface Node {
  name: string;
  answers: (string | null)[];
}
const answering = (name: string, ...answers: (string | null)[]): Node => ({ name, answers });
const kafkaError = (type: string) => Object.assign(new Error(type), { type });

function run(first: Node, found: Node[], timeout?: number) {
  const sent: string[] = [];
  const finds: string[] = [];
  const done = atCoordinator({
    cluster: {
      findGroupCoordinator: async ({ groupId }) => {
        finds.push(groupId);
        return found.shift() as Node;
      },
    },
    groupId: "g",
    coordinator: first,
    timeout,
    send: async (node) => {
      sent.push(node.name);
      const answer = node.answers.shift() ?? null;
      if (answer) throw kafkaError(answer);
    },
  });
  return { done, sent, finds };
}

describe("kafkajs, patched: a request goes where the group is coordinated now (issue 33)", () => {
  it("When the old node answers NOT_COORDINATOR and the new one is still loading, then the request is found a home and sent again until it is taken", async () => {
    const old = answering("old", "NOT_COORDINATOR_FOR_GROUP");
    const next = answering("next", "GROUP_LOAD_IN_PROGRESS", "GROUP_LOAD_IN_PROGRESS");
    const r = run(old, [next]);
    expect((await r.done).name).toBe("next");
    expect(r.sent).toEqual(["old", "next", "next", "next"]);
    expect(r.finds).toEqual(["g"]);
  });

  it("When the node found first is not the coordinator yet either, then it asks again", async () => {
    const r = run(answering("old", "GROUP_COORDINATOR_NOT_AVAILABLE"), [
      answering("early", "NOT_COORDINATOR_FOR_GROUP"),
      answering("right"),
    ]);
    expect((await r.done).name).toBe("right");
    expect(r.sent).toEqual(["old", "early", "right"]);
  });

  it("When any other error comes back, then it is thrown at once; past the time limit, the last stale answer is", async () => {
    const other = run(answering("a", "ILLEGAL_GENERATION"), []);
    await expect(other.done).rejects.toThrow("ILLEGAL_GENERATION");
    expect(other.sent).toEqual(["a"]);
    const stale = answering("b", ...Array(50).fill("GROUP_LOAD_IN_PROGRESS"));
    const late = run(stale, [], 400);
    await expect(late.done).rejects.toThrow("GROUP_LOAD_IN_PROGRESS");
    expect(late.sent.length).toBeGreaterThan(1);
    expect(late.sent.length).toBeLessThan(6);
  });
});
