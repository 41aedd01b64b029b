import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import { createKafka, createPublisher, ensureTopics } from "@shop/kafka";
import { describe, expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { metricSum } from "../../../harness/http.ts";
import {
  committedOffsets,
  endOffsets,
  pedidoCriadoRecords,
  readTopic,
} from "../../../test/helpers/kafka.ts";
import {
  capturingLogger,
  http,
  ServiceProcess,
  serviceEnv,
  uniquePrefix,
} from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import { readConfig } from "../../src/config.ts";

/**
 * ENTREGA=exatamente-uma-vez: each result and its record's offset are committed in one Kafka
 * transaction. At-least-once (Rule E8) stays the default. The crash side by side
 * with at-least-once is in test/faults/event-log.test.ts.
 */
const shop = testShop("exactly-once");

const brokers = shopConfig().kafka.brokers;

/** The shop's topics under a prefix of their own, and a publisher to them (closed by the test). */
async function freshTopics(name: string) {
  const prefix = uniquePrefix(name);
  const names = kafkaNames(prefix);
  const log = capturingLogger("test");
  const kafka = createKafka(brokers, `${name}-test`, log);
  await ensureTopics(kafka, pedidoTopics(names), REPLICATION_FACTOR);
  return { prefix, names, kafka, publisher: createPublisher(kafka, 5000, log) };
}

interface Saude {
  consumidor: { particoes: Record<string, number[]> } | null;
}

describe("Payments' delivery setting (ENTREGA)", () => {
  it("When ENTREGA is not set, then payments is at-least-once, as the spec says", () => {
    expect(readConfig({}).exactlyOnce).toBe(false);
    expect(readConfig({ ENTREGA: "exatamente-uma-vez" }).exactlyOnce).toBe(true);
    expect(() => readConfig({ ENTREGA: "talvez" })).toThrow(/ENTREGA/);
  });

  it("When ENTREGA=exatamente-uma-vez, then every result is written in a committed transaction with its record's offset, one per order", async () => {
    const { prefix, names, kafka, publisher } = await freshTopics("eos");
    const total = 12;
    try {
      await publisher.publishBatch(
        pedidoCriadoRecords(names.topics.pedidosCriados, total, (i) => (i % 2 === 0 ? 2 : 200)),
      );
      const payments = await ServiceProcess.start(
        "payments",
        "payments",
        serviceEnv(prefix, {
          INSTANCIA: "caixa-1",
          TEMPO_DECISAO_MS: "50",
          ENTREGA: "exatamente-uma-vez",
        }),
      );
      shop.own(payments);
      const all = brokers.join(",");
      const ends = async (topic: string) => {
        const admin = kafka.admin();
        await admin.connect();
        try {
          return new Map(
            (await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]),
          );
        } finally {
          await admin.disconnect();
        }
      };
      const input = await ends(names.topics.pedidosCriados);
      // The group's offsets reach the end of the input: committed by the transactions, since
      // kafkajs's own commits are off.
      await waitFor(
        async () => {
          const committed = await committedOffsets(
            all,
            names.groups.pagamentos,
            names.topics.pedidosCriados,
          );
          return [...input].every(([p, high]) => (committed.get(p) ?? -1) >= high);
        },
        { timeoutMs: 30_000, intervalMs: 200, what: "the input committed to its end" },
      );
      const results = await readTopic(all, names.topics.pagamentosResultados);
      const perOrder = new Map<number, number>();
      for (const r of results)
        perOrder.set(Number(r.value.pedidoId), (perOrder.get(Number(r.value.pedidoId)) ?? 0) + 1);
      expect(perOrder.size).toBe(total);
      expect([...perOrder.values()].every((n) => n === 1)).toBe(true);
      // A transaction's commit marker takes an offset of its own in each partition it wrote:
      // the results' partitions end past their records.
      const output = await ends(names.topics.pagamentosResultados);
      const endsPast = [...output.values()].reduce((a, b) => a + b, 0);
      expect(endsPast).toBeGreaterThan(results.length);
      await payments.stop();
    } finally {
      await publisher.close();
    }
  }, 90_000);

  it("Issue 55: when partitions move to a second instance (ENTREGA=exatamente-uma-vez) and back at its leave, then the first instance's transactions on them commit at once: the producers the second fenced are not used again", async () => {
    const { prefix, names, publisher } = await freshTopics("eos-back");
    const all = brokers.join(",");
    const topic = names.topics.pedidosCriados;
    let sent = 0;
    /** `n` more orders on the three partitions, then every partition committed to its end. */
    const decided = async (n: number) => {
      await publisher.publishBatch(pedidoCriadoRecords(topic, sent + n).slice(sent));
      sent += n;
      const ends = await endOffsets(all, topic);
      await waitFor(
        async () => {
          const committed = await committedOffsets(all, names.groups.pagamentos, topic);
          return [...ends].every(([p, high]) => (committed.get(p) ?? -1) >= high);
        },
        { timeoutMs: 30_000, intervalMs: 100, what: `${sent} orders committed` },
      );
    };
    const instance = (name: string) =>
      ServiceProcess.start(
        name,
        "payments",
        serviceEnv(prefix, {
          INSTANCIA: name,
          TEMPO_DECISAO_MS: "20",
          ENTREGA: "exatamente-uma-vez",
        }),
      ).then(shop.own);
    try {
      // caixa-1 writes a transaction on each partition: a producer each.
      const one = await instance("caixa-1");
      await decided(12);
      // caixa-2 is dealt some of them and writes there: its producers fence caixa-1's.
      const two = await instance("caixa-2");
      await waitFor(
        async () => {
          const held = (await http<Saude>("GET", `${two.url()}/saude`)).body.consumidor?.particoes;
          return (held?.[topic]?.length ?? 0) > 0;
        },
        { timeoutMs: 30_000, what: "caixa-2 holding a partition" },
      );
      await decided(12);
      const failedBefore = await metricSum(one.url(), "shop_messages_failed_total", {});
      // caixa-2 leaves: caixa-1 holds every partition again and decides what comes.
      await two.stop();
      await waitFor(
        async () => {
          const held = (await http<Saude>("GET", `${one.url()}/saude`)).body.consumidor?.particoes;
          return held?.[topic]?.length === 3;
        },
        { timeoutMs: 30_000, what: "caixa-1 holding every partition again" },
      );
      await decided(12);
      // Not one write failed on a fenced producer ("an old epoch"), nor was retried.
      expect(await metricSum(one.url(), "shop_messages_failed_total", {})).toBe(failedBefore);
      expect(await metricSum(one.url(), "shop_consumer_retries_total", {})).toBe(0);
      const results = await readTopic(all, names.topics.pagamentosResultados);
      expect(new Set(results.map((r) => Number(r.value.pedidoId))).size).toBe(sent);
      expect(results).toHaveLength(sent);
    } finally {
      await publisher.close();
    }
  }, 120_000);
});
