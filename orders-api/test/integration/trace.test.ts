import type { Historico, Pedido } from "@shop/contracts";
import type { IHeaders } from "kafkajs";
import { beforeAll, describe, expect, it } from "vitest";
import { testKafka } from "../../../test/helpers/kafka.ts";
import { capturingLogger, http, logRecords } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import type { OrdersApi } from "../../src/server.ts";

const shop = testShop("trace");
const nomes = shop.names;
const ordersLog = capturingLogger("orders-api");
const paymentsLog = capturingLogger("payments");
const impressas: string[] = [];
let api: OrdersApi;

beforeAll(async () => {
  ({ api } = await shop.ordersApi({}, ordersLog));
  await shop.payments({ TEMPO_DECISAO_MS: "0", INSTANCIA: "caixa-t" }, paymentsLog, (line) =>
    impressas.push(line),
  );
});

/** The record of this order on a topic, with its headers. */
async function headersDoRegistro(topic: string, pedidoId: number): Promise<IHeaders> {
  const consumer = testKafka().consumer({ groupId: `${shop.prefix}observer-${topic}` });
  await consumer.connect();
  try {
    let found: IHeaders | null = null;
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.key?.toString() === String(pedidoId)) found = message.headers ?? {};
      },
    });
    return await waitFor(() => found, { what: `order ${pedidoId}'s record on ${topic}` });
  } finally {
    await consumer.disconnect();
  }
}

const traceDe = (h: IHeaders) => h.traceparent?.toString().split("-")[1];

describe("W3C trace context from POST /pedidos to the result applied", () => {
  it("When a client sends a traceparent, then the same trace id is in the answer, in the PedidoCriado and ResultadoPagamento record headers, in payments' and the orders API's log lines for that order, and on its timeline", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const res = await http<Pedido>(
      "POST",
      `${api.url}/pedidos`,
      { cliente: "Ana", item: "caneca", quantidade: 1, precoUnitario: 10 },
      { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get("traceparent")).toMatch(
      new RegExp(`^00-${traceId}-[0-9a-f]{16}-0[01]$`),
    );
    const id = res.body.id;

    await waitFor(
      async () => (await http<Pedido>("GET", `${api.url}/pedidos/${id}`)).body.status === "PAGO",
      {
        what: "the order PAGO",
      },
    );
    const criado = await headersDoRegistro(nomes.topics.pedidosCriados, id);
    const resultado = await headersDoRegistro(nomes.topics.pagamentosResultados, id);
    expect(traceDe(criado)).toBe(traceId);
    expect(traceDe(resultado)).toBe(traceId);
    // Each hop is a span of its own.
    expect(criado.traceparent?.toString()).not.toBe(resultado.traceparent?.toString());

    // The line of the applied result: the one for this order that names who decided it.
    const aplicado = logRecords(ordersLog.lines).find((r) => r.pedido === id && r.por);
    expect(aplicado?.trace).toBe(traceId);
    // payments' one line per decision names the order and the trace
    expect(impressas.find((l) => l.includes(`pedido=${id} `))).toContain(`trace=${traceId}`);

    const h = (await http<Historico>("GET", `${api.url}/pedidos/${id}/historico`)).body;
    expect(h.etapas.find((e) => e.etapa === "decidido")?.detalhes.trace).toBe(traceId);
  });

  it("When a client sends no traceparent (or a malformed one), then a new trace starts and is returned", async () => {
    const res = await http(
      "POST",
      `${api.url}/pedidos`,
      { cliente: "Bia", item: "x", quantidade: 1, precoUnitario: 1 },
      {
        traceparent: "garbage",
      },
    );
    expect(res.headers.get("traceparent")).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
  });
});
