import type { Pedido } from "@shop/contracts";
import type { Consumer, EachMessagePayload } from "kafkajs";
import { beforeAll, describe, expect, it } from "vitest";
import { aPedido, aPedidoCriado } from "../../../test/helpers/fixtures.ts";
import { testKafka } from "../../../test/helpers/kafka.ts";
import {
  capturingLogger,
  http,
  logRecords,
  serviceEnv,
  tempDb,
} from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import { readConfig } from "../../src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../src/server.ts";

const shop = testShop("pedidos");
const { prefix, names: nomes } = shop;
const FRONT = "http://localhost:5173";
let api: OrdersApi;
let consumer: Consumer;
const eventos: EachMessagePayload[] = [];

beforeAll(async () => {
  ({ api } = await shop.ordersApi({ FRONT_ORIGIN: FRONT }));
  consumer = testKafka().consumer({ groupId: `${prefix}observer` });
  await consumer.connect();
  shop.own({ stop: () => consumer.disconnect() });
  await consumer.subscribe({ topic: nomes.topics.pedidosCriados, fromBeginning: true });
  await consumer.run({
    eachMessage: async (payload) => {
      eventos.push(payload);
    },
  });
});

const valido = { cliente: "Ana", item: "caneca", quantidade: 3, precoUnitario: 18.9 };

describe("POST /pedidos (event-log edition)", () => {
  it("When the body is valid, then 201 with every Order field, valor computed by the server, AGUARDANDO_PAGAMENTO", async () => {
    const res = await http<Pedido>("POST", `${api.url}/pedidos`, valido);
    expect(res.status).toBe(201);
    expect(res.body).toEqual(
      aPedido({
        id: expect.any(Number),
        quantidade: 3,
        valor: 56.7,
        criadoEm: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      }),
    );
  });

  it("When an order is created, then PedidoCriado is on pedidos-criados with key = pedidoId, JSON text and no type header", async () => {
    const { body } = await http<Pedido>("POST", `${api.url}/pedidos`, {
      ...valido,
      quantidade: 1,
      precoUnitario: 0.1,
    });
    const evento = await waitFor(
      () => eventos.find((e) => e.message.key?.toString() === String(body.id)),
      {
        what: "the PedidoCriado event",
      },
    );
    expect(JSON.parse(evento.message.value?.toString() ?? "")).toEqual(
      aPedidoCriado({ pedidoId: body.id, quantidade: 1, valor: 0.1, criadoEm: body.criadoEm }),
    );
    // No type header: the only header is the W3C trace context of the request.
    expect(Object.keys(evento.message.headers ?? {})).toEqual(["traceparent"]);
  });

  const breaches: [string, unknown, string][] = [
    ["blank cliente", { ...valido, cliente: "  " }, "cliente"],
    ["missing item", { cliente: "Ana", quantidade: 1, precoUnitario: 1 }, "item"],
    ["quantidade 0", { ...valido, quantidade: 0 }, "quantidade"],
    ["quantidade 51", { ...valido, quantidade: 51 }, "quantidade"],
    ["fractional quantidade", { ...valido, quantidade: 2.5 }, "quantidade"],
    ["quantidade as text", { ...valido, quantidade: "2" }, "quantidade"],
    ["precoUnitario 0", { ...valido, precoUnitario: 0 }, "precoUnitario"],
    ["negative precoUnitario", { ...valido, precoUnitario: -3 }, "precoUnitario"],
    ["precoUnitario with three decimals", { ...valido, precoUnitario: 1.999 }, "precoUnitario"],
    ["a client-sent total", { ...valido, valor: 1 }, "(body)"],
    ["an array body", [valido], "(body)"],
  ];
  for (const [what, body, field] of breaches) {
    it(`Input rule: when the body has ${what}, then 400 names ${field} and nothing is stored`, async () => {
      const before = (await http<Pedido[]>("GET", `${api.url}/pedidos`)).body.length;
      const res = await http<{ erro: string; campos: Record<string, string> }>(
        "POST",
        `${api.url}/pedidos`,
        body,
      );
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.campos)).toContain(field);
      expect((await http<Pedido[]>("GET", `${api.url}/pedidos`)).body.length).toBe(before);
    });
  }

  it("When the JSON is malformed, then 400 with a clear message and nothing is stored", async () => {
    const before = (await http<Pedido[]>("GET", `${api.url}/pedidos`)).body.length;
    const res = await http<{ erro: string }>("POST", `${api.url}/pedidos`, '{"cliente": "Ana",');
    expect(res.status).toBe(400);
    expect(res.body.erro).toMatch(/malformed JSON/);
    expect((await http<Pedido[]>("GET", `${api.url}/pedidos`)).body.length).toBe(before);
  });
});

describe("GET /pedidos and GET /pedidos/{id}", () => {
  it("When several orders exist, then GET /pedidos lists them newest first (descending id)", async () => {
    for (const item of ["a", "b", "c"])
      await http("POST", `${api.url}/pedidos`, { ...valido, item });
    const ids = (await http<Pedido[]>("GET", `${api.url}/pedidos`)).body.map((p) => p.id);
    expect(ids.length).toBeGreaterThanOrEqual(3);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it("When the order exists, then GET /pedidos/{id} gives it; when not, 404", async () => {
    const { body } = await http<Pedido>("POST", `${api.url}/pedidos`, valido);
    expect((await http<Pedido>("GET", `${api.url}/pedidos/${body.id}`)).body).toEqual(body);
    const missing = await http<{ erro: string }>("GET", `${api.url}/pedidos/999999`);
    expect(missing.status).toBe(404);
    expect(missing.body.erro).toMatch(/not found/);
    expect((await http("GET", `${api.url}/pedidos/abc`)).status).toBe(404);
  });
});

describe("Cross-origin calls", () => {
  it("When the front origin calls, then CORS allows it; another origin gets no allowance", async () => {
    const ok = await http("GET", `${api.url}/pedidos`, undefined, { origin: FRONT });
    expect(ok.headers.get("access-control-allow-origin")).toBe(FRONT);
    const other = await http("GET", `${api.url}/pedidos`, undefined, {
      origin: "http://evil.example",
    });
    expect(other.headers.get("access-control-allow-origin")).not.toBe("http://evil.example");
  });
});

describe("Topics at start-up", () => {
  it("When the API starts, then both topics exist with 3 partitions (and their dead-letter topics); a second start does nothing", async () => {
    const admin = testKafka().admin();
    await admin.connect();
    const meta = await admin.fetchTopicMetadata({
      topics: [nomes.topics.pedidosCriados, nomes.topics.pagamentosResultados],
    });
    for (const t of meta.topics) expect(t.partitions).toHaveLength(3);
    const dlqMeta = await admin.fetchTopicMetadata({
      topics: [nomes.dlq.pedidosCriados, nomes.dlq.pagamentosResultados],
    });
    expect(dlqMeta.topics).toHaveLength(2);
    const log = capturingLogger("orders-api-2");
    const second = await startOrdersApi(
      readConfig(serviceEnv(prefix, { DB_PATH: tempDb("second") })), // SQLite: only its start matters
      log,
    );
    await second.stop();
    // The start-up line that lists topics it created carries them in the field `topics`.
    expect(logRecords(log.lines).filter((r) => r.topics !== undefined)).toEqual([]);
    await admin.disconnect();
  });
});
