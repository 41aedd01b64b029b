import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { PedidoCriado } from "@shop/contracts";
import type { Message } from "kafkajs";
import { afterAll, describe, expect, it } from "vitest";
import { uniqueName } from "../../../../harness/env.ts";
import { aPedidoCriado } from "../../../../test/helpers/fixtures.ts";
import { createTopic, testKafka } from "../../../../test/helpers/kafka.ts";
import { capturingLogger } from "../../../../test/helpers/shop.ts";
import { waitFor } from "../../../../test/helpers/wait.ts";
import {
  type ConsumerOptions,
  createPublisher,
  type RunningConsumer,
  startConsumer,
} from "../../src/index.ts";

const kafka = testKafka();
const log = capturingLogger("consumer-test");
const publicador = createPublisher(kafka, 5_000, log);
let running: RunningConsumer | undefined;

/** A PedidoCriado record of `pedidoId`, keyed by it. */
const pedidoRecord = (pedidoId: number) => ({
  key: String(pedidoId),
  value: JSON.stringify(aPedidoCriado({ pedidoId })),
});

/** A new topic of three partitions holding `messages`, acknowledged by every replica. */
async function topicWith(name: string, messages: Message[]): Promise<string> {
  const topic = uniqueName(name);
  await createTopic(kafka, topic, 3);
  const producer = kafka.producer();
  await producer.connect();
  try {
    await producer.send({ topic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
  return topic;
}

/** A consumer of PedidoCriado records in `groupId`, each handled by `handle`. */
const pedidosConsumer = (
  groupId: string,
  topic: string,
  handle: ConsumerOptions<PedidoCriado>["handle"],
) =>
  startConsumer({
    kafka,
    groupId,
    topics: [topic],
    contract: PedidoCriado,
    keyOf: (v) => String(v.pedidoId),
    deadLetters: publicador,
    log,
    handle,
  });

afterAll(async () => {
  await running?.stop();
  await publicador.close();
});

describe("startConsumer", () => {
  it("When the handler throws (even an error kafkajs would not restart from), then the record is tried again after a pause, its partition reported stuck meanwhile, and no record is skipped", async () => {
    const topic = uniqueName("crash");
    await createTopic(kafka, topic, 1);
    const evento = aPedidoCriado({ pedidoId: 7 });
    await publicador.publish(topic, "7", JSON.stringify(evento));

    let chamadas = 0;
    const handled: number[] = [];
    let presasNaSegunda: unknown[] = [];
    const eventos: string[] = [];
    running = await pedidosConsumer(uniqueName("crash-group"), topic, async (v) => {
      chamadas++;
      // A TypeError is one of the errors kafkajs treats as unrecoverable: CRASH, restart false.
      if (chamadas === 1) throw new TypeError("a bug met once");
      presasNaSegunda = running?.status().stuck ?? [];
      handled.push(v.pedidoId);
    });

    for (const nome of ["received", "retried", "handled", "acked", "committed"] as const)
      (running as RunningConsumer).events.on(nome, () => eventos.push(nome));
    await waitFor(() => handled.length === 1, { timeoutMs: 30_000, what: "the record handled" });
    await waitFor(() => eventos.includes("committed"), { what: "the offset committed" });
    expect(handled).toEqual([7]);
    expect(chamadas).toBe(2);
    expect(presasNaSegunda).toEqual([
      expect.objectContaining({
        topic,
        partition: 0,
        offset: "0",
        tentativas: 1,
        ultimoErro: "a bug met once",
      }),
    ]);
    expect(running.status().stuck).toEqual([]);
    // The wrapper's events, in order: the record read again, handled, acked, committed.
    expect(eventos.slice(eventos.lastIndexOf("received")).slice(0, 4)).toEqual([
      "received",
      "handled",
      "acked",
      "committed",
    ]);
  }, 60_000);
});

describe("Issue 55: a rebalance deals the partitions with the most records waiting to different members (consumer/assigner.ts)", () => {
  it("When a second member joins a group whose backlog sits on partitions 0 and 2, then each member holds one of them (kafkajs's round robin gave the first member both)", async () => {
    // Ten records on partitions 0 and 2, none on 1: the group's lag, 10, 0, 10.
    const topic = await topicWith(
      "backlog",
      [0, 2].flatMap((partition) =>
        Array.from({ length: 10 }, (_, i) => ({
          partition,
          ...pedidoRecord(partition * 100 + i + 1),
        })),
      ),
    );
    const groupId = uniqueName("backlog-group");
    // Each record waits (as payments' decision does) until the group rebalances: the backlog
    // stays where it is, uncommitted, while the members join. `done` ends the waits, so that
    // the members stop at once.
    const done = new AbortController();
    const member = () =>
      pedidosConsumer(groupId, topic, async (_v, meta) => {
        const signals = meta.signal ? [meta.signal, done.signal] : [done.signal];
        // Until the group rebalances (meta.signal) or the test ends (done): no time set.
        const either = AbortSignal.any(signals);
        if (!either.aborted) await once(either, "abort");
        throw either.reason;
      });
    const first = await member();
    const second = await member();
    try {
      const held = (c: RunningConsumer) => c.status().partitions[topic] ?? [];
      await waitFor(
        () =>
          held(first).length > 0 &&
          held(second).length > 0 &&
          held(first).length + held(second).length === 3,
        { timeoutMs: 30_000, what: "both members holding the topic's three partitions" },
      );
      const heavy = (c: RunningConsumer) => held(c).filter((p) => p === 0 || p === 2);
      expect([heavy(first).length, heavy(second).length]).toEqual([1, 1]);
    } finally {
      done.abort();
      await Promise.all([first.stop(), second.stop()]);
    }
  }, 90_000);
});

describe("Rule E6, issue 55: one member's partitions take turns at the handler, one record at a time, the oldest first (consumer/turns.ts)", () => {
  it("When a member's three partitions hold records written in turn, then it handles them in the order they were written, not partition after partition", async () => {
    // Nine records, written 10 ms apart in turn on partitions 0, 1, 2, 0, 1, ...: the
    // pedidoId is the order of writing.
    const base = Date.now() - 60_000;
    const topic = await topicWith(
      "oldest-first",
      Array.from({ length: 9 }, (_, i) => ({
        partition: i % 3,
        ...pedidoRecord(i + 1),
        timestamp: String(base + i * 10),
      })),
    );
    const handled: number[] = [];
    // Records in the handler now, and the most there at once: one, though every batch is
    // handed over at once.
    const inHandler = { now: 0, most: 0 };
    const member = await pedidosConsumer(uniqueName("oldest-first-group"), topic, async (v) => {
      inHandler.most = Math.max(inHandler.most, ++inHandler.now);
      handled.push(v.pedidoId);
      await sleep(20);
      inHandler.now--;
    });
    try {
      await waitFor(() => handled.length >= 9, { timeoutMs: 30_000, what: "nine records handled" });
      // kafkajs alone handed the batches over one partition after the other: 1, 4, 7, 2, ...
      expect(handled).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(inHandler.most).toBe(1);
    } finally {
      await member.stop();
    }
  }, 60_000);
});
