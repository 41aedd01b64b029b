import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import { createKafka, createPublisher, ensureTopics } from "@shop/kafka";
import { describe, expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { pedidoCriadoRecords } from "../../../test/helpers/kafka.ts";
import {
  capturingLogger,
  ServiceProcess,
  serviceEnv,
  uniquePrefix,
} from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";

/**
 * Rule E8: the payments component commits automatically every 5 seconds. kafkajs commits an
 * eachBatch consumer's offsets only when the batch ends; a batch of records that each wait
 * 3 s would otherwise go uncommitted for as long as it lasts.
 */
const shop = testShop("commit");

describe("Rule E8: payments commits its offsets at an interval, also inside a long batch", () => {
  // With ENTREGA=exatamente-uma-vez the offsets are committed by the transaction, at the same interval.
  it.each(["pelo-menos-uma-vez", "exatamente-uma-vez"])(
    "When one fetched batch takes longer than the commit interval (ENTREGA=%s), then the group's committed offset moves before the batch ends",
    async (entrega) => {
      const prefix = uniquePrefix("commit");
      const nomes = kafkaNames(prefix);
      const log = capturingLogger("test");
      const kafka = createKafka(shopConfig().kafka.brokers, "commit-test", log);
      await ensureTopics(kafka, pedidoTopics(nomes), REPLICATION_FACTOR);
      // All records written before payments starts: its first fetch takes each partition whole.
      const publicador = createPublisher(kafka, 5000, log);
      await publicador.publishBatch(pedidoCriadoRecords(nomes.topics.pedidosCriados, 15));
      const admin = kafka.admin();
      await admin.connect();
      try {
        const high = new Map(
          (await admin.fetchTopicOffsets(nomes.topics.pedidosCriados)).map((p) => [
            p.partition,
            Number(p.high),
          ]),
        );
        const payments = await ServiceProcess.start(
          "payments",
          "payments",
          serviceEnv(prefix, {
            INSTANCIA: "caixa-1",
            TEMPO_DECISAO_MS: "400",
            COMMIT_INTERVAL_MS: "1000",
            ENTREGA: entrega,
          }),
        );
        shop.own(payments);
        // A partition whose committed offset is past 0 and short of its end: committed while
        // its batch was still being decided (at a batch's end it would jump straight to high).
        const meio = await waitFor(
          async () => {
            const [offsets] = await admin.fetchOffsets({
              groupId: nomes.groups.pagamentos,
              topics: [nomes.topics.pedidosCriados],
            });
            return offsets?.partitions.find((p) => {
              const c = Number(p.offset);
              return c > 0 && c < (high.get(p.partition) ?? 0);
            });
          },
          { timeoutMs: 30_000, intervalMs: 100, what: "a commit in the middle of a batch" },
        );
        expect(Number(meio.offset)).toBeGreaterThan(0);
        await payments.stop();
      } finally {
        await admin.disconnect();
        await publicador.close();
      }
    },
    90_000,
  );
});
