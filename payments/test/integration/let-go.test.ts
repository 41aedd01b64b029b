import type { Pedido } from "@shop/contracts";
import { expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import { groupInKafka, readTopic } from "../../../test/helpers/kafka.ts";
import { http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";

/**
 * A member busy with a decision when its group rebalances lets the record go as soon as it
 * hears of the rebalance (a heartbeat every half second beside the record:
 * libs/kafka/src/consumer/batch.ts, beatingWhile; payments' decidePagamento), instead of
 * finishing the decision while the whole group waits for it to rejoin. Nothing was decided,
 * so nothing is decided twice: the record is its partition's next owner's.
 */
const shop = testShop("let-go");
const topic = shop.names.topics.pedidosCriados;
/** A decision long enough that finishing it would be seen: the rebalance waiting for it. */
const DECISION_MS = 15_000;

/** Kafka's view of the payments group: its state and each member's partitions. */
async function group() {
  const g = await groupInKafka(topic, shop.names.groups.pagamentos);
  return { estado: g.estado, membros: [...g.membros.values()] };
}

it("When a second payments instance joins while the first is in the middle of a 15 s decision, then the group rebalances within seconds, not after the decision, and the order let go is decided once", async () => {
  const { api } = await shop.ordersApi();
  // The order waits in the topic before caixa-1 joins: assigned every partition, caixa-1
  // fetches it at once and begins its 15 s wait.
  const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
    cliente: "Ana",
    item: "bola",
    quantidade: 1,
    precoUnitario: 10,
  });
  expect(res.status).toBe(201);
  const config = { TEMPO_DECISAO_MS: String(DECISION_MS) };
  await shop.start("caixa-1", "payments", { ...config, INSTANCIA: "caixa-1" });
  await waitFor(async () => (await group()).membros.flat().length === 3, {
    timeoutMs: 60_000,
    what: "caixa-1 holding the three partitions",
  });

  const joining = Date.now();
  await shop.start("caixa-2", "payments", { ...config, INSTANCIA: "caixa-2" });
  const settled = await waitFor(
    async () => {
      const g = await group();
      return g.estado === "Stable" && g.membros.length === 2 && g.membros.every((p) => p.length > 0)
        ? Date.now()
        : null;
    },
    { timeoutMs: 60_000, intervalMs: 100, what: "both instances holding partitions" },
  );
  // caixa-1's decision began before caixa-2 was started and lasts 15 s: a group settled
  // well within that had caixa-1 let it go (caixa-2's start, one heartbeat, a rejoin).
  expect(settled - joining, "the group settled before caixa-1's decision could end").toBeLessThan(
    DECISION_MS - 5_000,
  );
  const decided = await waitFor(
    async () => {
      const p = (await http<Pedido>("GET", `${api.url}/pedidos/${res.body.id}`)).body;
      return p.status !== "AGUARDANDO_PAGAMENTO" && p;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: "the order let go to be decided" },
  );
  expect(decided.status).toBe("PAGO");
  const brokers = shopConfig().kafka.brokers.join(",");
  const results = await readTopic(brokers, shop.names.topics.pagamentosResultados);
  expect(results.filter((r) => Number(r.value.pedidoId) === res.body.id)).toHaveLength(1);
}, 120_000);
