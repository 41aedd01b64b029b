import { kafkaNames, type Pedido, ResultadoPagamento } from "@shop/contracts";
import { metrics } from "@shop/service";
import { beforeAll, describe, expect, it } from "vitest";
import { send } from "../../../harness/http.ts";
import type { FreshStore } from "../../../harness/orders-store.ts";
import type { OrdersApi } from "../../../orders-api/src/server.ts";
import { CallCounter, expectTour, tourFiles } from "../../helpers/code-tour.ts";
import { aResultado } from "../../helpers/fixtures.ts";
import { testKafka } from "../../helpers/kafka.ts";
import { testShop } from "../../helpers/test-shop.ts";
import { waitFor } from "../../helpers/wait.ts";

/** docs/code-tour.md's two paths, run: each enters exactly the orders API files it names. */
const shop = testShop("tour");
const { prefix } = shop;
let db: FreshStore;
const body = { cliente: "Ana", item: "caneca", quantidade: 2, precoUnitario: 18.9 };
const counter = new CallCounter();
let api: OrdersApi;

/** Rounds the outbox relay finished so far (this process's registry: the API runs here). */
const relayRounds = async () =>
  (await metrics.relayRounds.get()).values.reduce((n, v) => n + v.value, 0);

/** Idle until the relay, the API's one poll, has finished two rounds. */
async function twoRelayRounds() {
  const from = await relayRounds();
  await waitFor(async () => (await relayRounds()) >= from + 2, {
    what: "two rounds of the outbox relay",
  });
}

const expectTourOf = (entered: Set<string>, title: string) =>
  expectTour(entered, tourFiles("docs/code-tour.md", title), "orders-api/");

beforeAll(async () => {
  await counter.start();
  shop.own(counter);
  ({ api, db } = await shop.ordersApi());
  // Warm: the first request loads and compiles what the later ones only call.
  await send("POST", `${api.url}/pedidos`, body, { "idempotency-key": `${prefix}warm` });
});

describe("The code tour (docs/code-tour.md), run", () => {
  it("When POST /pedidos runs with and without an Idempotency-Key, then it enters exactly the orders API files its tour names", async () => {
    const entered = await counter.filesEnteredBy(async () => {
      const plain = await send("POST", `${api.url}/pedidos`, body);
      const keyed = await send("POST", `${api.url}/pedidos`, body, {
        "idempotency-key": `${prefix}k`,
      });
      expect([plain.status, keyed.status]).toEqual([201, 201]);
    }, twoRelayRounds);
    expectTourOf(entered, "POST /pedidos");
  });

  it("When a ResultadoPagamento arrives, then until the order row changes it enters exactly the orders API files its tour names", async () => {
    const created = await send<Pedido>("POST", `${api.url}/pedidos`, body);
    const producer = testKafka().producer();
    await producer.connect();
    const paid = async () =>
      (await db.count(
        "SELECT COUNT(*) AS n FROM pedidos WHERE id = ? AND status = 'PAGO'",
        created.body.id,
      )) === 1;
    try {
      const entered = await counter.filesEnteredBy(async () => {
        await producer.send({
          topic: kafkaNames(prefix).topics.pagamentosResultados,
          messages: [
            {
              key: String(created.body.id),
              value: ResultadoPagamento.encode(
                aResultado({ pedidoId: created.body.id, instancia: "tour" }),
              ),
            },
          ],
        });
        await waitFor(paid, { what: "the order row PAGO" });
      }, twoRelayRounds);
      expectTourOf(entered, "A ResultadoPagamento");
    } finally {
      await producer.disconnect();
    }
  });
});
