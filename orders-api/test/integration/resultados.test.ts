import type { Historico, Pedido } from "@shop/contracts";
import type { Consumer, EachMessagePayload, Producer } from "kafkajs";
import { beforeAll, describe, expect, it } from "vitest";
import { aResultado } from "../../../test/helpers/fixtures.ts";
import { testKafka } from "../../../test/helpers/kafka.ts";
import { capturingLogger, http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { collect, waitFor } from "../../../test/helpers/wait.ts";
import type { OrdersApi } from "../../src/server.ts";

const shop = testShop("resultados");
const nomes = shop.names;
const log = capturingLogger("orders-api");
let api: OrdersApi;
let producer: Producer;
let dlqConsumer: Consumer;
const dlq: EachMessagePayload[] = [];
let deadLettered: { where: string; reason: string; key: string | null }[] = [];

beforeAll(async () => {
  ({ api } = await shop.ordersApi({}, log));
  deadLettered = collect(
    (api.consumer as NonNullable<OrdersApi["consumer"]>).events,
    "dead-lettered",
  );
  const kafka = testKafka();
  producer = kafka.producer();
  await producer.connect();
  shop.own({ stop: () => producer.disconnect() });
  dlqConsumer = kafka.consumer({ groupId: `${shop.prefix}dlq-observer` });
  await dlqConsumer.connect();
  shop.own({ stop: () => dlqConsumer.disconnect() });
  await dlqConsumer.subscribe({ topic: nomes.dlq.pagamentosResultados, fromBeginning: true });
  await dlqConsumer.run({
    eachMessage: async (p) => {
      dlq.push(p);
    },
  });
});

async function novoPedido(): Promise<Pedido> {
  const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
    cliente: "Bia",
    item: "livro",
    quantidade: 1,
    precoUnitario: 42,
  });
  expect(res.status).toBe(201);
  return res.body;
}

function resultado(pedidoId: number, status: "APROVADO" | "RECUSADO", instancia: string) {
  return JSON.stringify(
    aResultado({
      pedidoId,
      status,
      motivo: status === "APROVADO" ? null : "limite do cartão de teste",
      instancia,
    }),
  );
}

async function publicar(key: string, value: string) {
  await producer.send({
    topic: nomes.topics.pagamentosResultados,
    acks: -1,
    messages: [{ key, value }],
  });
}

const pedidoAtual = async (id: number) =>
  (await http<Pedido>("GET", `${api.url}/pedidos/${id}`)).body;

describe("Rule E7: the results consumer updates an order only while AGUARDANDO_PAGAMENTO", () => {
  it("When an APROVADO result arrives, then the order is PAGO with motivo and processadoPor set", async () => {
    const p = await novoPedido();
    await publicar(String(p.id), resultado(p.id, "APROVADO", "caixa-1"));
    const pago = await waitFor(async () => {
      const atual = await pedidoAtual(p.id);
      return atual.status === "PAGO" && atual;
    });
    expect(pago).toMatchObject({ status: "PAGO", motivo: null, processadoPor: "caixa-1" });
  });

  it("When the same result is repeated, then nothing changes; a later RECUSADO for a PAGO order is ignored too", async () => {
    const p = await novoPedido();
    await publicar(String(p.id), resultado(p.id, "APROVADO", "caixa-1"));
    await publicar(String(p.id), resultado(p.id, "APROVADO", "caixa-2"));
    await publicar(String(p.id), resultado(p.id, "RECUSADO", "caixa-3"));
    // A marker result on the same key and partition, published last: once it is applied,
    // every earlier record of this order has been consumed.
    const marker = await novoPedido();
    await publicar(String(marker.id), resultado(marker.id, "RECUSADO", "marker"));
    await waitFor(async () => (await pedidoAtual(marker.id)).status === "RECUSADO");
    // The order's own timeline: two results read and recognised as repeats.
    await waitFor(
      async () =>
        (await http<Historico>("GET", `${api.url}/pedidos/${p.id}/historico`)).body.etapas.filter(
          (e) => e.etapa === "resultado-repetido",
        ).length === 2,
      { what: "two repeated results on the timeline" },
    );
    expect(await pedidoAtual(p.id)).toMatchObject({
      status: "PAGO",
      processadoPor: "caixa-1",
      motivo: null,
    });
  });

  it("When a RECUSADO result arrives, then the order is RECUSADO with the motivo", async () => {
    const p = await novoPedido();
    await publicar(String(p.id), resultado(p.id, "RECUSADO", "caixa-2"));
    await waitFor(async () => (await pedidoAtual(p.id)).status === "RECUSADO");
    expect(await pedidoAtual(p.id)).toMatchObject({
      motivo: "limite do cartão de teste",
      processadoPor: "caixa-2",
    });
  });
});

describe("A poison record on pagamentos-resultados never blocks its partition", () => {
  const poisons: [string, string, string][] = [
    ["bad JSON", "{oops", "not JSON"],
    ["an unknown versao", JSON.stringify({ versao: 9, pedidoId: 1 }), "unknown versao 9"],
    [
      "a missing field",
      JSON.stringify({ versao: 1, pedidoId: 1, status: "APROVADO", motivo: null }),
      "instancia",
    ],
  ];
  for (const [what, value, reason] of poisons) {
    it(`When a record has ${what}, then it lands in the DLQ with the reason and the next valid record is still applied`, async () => {
      const p = await novoPedido();
      // Same key as the next valid record: same partition, right before it.
      await publicar(String(p.id), value);
      await publicar(String(p.id), resultado(p.id, "APROVADO", "caixa-1"));
      await waitFor(async () => (await pedidoAtual(p.id)).status === "PAGO", {
        what: "the valid record after the poison",
      });
      const dead = await waitFor(() => dlq.find((d) => d.message.key?.toString() === String(p.id)));
      expect(dead.message.value?.toString()).toBe(value);
      const headers = Object.fromEntries(
        Object.entries(dead.message.headers ?? {}).map(([k, v]) => [k, String(v)]),
      );
      expect(headers["dlq-motivo"]).toContain(reason);
      expect(headers["dlq-topico-original"]).toBe(nomes.topics.pagamentosResultados);
      expect(Number(headers["dlq-particao-original"])).toBeGreaterThanOrEqual(0);
      expect(Number(headers["dlq-offset-original"])).toBeGreaterThanOrEqual(0);
      // The consumer wrapper's own event, not its log line.
      expect(deadLettered.some((m) => m.key === String(p.id) && m.reason.includes(reason))).toBe(
        true,
      );
    });
  }

  it("When a record's key is not its pedidoId, then it is dead-lettered as a contract breach", async () => {
    const p = await novoPedido();
    await publicar("not-the-id", resultado(p.id, "APROVADO", "caixa-1"));
    const dead = await waitFor(() => dlq.find((d) => d.message.key?.toString() === "not-the-id"));
    expect(String(dead.message.headers?.["dlq-motivo"])).toMatch(/does not match/);
    expect((await pedidoAtual(p.id)).status).toBe("AGUARDANDO_PAGAMENTO");
  });
});

describe("Timeline: GET /pedidos/{id}/historico", () => {
  it("When an order is created, acknowledged, decided and the result repeated, then its timeline shows each step with partition, offset, instance and time, in order", async () => {
    const p = await novoPedido();
    await publicar(String(p.id), resultado(p.id, "APROVADO", "caixa-7"));
    await publicar(String(p.id), resultado(p.id, "APROVADO", "caixa-8"));
    const h = await waitFor(
      async () => {
        const r = await http<Historico>("GET", `${api.url}/pedidos/${p.id}/historico`);
        return r.body.etapas.length === 6 ? r.body : null;
      },
      { what: "six steps on the timeline" },
    );
    expect(h.etapas.map((e) => e.etapa)).toEqual([
      "criado",
      "evento-confirmado",
      "decidido",
      "resultado-aplicado",
      "decidido",
      "resultado-repetido",
    ]);
    const [criado, confirmado, decidido, aplicado] = h.etapas;
    expect(criado?.em).toBe(p.criadoEm);
    expect(confirmado?.detalhes).toMatchObject({ topico: nomes.topics.pedidosCriados });
    expect(confirmado?.detalhes.particao).toBeTypeOf("number");
    expect(Number(confirmado?.detalhes.offset)).toBeGreaterThanOrEqual(0);
    expect(decidido?.detalhes).toMatchObject({
      instancia: "caixa-7",
      status: "APROVADO",
      topico: nomes.topics.pagamentosResultados,
    });
    expect(aplicado?.detalhes).toEqual({ status: "PAGO" });
    const tempos = h.etapas.map((e) => Date.parse(e.em));
    expect(tempos.every((t) => Number.isFinite(t))).toBe(true);
    expect(tempos[1]).toBeGreaterThanOrEqual(tempos[0] as number);
    expect((await http("GET", `${api.url}/pedidos/999999999/historico`)).status).toBe(404);
  });

  it("When the outbox publishes an event, then the partition and offset on the timeline are where the record really is", async () => {
    const p = await novoPedido();
    const h = (await http<Historico>("GET", `${api.url}/pedidos/${p.id}/historico`)).body;
    const confirmado = h.etapas.find((e) => e.etapa === "evento-confirmado");
    const kafka = testKafka();
    const consumer = kafka.consumer({ groupId: `${shop.prefix}historico-${p.id}` });
    await consumer.connect();
    try {
      const partition = Number(confirmado?.detalhes.particao);
      const offset = String(confirmado?.detalhes.offset);
      let value: string | null = null;
      await consumer.subscribe({ topic: nomes.topics.pedidosCriados, fromBeginning: true });
      await consumer.run({
        eachMessage: async (m) => {
          if (m.partition === partition && m.message.offset === offset)
            value = m.message.value?.toString() ?? null;
        },
      });
      await waitFor(() => value !== null, { what: "the record at the timeline's offset" });
      expect(JSON.parse(value as unknown as string)).toMatchObject({ pedidoId: p.id });
    } finally {
      await consumer.disconnect();
    }
  });
});

describe("Metrics: GET /metrics", () => {
  const valor = (texto: string, linha: string) => {
    const found = texto.split("\n").find((l) => l.startsWith(`${linha} `));
    return found ? Number(found.slice(linha.length + 1)) : 0;
  };

  it("When 3 orders are created and their results applied, then the counts move by 3: HTTP 201s, events confirmed, results consumed; the outbox gauge is back to 0; Kafka requests are counted by API", async () => {
    const antes = (await http<string>("GET", `${api.url}/metrics`)).body;
    const criados = `shop_messages_confirmed_total{destino="${nomes.topics.pedidosCriados}"}`;
    const consumidos = `shop_messages_consumed_total{destino="${nomes.topics.pagamentosResultados}"}`;
    const http201 =
      'shop_http_request_duration_seconds_count{method="POST",route="/pedidos",status="201"}';
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await novoPedido()).id);
    for (const id of ids) await publicar(String(id), resultado(id, "APROVADO", "caixa-m"));
    const depois = await waitFor(
      async () => {
        const t = (await http<string>("GET", `${api.url}/metrics`)).body;
        return valor(t, consumidos) - valor(antes, consumidos) >= 3 ? t : null;
      },
      { what: "three results consumed in the metrics" },
    );
    expect(valor(depois, criados) - valor(antes, criados)).toBe(3);
    expect(valor(depois, consumidos) - valor(antes, consumidos)).toBe(3);
    expect(valor(depois, http201) - valor(antes, http201)).toBe(3);
    expect(valor(depois, "shop_outbox_pending")).toBe(0);
    // The round trips behind them, by Kafka API: at least one produce request (the outbox's
    // batches) and the consumer's fetches.
    const produce = 'shop_kafka_requests_total{api="Produce"}';
    expect(valor(depois, produce) - valor(antes, produce)).toBeGreaterThanOrEqual(1);
    expect(valor(depois, 'shop_kafka_requests_total{api="Fetch"}')).toBeGreaterThan(0);
    expect(depois).toMatch(/shop_consumer_lag\{group="[^"]+",topic="[^"]+",partition="\d"\} \d+/);
  });
});
