import { createTopicsWaiting } from "@shop/kafka";
import { beforeAll, describe, expect, it } from "vitest";
import { testKafka } from "../../../test/helpers/kafka.ts";
import { capturingLogger, http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import type { PaymentsInstance } from "../../src/server.ts";

/**
 * Issue 14: a record whose handling fails every time (here a dead letter that cannot be
 * published: its .dlq topic was deleted) blocked its partition forever without saying so.
 * It is tried again with backoff, and /saude and the metrics name the stuck partition.
 */
const shop = testShop("stuck");
const { prefix, names: nomes } = shop;
let payments: PaymentsInstance;

interface Saude {
  consumidor: {
    presas: {
      topic: string;
      partition: number;
      offset: string;
      tentativas: number;
      ultimoErro: string;
    }[];
  };
}

beforeAll(async () => {
  payments = await shop.payments(
    { TEMPO_DECISAO_MS: "0", INSTANCIA: "caixa-presa", CONFIRMACAO_MS: "1000" },
    capturingLogger("payments"),
    () => {},
  );
}, 60_000);

describe("A partition stuck on a record that keeps failing", () => {
  it("When a poison record's dead letter cannot be published, then the partition waits and retries with backoff, /saude names the record, attempts and last error, the metrics count it; once the .dlq topic is back, the record is dead-lettered and the partition moves on", async () => {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [nomes.dlq.pedidosCriados] });
      const producer = testKafka().producer();
      await producer.connect();
      await producer.send({
        topic: nomes.topics.pedidosCriados,
        acks: -1,
        messages: [{ key: "1", value: "not json", partition: 0 }],
      });
      await producer.disconnect();

      const presa = await waitFor(
        async () => {
          const s = (await http<Saude>("GET", `${payments.url}/saude`)).body;
          const p = s.consumidor.presas[0];
          return p && p.tentativas >= 2 && p;
        },
        { timeoutMs: 30_000, what: "the stuck partition in /saude" },
      );
      expect(presa).toMatchObject({
        topic: nomes.topics.pedidosCriados,
        partition: 0,
        offset: "0",
      });
      expect(presa.ultimoErro.length).toBeGreaterThan(0);
      const metricas = await (await fetch(`${payments.url}/metrics`)).text();
      expect(metricas).toMatch(
        new RegExp(`shop_consumer_stuck_partitions\\{group="${prefix}pagamentos"\\} 1`),
      );
      expect(metricas).toMatch(
        new RegExp(
          `shop_consumer_retries_total\\{destino="${nomes.topics.pedidosCriados}"\\} [1-9]`,
        ),
      );

      await createTopicsWaiting(admin, [
        { topic: nomes.dlq.pedidosCriados, numPartitions: 1, replicationFactor: 1 },
      ]);
      await waitFor(
        async () =>
          (await http<Saude>("GET", `${payments.url}/saude`)).body.consumidor.presas.length === 0,
        { timeoutMs: 60_000, what: "the partition to move on" },
      );
      const [fim] = await admin.fetchTopicOffsets(nomes.dlq.pedidosCriados);
      expect(fim?.high).toBe("1");
    } finally {
      await admin.disconnect();
    }
  }, 120_000);
});
