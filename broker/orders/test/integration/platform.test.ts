import { ATTEMPTS } from "@shop/amqp";
import { ERROR_QUEUES, type PlataformaBroker, QUEUES, TOPOLOGY } from "@shop/contracts";
import { beforeAll, describe, expect, it } from "vitest";
import type { ShopVhost } from "../../../../harness/vhost.ts";
import { brokerEnv, publishRaw, readyCount } from "../../../../test/helpers/broker.ts";
import { http } from "../../../../test/helpers/shop.ts";
import { testShop } from "../../../../test/helpers/test-shop.ts";
import { readConfig } from "../../src/config.ts";

/**
 * GET /plataforma of the broker edition: the RabbitMQ side of the platform panel, read from
 * the management API as the monitoring user (issue 17). On a cluster the fault suite checks
 * it shows a new leader and a node down (test/faults/broker.test.ts); here, on one node.
 */
const shop = testShop("platform");
let vhost: ShopVhost;
const start = (extra: Record<string, string> = {}) => shop.brokerOrders(vhost, extra);

beforeAll(async () => {
  vhost = await shop.vhost();
});

describe("The broker panel (GET /plataforma)", () => {
  it("When read, then it shows the node running and each of the shop's queues with its type, leader and members, the exchange bound to it and where it dead-letters, for a user who may touch no message", async () => {
    const orders = await start();
    const res = await http<PlataformaBroker>("GET", `${orders.url}/plataforma`);
    expect(res.status).toBe(200);
    const { nos, filas } = res.body;
    expect(nos.length).toBeGreaterThanOrEqual(1);
    const running = nos.filter((n) => n.ativo).map((n) => n.nome);
    expect(running.length).toBeGreaterThanOrEqual(1);
    expect(filas.map((f) => f.nome).sort()).toEqual(
      [...Object.values(QUEUES), ...Object.values(ERROR_QUEUES)].sort(),
    );
    for (const q of Object.values(QUEUES)) {
      const f = filas.find((x) => x.nome === q);
      expect(f?.tipo, q).toBe("quorum");
      expect(running, q).toContain(f?.lider);
      expect(f?.membros, q).toContain(f?.lider);
      expect(f?.emLinha, q).toEqual(f?.membros);
    }
    // Issue 56: the topology as RabbitMQ holds it, for the page's picture: the exchange and
    // key that route to each queue, and where it dead-letters.
    for (const b of TOPOLOGY) {
      const f = filas.find((x) => x.nome === b.queue);
      expect(f?.de, b.queue).toEqual([
        { exchange: b.exchange, tipo: b.exchangeType, chave: b.routingKey },
      ]);
      expect(f?.cartasMortasPara, b.queue).toBe(b.deadLetterQueue);
      expect(f?.limiteDeEntregas, b.queue).toBe(ATTEMPTS);
      expect(filas.find((x) => x.nome === b.deadLetterQueue)?.de).toEqual([]);
    }
  });

  it("When a message has just arrived in a queue, then the panel's next read counts it, as RabbitMQ does, not seconds later with the management API's statistics", async () => {
    const orders = await start();
    const queue = ERROR_QUEUES.solicitacoes;
    const before = await readyCount(vhost, queue);
    // Straight into the .erros queue (the default exchange), where no consumer takes it.
    await publishRaw(vhost, "", queue, JSON.stringify({ chegou: "agora" }));
    const res = await http<PlataformaBroker>("GET", `${orders.url}/plataforma`);
    const f = res.body.filas.find((x) => x.nome === queue);
    expect(f?.prontas).toBe(before + 1);
    expect(f?.mensagens).toBe(before + 1);
    expect(f?.consumidores).toBe(0);
    // The work queue it dead-letters from: the orders service's payments are not running
    // here, so nothing consumes it either; its members still come from the management API.
    const work = res.body.filas.find((x) => x.nome === QUEUES.solicitacoes);
    expect(work?.consumidores).toBe(0);
    expect(work?.membros?.length).toBeGreaterThanOrEqual(1);
  });

  it("When the web page (FRONT_ORIGIN) asks, then CORS lets it read the panel; a FRONT_ORIGIN of * is refused at start", async () => {
    const orders = await start({ FRONT_ORIGIN: "http://localhost:5173" });
    const res = await http("GET", `${orders.url}/plataforma`, undefined, {
      origin: "http://localhost:5173",
    });
    expect(res.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(() => readConfig(brokerEnv(vhost, "orders", { FRONT_ORIGIN: "*" }))).toThrow(
      /FRONT_ORIGIN/,
    );
  });

  it("When no monitoring user is set, then it answers 503 naming BROKER_MONITOR_USER", async () => {
    const orders = await start({ BROKER_MONITOR_USER: "", BROKER_MONITOR_PASSWORD: "" });
    const res = await http<{ erro: string }>("GET", `${orders.url}/plataforma`);
    expect(res.status).toBe(503);
    expect(res.body.erro).toMatch(/BROKER_MONITOR_USER/);
  });

  it("When no management API answers, then it answers 503 naming BROKER_PANEL_URL", async () => {
    const orders = await start({ BROKER_PANEL_URL: "http://127.0.0.1:9" });
    const res = await http<{ erro: string }>("GET", `${orders.url}/plataforma`);
    expect(res.status).toBe(503);
    expect(res.body.erro).toMatch(/BROKER_PANEL_URL/);
  });
});
