import type { Pedido } from "@shop/contracts";
import { beforeAll, describe, expect, it } from "vitest";
import type { PaymentsInstance } from "../../../payments/src/server.ts";
import { capturingLogger, http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import type { OrdersApi } from "../../src/server.ts";

/** The earlier configuration: no Kafka at all, so both point at a port where nothing listens. */
const semKafka = { KAFKA_BROKERS: "127.0.0.1:1", MODO: "sincrono" };
const shop = testShop("synchronous");
let payments: PaymentsInstance;
let api: OrdersApi;

beforeAll(async () => {
  payments = await shop.payments(
    { ...semKafka, TEMPO_DECISAO_MS: "300", INSTANCIA: "caixa-sync" },
    capturingLogger("payments"),
    () => {},
  );
  ({ api } = await shop.ordersApi({ ...semKafka, PAGAMENTOS_URL: payments.url }));
});

describe("The synchronous configuration (MODO=sincrono)", () => {
  it("When payments is up, then POST /pedidos waits for its decision and answers 201 with the final status", async () => {
    const started = Date.now();
    const aprovado = await http<Pedido>("POST", `${api.url}/pedidos`, {
      cliente: "Eva",
      item: "lápis",
      quantidade: 10,
      precoUnitario: 10,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(aprovado.status).toBe(201);
    expect(aprovado.body).toMatchObject({
      valor: 100,
      status: "PAGO",
      motivo: null,
      processadoPor: "caixa-sync",
    });

    const recusado = await http<Pedido>("POST", `${api.url}/pedidos`, {
      cliente: "Eva",
      item: "tv",
      quantidade: 1,
      precoUnitario: 100.01,
    });
    expect(recusado.body).toMatchObject({
      status: "RECUSADO",
      motivo: "limite do cartão de teste",
      processadoPor: "caixa-sync",
    });
  });

  it("When payments answers POST /pagamentos, then the body has status, motivo and instancia; a bad body is 400", async () => {
    const ok = await http("POST", `${payments.url}/pagamentos`, { pedidoId: 7, valor: 99.99 });
    expect(ok.body).toEqual({ status: "APROVADO", motivo: null, instancia: "caixa-sync" });
    const bad = await http<{ campos: Record<string, string> }>(
      "POST",
      `${payments.url}/pagamentos`,
      { pedidoId: 7, valor: -1 },
    );
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.campos)).toEqual(["valor"]);
  });

  it("When payments is down, then the client gets 500 and the order stays AGUARDANDO_PAGAMENTO", async () => {
    await payments.stop();
    const res = await http<{ erro: string }>("POST", `${api.url}/pedidos`, {
      cliente: "Eva",
      item: "rádio",
      quantidade: 1,
      precoUnitario: 20,
    });
    expect(res.status).toBe(500);
    expect(res.body.erro).toMatch(/payments did not answer/);
    const [newest] = (await http<Pedido[]>("GET", `${api.url}/pedidos`)).body;
    expect(newest).toMatchObject({
      item: "rádio",
      status: "AGUARDANDO_PAGAMENTO",
      processadoPor: null,
    });
  });
});
