import { randomUUID } from "node:crypto";
import { ERROR_QUEUES, EXCHANGES, QUEUES, ROUTING_KEYS } from "@shop/contracts";
import amqp from "amqplib";
import { beforeAll, describe, expect, it } from "vitest";
import { shopConfig } from "../../../../harness/env.ts";
import { TcpProxy } from "../../../../harness/tcp-proxy.ts";
import type { ShopVhost } from "../../../../harness/vhost.ts";
import {
  brokerEnv,
  createBrokerPedido,
  getBrokerPedido,
  publishRaw,
  readyCount,
  requestPagamento,
} from "../../../../test/helpers/broker.ts";
import { capturingLogger } from "../../../../test/helpers/shop.ts";
import { testShop } from "../../../../test/helpers/test-shop.ts";
import { collect, waitFor } from "../../../../test/helpers/wait.ts";
import { readConfig as paymentsConfig } from "../../../payments/src/config.ts";
import { startPayments } from "../../../payments/src/server.ts";
import type { OrdersService } from "../../src/server.ts";

let vhost: ShopVhost;
let proxy: TcpProxy;
let orders: OrdersService;
const ordersLog = capturingLogger("broker-orders");

const shop = testShop("failures");

beforeAll(async () => {
  vhost = await shop.vhost();
  const r = shopConfig().rabbit;
  proxy = await TcpProxy.start(r.host, r.port);
  shop.own({ stop: () => proxy.close() });
  // The orders service reaches RabbitMQ through the proxy, so that a test can cut it off.
  orders = await shop.brokerOrders(vhost, { BROKER_PORT: String(proxy.port) }, ordersLog);
});

const novoPedido = () =>
  createBrokerPedido(orders.url, [{ sku: "CHA", quantidade: 1, precoUnitario: 12.5 }]);
const pedir = (id: string, solicitacaoId: string, cenario = "APROVAR") =>
  requestPagamento<{ erro?: string; mensagem?: string; estado?: string; solicitacaoId?: string }>(
    orders.url,
    id,
    solicitacaoId,
    cenario,
  );
const estado = (id: string) => getBrokerPedido(orders.url, id);

/** A message in the queue as the management API shows it, without consuming it for good. */
async function espiar(queue: string) {
  const res = await vhost.api("POST", `/queues/{vhost}/${encodeURIComponent(queue)}/get`, {
    count: 1,
    ackmode: "ack_requeue_true",
    encoding: "auto",
  });
  return (await res.json()) as {
    payload: string;
    properties: { content_type?: string; delivery_mode?: number };
  }[];
}

describe("Consumer stopped", () => {
  it("When the payments consumer is stopped, then 202, the order is EM_PAGAMENTO and the message sits Ready in pagamentos.solicitacoes (management API)", async () => {
    const p = await novoPedido();
    const key = randomUUID();
    expect((await pedir(p.id, key)).status).toBe(202);
    expect((await estado(p.id)).status).toBe("EM_PAGAMENTO");
    const fila = await waitFor(
      async () => {
        const q = (await (
          await vhost.api("GET", `/queues/{vhost}/${QUEUES.solicitacoes}`)
        ).json()) as { messages_ready?: number };
        return (q.messages_ready ?? 0) >= 1 && q;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: "the management API to show the message Ready" },
    );
    expect(fila.messages_ready).toBe(1);
    const [msg] = await espiar(QUEUES.solicitacoes);
    expect(msg?.properties.content_type).toBe("application/json");
    expect(msg?.properties.delivery_mode).toBe(2);
    expect(JSON.parse(msg?.payload ?? "{}")).toEqual({
      versao: 1,
      solicitacaoId: key,
      pedidoId: p.id,
      valor: 12.5,
      cenario: "APROVAR",
    });
  });
});

describe("Broker down", () => {
  it("When RabbitMQ cannot be reached, then 503 within about 5 s and the key stays PENDENTE; when it is back, the same request recovers: 202 and then PAGO", async () => {
    const p = await novoPedido();
    const key = randomUUID();
    proxy.cutConnections();
    const started = Date.now();
    const down = await pedir(p.id, key);
    expect(down.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(6500);
    expect(down.body.erro).toMatch(/stays PENDENTE/);
    // Issue 18: the course's client reads the key to repeat and a sentence for a person.
    expect(down.body.solicitacaoId).toBe(key);
    expect(down.body.mensagem).toMatch(/PENDENTE/);
    expect((await estado(p.id)).status).toBe("EM_PAGAMENTO");

    proxy.restore();
    const payments = await startPayments(
      paymentsConfig(brokerEnv(vhost, "payments-down")),
      capturingLogger("broker-payments"),
    );
    try {
      const back = await pedir(p.id, key);
      expect(back.status).toBe(202);
      await waitFor(async () => (await estado(p.id)).status === "PAGO", {
        what: "PAGO after recovery",
      });
    } finally {
      await payments.stop();
    }
  }, 60_000);
});

describe("Unroutable publish", () => {
  it("When the binding is removed, then the publish is returned: 503 with the key kept PENDENTE; rebound, the same key gives 202", async () => {
    const conn = await amqp.connect(vhost.url);
    const ch = await conn.createChannel();
    await ch.unbindQueue(QUEUES.solicitacoes, EXCHANGES.commands, ROUTING_KEYS.solicitar);
    try {
      const p = await novoPedido();
      const key = randomUUID();
      const res = await pedir(p.id, key);
      expect(res.status).toBe(503);
      expect(res.body.erro).toMatch(/no queue is bound/);
      expect((await estado(p.id)).status).toBe("EM_PAGAMENTO");
      await ch.bindQueue(QUEUES.solicitacoes, EXCHANGES.commands, ROUTING_KEYS.solicitar);
      expect((await pedir(p.id, key)).status).toBe(202);
    } finally {
      await ch.bindQueue(QUEUES.solicitacoes, EXCHANGES.commands, ROUTING_KEYS.solicitar);
      await conn.close();
    }
  });
});

describe("Divergent content goes to .erros after 3 attempts", () => {
  it("Rules B18 and B20: when a result names another pedidoId, then the orders consumer fails 3 times, the message lands in pedidos.resultados.erros and the record is unchanged", async () => {
    const p = await novoPedido();
    const key = randomUUID();
    await pedir(p.id, key);
    const antes = await readyCount(vhost, ERROR_QUEUES.resultados);
    const retentadas = collect(orders.events, "retried");
    const mortas = collect(orders.events, "dead-lettered");
    const falso = JSON.stringify({
      versao: 1,
      solicitacaoId: key,
      pedidoId: randomUUID(),
      valor: 12.5,
      aprovado: true,
      motivo: "x",
    });
    await publishRaw(vhost, EXCHANGES.events, ROUTING_KEYS.resultado, falso);
    await waitFor(async () => (await readyCount(vhost, ERROR_QUEUES.resultados)) === antes + 1, {
      what: "the result in .erros",
    });
    // The consumer wrapper's events: two attempts returned, the third dead-lettered, each
    // failing on the evidence.
    expect(retentadas.map((e) => e.attempt)).toEqual([1, 2]);
    expect(mortas).toHaveLength(1);
    for (const e of [...retentadas.map((r) => r.error), mortas[0]?.reason])
      expect(e).toMatch(/differs from the record/);
    expect((await estado(p.id)).status).toBe("EM_PAGAMENTO");
  }, 30_000);

  it("Rules B18 and B22: when a result is not even JSON, then it also lands in pedidos.resultados.erros after 3 attempts", async () => {
    const antes = await readyCount(vhost, ERROR_QUEUES.resultados);
    await publishRaw(vhost, EXCHANGES.events, ROUTING_KEYS.resultado, "<xml/>");
    await waitFor(async () => (await readyCount(vhost, ERROR_QUEUES.resultados)) === antes + 1, {
      what: "the poison in .erros",
    });
  }, 30_000);
});
