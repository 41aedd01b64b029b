import type { DeadLetter, Pedido, Plataforma } from "@shop/contracts";
import type { Consumer, EachMessagePayload } from "kafkajs";
import { beforeAll, describe, expect, it } from "vitest";
import type { OrdersApi } from "../../../orders-api/src/server.ts";
import { testKafka } from "../../../test/helpers/kafka.ts";
import { capturingLogger, http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import type { PaymentsInstance } from "../../src/server.ts";

const shop = testShop("payments");
const { prefix, names: nomes } = shop;
const printed: string[] = [];
let api: OrdersApi;
let payments: PaymentsInstance;
let dlqConsumer: Consumer;
const dlq: EachMessagePayload[] = [];

beforeAll(async () => {
  ({ api } = await shop.ordersApi());
  payments = await shop.payments(
    { TEMPO_DECISAO_MS: "100", INSTANCIA: "caixa-1" },
    capturingLogger("payments"),
    (line) => printed.push(line),
  );
  const kafka = testKafka();
  dlqConsumer = kafka.consumer({ groupId: `${prefix}dlq-observer` });
  await dlqConsumer.connect();
  shop.own({ stop: () => dlqConsumer.disconnect() });
  await dlqConsumer.subscribe({ topic: nomes.dlq.pedidosCriados, fromBeginning: true });
  await dlqConsumer.run({
    eachMessage: async (p) => {
      dlq.push(p);
    },
  });
});

async function pedir(quantidade: number, precoUnitario: number) {
  const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
    cliente: "Caio",
    item: "fone",
    quantidade,
    precoUnitario,
  });
  expect(res.status).toBe(201);
  return res.body;
}

const finalizado = (id: number) =>
  waitFor(
    async () => {
      const p = (await http<Pedido>("GET", `${api.url}/pedidos/${id}`)).body;
      return p.status !== "AGUARDANDO_PAGAMENTO" && p;
    },
    { timeoutMs: 30_000, what: `order ${id} to be decided` },
  );

describe("Rule E6: payments decides after the wait and publishes the result with the same key", () => {
  it("When valor is exactly 100.00, then the order ends PAGO, processed by caixa-1", async () => {
    const p = await pedir(4, 25);
    expect(p.valor).toBe(100);
    expect(await finalizado(p.id)).toMatchObject({
      status: "PAGO",
      motivo: null,
      processadoPor: "caixa-1",
    });
  });

  it("When valor is 100.01, then the order ends RECUSADO with the motivo 'limite do cartão de teste'", async () => {
    const p = await pedir(1, 100.01);
    expect(await finalizado(p.id)).toMatchObject({
      status: "RECUSADO",
      motivo: "limite do cartão de teste",
      processadoPor: "caixa-1",
    });
  });

  it("When a record is decided, then one line shows partition, offset, order, decision and instance", async () => {
    const p = await pedir(1, 5);
    await finalizado(p.id);
    const line = printed.find((l) => l.includes(`pedido=${p.id} `));
    expect(line).toMatch(
      new RegExp(
        `partition=\\d offset=\\d+ pedido=${p.id} valor=5.00 decision=APROVADO instance=caixa-1`,
      ),
    );
  });

  it("Rule E1: all records of an order are on one partition: its PedidoCriado and its ResultadoPagamento share it", async () => {
    const ids = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => pedir(1, n).then((p) => p.id)));
    await Promise.all(ids.map(finalizado));
    const kafka = testKafka();
    const seen = new Map<string, Set<number>>();
    const consumer = kafka.consumer({ groupId: `${prefix}partition-check` });
    await consumer.connect();
    await consumer.subscribe({
      topics: [nomes.topics.pedidosCriados, nomes.topics.pagamentosResultados],
      fromBeginning: true,
    });
    let count = 0;
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const key = String(message.key);
        seen.set(key, (seen.get(key) ?? new Set()).add(partition));
        count++;
      },
    });
    await waitFor(
      () => ids.every((id) => (seen.get(String(id))?.size ?? 0) > 0) && count >= ids.length * 2,
    );
    await consumer.disconnect();
    for (const id of ids) expect(seen.get(String(id))?.size).toBe(1);
    expect(new Set(ids.map((id) => [...(seen.get(String(id)) ?? [])][0])).size).toBeGreaterThan(1);
  });
});

describe("Payments HTTP endpoints", () => {
  it("When asked GET /saude, then it reports the instance, a connected consumer and its partitions", async () => {
    const saude = await http<{
      instancia: string;
      consumidor: { conectado: boolean; particoes: Record<string, number[]> };
    }>("GET", `${payments.url}/saude`);
    expect(saude.status).toBe(200);
    expect(saude.body.instancia).toBe("caixa-1");
    expect(saude.body.consumidor.conectado).toBe(true);
    expect(saude.body.consumidor.particoes[nomes.topics.pedidosCriados]).toEqual([0, 1, 2]);
  });

  it("When asked GET /pagamentos, then it lists what this instance processed, newest first", async () => {
    const lista = (
      await http<{ pedidoId: number; status: string; particao: number }[]>(
        "GET",
        `${payments.url}/pagamentos`,
      )
    ).body;
    expect(lista.length).toBeGreaterThanOrEqual(3);
    const tempos = lista.map((p) => (p as unknown as { processadoEm: string }).processadoEm);
    expect(tempos).toEqual([...tempos].sort().reverse());
  });

  it("When events are used, then POST /pagamentos does not exist (404)", async () => {
    expect(
      (await http("POST", `${payments.url}/pagamentos`, { pedidoId: 1, valor: 10 })).status,
    ).toBe(404);
  });
});

describe("The platform panel's endpoint (GET /plataforma on the orders API)", () => {
  it("When asked, then it shows per partition the end offset and each group's committed offset and lag, and the pagamentos members with their partitions", async () => {
    const p = await pedir(1, 3);
    await finalizado(p.id);
    const plataforma = await waitFor(
      async () => {
        const body = (await http<Plataforma>("GET", `${api.url}/plataforma`)).body;
        const criados = body.topicos.find((t) => t.topic === nomes.topics.pedidosCriados);
        const lagPagamentos = criados?.particoes.flatMap((x) =>
          x.grupos.filter((g) => g.grupo === nomes.groups.pagamentos).map((g) => g.lag),
        );
        return lagPagamentos?.every((lag) => lag === 0) && body;
      },
      { what: "the pagamentos group to have no lag" },
    );

    const criados = plataforma.topicos.find((t) => t.topic === nomes.topics.pedidosCriados);
    expect(criados?.particoes.map((x) => x.partition)).toEqual([0, 1, 2]);
    const total = criados?.particoes.reduce((sum, x) => sum + x.endOffset, 0) ?? 0;
    expect(total).toBeGreaterThanOrEqual(10);
    for (const x of criados?.particoes ?? []) {
      const g = x.grupos.find((y) => y.grupo === nomes.groups.pagamentos);
      expect(g?.committedOffset).toBe(x.endOffset);
    }
    const pagamentos = plataforma.grupos.find((g) => g.grupo === nomes.groups.pagamentos);
    expect(pagamentos?.membros).toHaveLength(1);
    expect(pagamentos?.membros[0]?.clientId).toBe("payments-caixa-1");
    expect(pagamentos?.membros[0]?.particoes[nomes.topics.pedidosCriados]).toEqual([0, 1, 2]);
  });
});

describe("A poison record on pedidos-criados never blocks its partition", () => {
  it("When a malformed PedidoCriado arrives, then it lands in pedidos-criados.dlq and the next valid order is still decided", async () => {
    const producer = testKafka().producer();
    await producer.connect();
    // Key "1" hashes to a fixed partition; the valid order after it reuses whatever partition its id gives.
    await producer.send({
      topic: nomes.topics.pedidosCriados,
      acks: -1,
      messages: [0, 1, 2].map((i) => ({
        key: `poison-${i}`,
        value: `{"versao": 1, "pedidoId": "x${i}"}`,
      })),
    });
    await producer.disconnect();
    const p = await pedir(2, 10);
    expect(await finalizado(p.id)).toMatchObject({ status: "PAGO" });
    await waitFor(() => dlq.length >= 3, { what: "three dead letters" });
    expect(dlq.map((d) => String(d.message.headers?.["dlq-topico-original"]))).toEqual(
      Array(3).fill(nomes.topics.pedidosCriados),
    );
    expect(String(dlq[0]?.message.headers?.["dlq-motivo"])).toMatch(/pedidoId/);
  });
});

describe("The platform panel sees every reader and the dead letters (issue 19)", () => {
  it("When a group the spec does not name (auditoria) has committed offsets on the shop's topics, then /plataforma lists it with its lag; the dead-letter topics are counted", async () => {
    const auditoria = `${prefix}auditoria`;
    const admin = testKafka().admin();
    await admin.connect();
    try {
      await admin.setOffsets({
        groupId: auditoria,
        topic: nomes.topics.pedidosCriados,
        partitions: [0, 1, 2].map((partition) => ({ partition, offset: "0" })),
      });
    } finally {
      await admin.disconnect();
    }
    // Readers other than the spec's are looked for every 10 s.
    const plataforma = await waitFor(
      async () => {
        const body = (await http<Plataforma>("GET", `${api.url}/plataforma`)).body;
        return body.grupos.some((g) => g.grupo === auditoria) && body;
      },
      { timeoutMs: 20_000, intervalMs: 500, what: "auditoria on the panel" },
    );
    const criados = plataforma.topicos.find((t) => t.topic === nomes.topics.pedidosCriados);
    for (const p of criados?.particoes ?? []) {
      expect(p.grupos.find((g) => g.grupo === auditoria)).toEqual({
        grupo: auditoria,
        committedOffset: 0,
        lag: p.endOffset,
      });
    }
    // The group that only watches the dead-letter topic reads none of the shop's topics.
    expect(plataforma.grupos.map((g) => g.grupo)).not.toContain(`${prefix}dlq-observer`);
    expect(plataforma.mortas).toEqual([
      { topic: nomes.dlq.pedidosCriados, origem: nomes.topics.pedidosCriados, cartas: dlq.length },
      {
        topic: nomes.dlq.pagamentosResultados,
        origem: nomes.topics.pagamentosResultados,
        cartas: 0,
      },
    ]);
    // The letters themselves, read-only: where each failed, why and when.
    const cartas = await http<DeadLetter[]>(
      "GET",
      `${api.url}/plataforma/mortas/${nomes.dlq.pedidosCriados}`,
    );
    expect(cartas.status).toBe(200);
    expect(cartas.body).toHaveLength(dlq.length);
    for (const c of cartas.body) {
      expect(c.origem.startsWith(`${nomes.topics.pedidosCriados}[`)).toBe(true);
      expect(c.motivo).toMatch(/pedidoId/);
      expect(Number.isNaN(Date.parse(c.em ?? ""))).toBe(false);
    }
    // Only the shop's dead-letter topics are read through this route.
    const other = await http("GET", `${api.url}/plataforma/mortas/${nomes.topics.pedidosCriados}`);
    expect(other.status).toBe(404);
  });
});
