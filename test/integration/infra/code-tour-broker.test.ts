import { randomUUID } from "node:crypto";
import { ERROR_QUEUES, EXCHANGES, ROUTING_KEYS, SolicitacaoPagamento } from "@shop/contracts";
import { beforeAll, describe, expect, it } from "vitest";
import type { OrdersService } from "../../../broker/orders/src/server.ts";
import type { ShopVhost } from "../../../harness/vhost.ts";
import {
  createBrokerPedido,
  publishRaw,
  readyCount,
  requestPagamento,
} from "../../helpers/broker.ts";
import { CallCounter, expectTour, tourFiles } from "../../helpers/code-tour.ts";
import { queryRows, tempDb } from "../../helpers/shop.ts";
import { testShop } from "../../helpers/test-shop.ts";
import { waitFor } from "../../helpers/wait.ts";

/**
 * docs/code-tour-broker.md's two paths, run in this process against the real RabbitMQ:
 * each enters exactly the broker edition's files it names (issue 48).
 */
const shop = testShop("tour");
const counter = new CallCounter();
let vhost: ShopVhost;
let orders: OrdersService;
let ordersDb: string;

const expectTourOf = (entered: Set<string>, title: string) =>
  expectTour(entered, tourFiles("docs/code-tour-broker.md", title), "broker/");

const statusOf = (pedidoId: string) =>
  queryRows<{ status: string }>(ordersDb, "SELECT status FROM pedidos WHERE id = ?", pedidoId)[0]
    ?.status;

beforeAll(async () => {
  await counter.start();
  shop.own(counter);
  vhost = await shop.vhost();
  ordersDb = tempDb("tour-orders");
  orders = await shop.brokerOrders(vhost, { DB_PATH: ordersDb });
  await shop.brokerPayments(vhost);
  // Warm: the first request loads and compiles what the later ones only call.
  const warm = await createBrokerPedido(orders.url);
  await requestPagamento(orders.url, warm.id, randomUUID(), "APROVAR");
  await waitFor(() => statusOf(warm.id) === "PAGO", { what: "the warm-up order PAGO" });
});

describe("The broker edition's code tour (docs/code-tour-broker.md), run", () => {
  it("When a payment request goes from POST to PAGO, then it enters exactly the broker edition's files its tour names", async () => {
    const pedido = await createBrokerPedido(orders.url);
    const entered = await counter.filesEnteredBy(async () => {
      const accepted = await requestPagamento(orders.url, pedido.id, randomUUID(), "APROVAR");
      expect(accepted.status).toBe(202);
      await waitFor(() => statusOf(pedido.id) === "PAGO", { what: "the order row PAGO" });
    });
    expectTourOf(entered, "A payment request");
  });

  it("When a request fails three times, then on its way to .erros it enters exactly the files its tour names", async () => {
    const pedido = await createBrokerPedido(orders.url);
    const solicitacaoId = randomUUID();
    await requestPagamento(orders.url, pedido.id, solicitacaoId, "APROVAR");
    await waitFor(() => statusOf(pedido.id) === "PAGO", { what: "the first request decided" });
    const before = await readyCount(vhost, ERROR_QUEUES.solicitacoes);
    const entered = await counter.filesEnteredBy(async () => {
      // The same solicitacaoId with another valor: payments refuses it each time (rule B15).
      const other = SolicitacaoPagamento.encode({
        versao: 1,
        solicitacaoId,
        pedidoId: pedido.id,
        valor: 1.23,
        cenario: "APROVAR",
      });
      await publishRaw(vhost, EXCHANGES.commands, ROUTING_KEYS.solicitar, other);
      await waitFor(async () => (await readyCount(vhost, ERROR_QUEUES.solicitacoes)) > before, {
        what: "the request in pagamentos.solicitacoes.erros",
      });
    });
    expectTourOf(entered, "A request that fails three times");
  });
});
