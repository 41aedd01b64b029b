import { kafkaNames, type Pedido, ResultadoPagamento } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../../../harness/http.ts";
import { readConfig } from "../../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../../orders-api/src/server.ts";
import { CallCounter, expectTour, tourFiles } from "../../helpers/code-tour.ts";
import { aResultado } from "../../helpers/fixtures.ts";
import { testKafka } from "../../helpers/kafka.ts";
import {
  capturingLogger,
  queryRows,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../../helpers/shop.ts";
import { waitFor } from "../../helpers/wait.ts";

/** docs/code-tour.md's two paths, run: each enters exactly the orders API files it names. */
const prefix = uniquePrefix("tour");
const dbPath = tempDb("tour");
const body = { cliente: "Ana", item: "caneca", quantidade: 2, precoUnitario: 18.9 };
const counter = new CallCounter();
let api: OrdersApi;

const expectTourOf = (entered: Set<string>, title: string) =>
  expectTour(entered, tourFiles("docs/code-tour.md", title), "orders-api/");

beforeAll(async () => {
  await counter.start();
  api = await startOrdersApi(
    readConfig(serviceEnv(prefix, { DB_PATH: dbPath })),
    capturingLogger("orders-api"),
  );
  // Warm: the first request loads and compiles what the later ones only call.
  await send("POST", `${api.url}/pedidos`, body, { "idempotency-key": `${prefix}warm` });
});

afterAll(async () => {
  await api?.stop();
  await counter.stop();
});

describe("The code tour (docs/code-tour.md), run", () => {
  it("When POST /pedidos runs with and without an Idempotency-Key, then it enters exactly the orders API files its tour names", async () => {
    const entered = await counter.filesEnteredBy(async () => {
      const plain = await send("POST", `${api.url}/pedidos`, body);
      const keyed = await send("POST", `${api.url}/pedidos`, body, {
        "idempotency-key": `${prefix}k`,
      });
      expect([plain.status, keyed.status]).toEqual([201, 201]);
    });
    expectTourOf(entered, "POST /pedidos");
  });

  it("When a ResultadoPagamento arrives, then until the order row changes it enters exactly the orders API files its tour names", async () => {
    const created = await send<Pedido>("POST", `${api.url}/pedidos`, body);
    const producer = testKafka().producer();
    await producer.connect();
    const status = () =>
      queryRows<Pedido>(dbPath, "SELECT status FROM pedidos WHERE id = ?", created.body.id)[0]
        ?.status;
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
        await waitFor(() => status() === "PAGO", { what: "the order row PAGO" });
      });
      expectTourOf(entered, "A ResultadoPagamento");
    } finally {
      await producer.disconnect();
    }
  });
});
