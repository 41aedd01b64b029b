import { setTimeout as sleep } from "node:timers/promises";
import { PedidoCriado, pedidoKey } from "@shop/contracts";
import { expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { groupInKafka, readTopic, testKafka } from "../../../test/helpers/kafka.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";

/**
 * A graceful leave rebalances the group while the instance that stays is in a decision: it
 * lets the record go (let-go.test.ts), is dealt every partition, that record's among them,
 * and waits only what was left of its decision time (LetGoWaits in
 * payments/src/messaging/pedidos-criados-consumer.ts). From the start again, the rebalance
 * would have cost it the part of the decision already waited.
 */
const shop = testShop("let-go-resume");
const topic = shop.names.topics.pedidosCriados;
/** The spec's decision time. */
const DECISION_MS = 3_000;
/** How far into its decision the instance that stays is when the other is stopped. */
const INTO_DECISION_MS = 900;

/** Kafka's view of the payments group: its state and each instance's partitions. */
const group = () => groupInKafka(topic, shop.names.groups.pagamentos);

it("Issue 55: when the other payments instance leaves while one is 0.9 s into a 3 s decision, then the one that stays lets the record go, is dealt it back, and decides it within its 3 s and the rebalance's pause, not 3 s after the rebalance", async () => {
  await shop.ordersApi(); // the topics
  const config = { TEMPO_DECISAO_MS: String(DECISION_MS) };
  const instances = new Map(
    await Promise.all(
      ["caixa-1", "caixa-2"].map(
        async (name) =>
          [name, await shop.start(name, "payments", { ...config, INSTANCIA: name })] as const,
      ),
    ),
  );
  const dealt = await waitFor(
    async () => {
      const g = await group();
      const held = [...g.membros].filter(([, ps]) => ps.length > 0);
      return g.estado === "Stable" && held.length === 2 && held;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: "both instances holding partitions" },
  );
  const [[stays, [partition]], [leaves]] = dealt as [[string, number[]], [string, number[]]];

  // One order on a partition of the instance that stays: it begins its wait at once.
  const producer = testKafka().producer();
  await producer.connect();
  const writtenAt = Date.now();
  try {
    await producer.send({
      topic,
      acks: -1,
      messages: [
        {
          partition,
          key: pedidoKey(1),
          value: PedidoCriado.encode({
            versao: 1,
            pedidoId: 1,
            cliente: "Ana",
            item: "bola",
            quantidade: 1,
            valor: 10,
            criadoEm: new Date().toISOString(),
          }),
        },
      ],
    });
  } finally {
    await producer.disconnect();
  }
  // The fault's moment: inside the decision's window, as a kill inside the relay's window.
  await sleep(INTO_DECISION_MS);
  await instances.get(leaves)?.stop("SIGTERM");

  const settledAt = await waitFor(
    async () => {
      const g = await group();
      return g.estado === "Stable" && g.membros.get(stays)?.length === 3 && Date.now();
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `${stays} holding every partition` },
  );
  const brokers = shopConfig().kafka.brokers.join(",");
  const results = await waitFor(
    async () => {
      const all = await readTopic(brokers, shop.names.topics.pagamentosResultados);
      return all.length > 0 && all;
    },
    { timeoutMs: 30_000, what: "the order's result" },
  );
  expect(results).toHaveLength(1);
  const [result] = results;
  expect(result?.value.instancia).toBe(stays);
  const decidedAt = Date.parse(String(result?.value.processadoEm));
  // The proof the fault hit: the group settled without the instance that stays while its
  // record was undecided, so it had let the record go (finished, it would settle after).
  expect(settledAt, "the group settled before the decision").toBeLessThan(decidedAt);
  // From the start again, the decision would end 3 s after its second fetch, past the
  // 0.9 s already waited; resumed, the rebalance's pause is all it adds.
  expect(decidedAt - writtenAt, "the decision's time from the record's write").toBeLessThan(
    DECISION_MS + INTO_DECISION_MS,
  );
}, 120_000);
