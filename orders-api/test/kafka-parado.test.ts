import type { Pedido } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownKafka } from "../../test/helpers/own-kafka.ts";
import { capturingLogger, http, serviceEnv, tempDb, testPrefix } from "../../test/helpers/shop.ts";
import { readConfig } from "../src/config.ts";
import { type OrdersApi, startOrdersApi } from "../src/server.ts";

/**
 * The spec's configuration (OUTBOX=desligado). This file stops a broker: it runs its own,
 * so that no other test is disturbed.
 */
const kafka = ownKafka("fault-orders");
const prefix = testPrefix("parado");
let api: OrdersApi;
const apiLog = capturingLogger("orders-api");

beforeAll(async () => {
  await kafka.start();
  const env = {
    ...serviceEnv(prefix, { DB_PATH: tempDb("parado") }),
    KAFKA_BROKERS: kafka.brokers,
  };
  api = await startOrdersApi(readConfig(env), apiLog);
}, 120_000);

afterAll(async () => {
  await kafka.start();
  await api?.stop();
  await kafka.dispose();
}, 120_000);

const pedido = { cliente: "Duda", item: "mochila", quantidade: 1, precoUnitario: 80 };

describe("When Kafka is stopped", () => {
  it("When the platform is down, then POST /pedidos answers 500 within 4 to 7 s and the order stays saved AGUARDANDO_PAGAMENTO", async () => {
    expect((await http("POST", `${api.url}/pedidos`, pedido)).status).toBe(201);
    await kafka.stop();

    const started = Date.now();
    const res = await http<{ erro: string }>("POST", `${api.url}/pedidos`, pedido);
    const seconds = (Date.now() - started) / 1000;

    expect(res.status).toBe(500);
    expect(seconds).toBeGreaterThanOrEqual(4);
    expect(seconds).toBeLessThanOrEqual(7);
    expect(res.body.erro).toMatch(/was saved, but Kafka did not acknowledge/);
    const [newest] = (await http<Pedido[]>("GET", `${api.url}/pedidos`)).body;
    expect(newest).toMatchObject({ item: "mochila", status: "AGUARDANDO_PAGAMENTO" });
    expect(res.body.erro).toContain(`order ${newest?.id}`);
  }, 60_000);

  it("When Kafka is back, then the same API publishes again and answers 201, and the order saved during the outage is still AGUARDANDO_PAGAMENTO", async () => {
    await kafka.start();
    const res = await http<Pedido>("POST", `${api.url}/pedidos`, pedido);
    expect(res.status).toBe(201);
    const orphan = (await http<Pedido[]>("GET", `${api.url}/pedidos`)).body.find(
      (p) => p.id === res.body.id - 1,
    );
    expect(orphan?.status).toBe("AGUARDANDO_PAGAMENTO");
  }, 60_000);
});
