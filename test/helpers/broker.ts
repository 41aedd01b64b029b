import amqp from "amqplib";
import { brokerEnv } from "../../harness/env.ts";

export { brokerEnv };

import { createVhost, type ShopVhost } from "../../harness/vhost.ts";
import { http, ServiceProcess } from "./shop.ts";

/** Messages ready in a queue now (queue.declare passive: not the panel's delayed statistics). */
export async function readyCount(vhost: ShopVhost, queue: string): Promise<number> {
  const conn = await amqp.connect(vhost.url);
  try {
    const ch = await conn.createChannel();
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await conn.close();
  }
}

/** Publishes raw bytes to an exchange in the test vhost, as a misbehaving producer would. */
export async function publishRaw(
  vhost: ShopVhost,
  exchange: string,
  routingKey: string,
  body: string,
): Promise<void> {
  const conn = await amqp.connect(vhost.url);
  try {
    const ch = await conn.createConfirmChannel();
    ch.publish(exchange, routingKey, Buffer.from(body), {
      contentType: "application/json",
      persistent: true,
    });
    await ch.waitForConfirms();
  } finally {
    await conn.close();
  }
}

/** What a test gets from inOwnVhost: its vhost, both services' environments, a starter. */
export interface BrokerTestEnv {
  vhost: ShopVhost;
  ordersEnv: NodeJS.ProcessEnv;
  paymentsEnv: NodeJS.ProcessEnv;
  /** Starts a broker-edition service as a real process; it is stopped when the test ends. */
  start(
    name: string,
    dir: "broker/orders" | "broker/payments",
    env: NodeJS.ProcessEnv,
  ): Promise<ServiceProcess>;
}

/**
 * Runs a test with the broker edition's services as real processes, in a vhost of its
 * own, so that a queue left stuck by one test cannot fail the next. If the test fails,
 * its error ends with the broker's view of the vhost's queues (ready, unacked, consumers)
 * and alarms. Every process it started is stopped, and the vhost deleted, at the end.
 */
export async function inOwnVhost(
  prefixo: string,
  fn: (a: BrokerTestEnv) => Promise<void>,
): Promise<void> {
  const vhost = await createVhost(prefixo);
  const running: ServiceProcess[] = [];
  try {
    await fn({
      vhost,
      ordersEnv: brokerEnv(vhost, "orders"),
      paymentsEnv: brokerEnv(vhost, "payments"),
      async start(name, dir, env) {
        const p = await ServiceProcess.start(name, dir, env);
        running.push(p);
        return p;
      },
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${message}\n--- broker state of ${vhost.vhost}:\n${await vhost.estado()}`, {
      cause: error,
    });
  } finally {
    await Promise.all(running.map((p) => p.stop()));
    await vhost.dispose();
  }
}

/** An order of the broker edition as its orders service returns it. */
export interface PedidoBroker {
  id: string;
  clienteId: string;
  status: string;
  total: number;
  itens: { sku: string; quantidade: number; precoUnitario: number }[];
}

/** Creates an order through the orders service's API; fails unless the answer is 201. */
export async function createBrokerPedido(
  ordersUrl: string,
  itens = [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
): Promise<PedidoBroker> {
  const res = await http<PedidoBroker>("POST", `${ordersUrl}/pedidos`, {
    clienteId: "cli-1",
    itens,
  });
  if (res.status !== 201) throw new Error(`POST /pedidos answered ${res.status}, not 201`);
  return res.body;
}

/** POST /pedidos/{id}/pagamentos with a key and a cenario. */
export const requestPagamento = <T = Record<string, unknown>>(
  ordersUrl: string,
  pedidoId: string,
  solicitacaoId: string,
  cenario = "APROVAR",
) => http<T>("POST", `${ordersUrl}/pedidos/${pedidoId}/pagamentos`, { solicitacaoId, cenario });

/** GET /pedidos/{id}: the order as it is now. */
export const getBrokerPedido = async (ordersUrl: string, pedidoId: string) =>
  (await http<PedidoBroker>("GET", `${ordersUrl}/pedidos/${pedidoId}`)).body;
