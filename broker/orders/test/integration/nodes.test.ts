import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { shopConfig } from "../../../../harness/env.ts";
import { TcpProxy } from "../../../../harness/tcp-proxy.ts";
import type { ShopVhost } from "../../../../harness/vhost.ts";
import {
  brokerEnv,
  createBrokerPedido,
  requestPagamento,
} from "../../../../test/helpers/broker.ts";
import { testShop } from "../../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../../test/helpers/wait.ts";
import { readConfig } from "../../src/config.ts";
import type { OrdersService } from "../../src/server.ts";

/**
 * BROKER_NODES: a cluster's nodes, tried in turn. Two proxies stand for two nodes (both in
 * front of the same RabbitMQ): when the service's node goes away, it connects to the next.
 */
let vhost: ShopVhost;
let first: TcpProxy;
let second: TcpProxy;
let orders: OrdersService;

const shop = testShop("nodes");

beforeAll(async () => {
  vhost = await shop.vhost();
  const r = shopConfig().rabbit;
  [first, second] = await Promise.all([
    TcpProxy.start(r.host, r.port),
    TcpProxy.start(r.host, r.port),
  ]);
  shop.own({ stop: () => Promise.all([first.close(), second.close()]) });
  orders = await shop.brokerOrders(vhost, {
    BROKER_NODES: `127.0.0.1:${first.port},127.0.0.1:${second.port}`,
  });
});

describe("A cluster's nodes (BROKER_NODES)", () => {
  it("When the node the service is connected to goes away, then it connects to the next node and payment requests are accepted again", async () => {
    const p = await createBrokerPedido(orders.url);
    expect((await requestPagamento(orders.url, p.id, randomUUID())).status).toBe(202);
    expect(first.open).toBeGreaterThan(0);
    expect(second.open).toBe(0);

    first.cutConnections(); // that node is gone, and refuses new connections
    await waitFor(() => second.open > 0, { what: "a connection to the second node" });
    const q = await createBrokerPedido(orders.url);
    const key = randomUUID();
    const accepted = await waitFor(
      async () => (await requestPagamento(orders.url, q.id, key)).status === 202,
      { timeoutMs: 20_000, intervalMs: 250, what: "a 202 through the second node" },
    );
    expect(accepted).toBe(true);
    expect(first.open).toBe(0);
  }, 60_000);

  it("When BROKER_NODES is not a list of host:port, then the service refuses to start, naming the setting", () => {
    expect(() => readConfig(brokerEnv(vhost, "orders", { BROKER_NODES: "rabbit-1" }))).toThrow(
      /BROKER_NODES/,
    );
  });
});
