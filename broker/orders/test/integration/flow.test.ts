import { randomUUID } from "node:crypto";
import { EXCHANGES, type HistoricoBroker, QUEUES, ROUTING_KEYS } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVhost, type ShopVhost } from "../../../../harness/vhost.ts";
import {
  brokerEnv,
  createBrokerPedido,
  getBrokerPedido,
  type PedidoBroker,
  publishRaw,
  readyCount,
  requestPagamento,
} from "../../../../test/helpers/broker.ts";
import { capturingLogger, http } from "../../../../test/helpers/shop.ts";
import { collect, waitFor } from "../../../../test/helpers/wait.ts";
import { readConfig as paymentsConfig } from "../../../payments/src/config.ts";
import { type PaymentsService, startPayments } from "../../../payments/src/server.ts";
import { readConfig } from "../../src/config.ts";
import { type OrdersService, startOrders } from "../../src/server.ts";

let vhost: ShopVhost;
let orders: OrdersService;
let payments: PaymentsService | null = null;
const paymentsLog = capturingLogger("broker-payments");
let paymentsEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  vhost = await createVhost("fluxo");
  orders = await startOrders(
    readConfig(brokerEnv(vhost, "orders")),
    capturingLogger("broker-orders"),
  );
  paymentsEnv = brokerEnv(vhost, "payments");
  payments = await startPayments(paymentsConfig(paymentsEnv), paymentsLog);
});

afterAll(async () => {
  await payments?.stop();
  await orders?.stop();
  await vhost?.dispose();
});

const novoPedido = (itens?: PedidoBroker["itens"]) => createBrokerPedido(orders.url, itens);
const pedir = (id: string, solicitacaoId: string, cenario: string) =>
  requestPagamento(orders.url, id, solicitacaoId, cenario);
const estado = (id: string) => getBrokerPedido(orders.url, id);
const ate = (id: string, status: string) =>
  waitFor(async () => (await estado(id)).status === status, { what: `order ${id} ${status}` });

const historico = async (id: string) =>
  (await http<HistoricoBroker>("GET", `${orders.url}/pedidos/${id}/historico`)).body;

async function pararPagamentos() {
  await payments?.stop();
  payments = null;
}
async function voltarPagamentos() {
  payments = await startPayments(paymentsConfig(paymentsEnv), paymentsLog);
}

describe("Orders (broker edition)", () => {
  it("When an order is created, then 201 with a UUID id, status ABERTO, the total computed from the items, and the items", async () => {
    const p = await novoPedido();
    expect(p.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(p).toMatchObject({
      clienteId: "cli-1",
      status: "ABERTO",
      total: 37.8,
      itens: [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
    });
    expect(await estado(p.id)).toEqual(p);
  });

  it("Issue 34: when orders exist, then GET /pedidos lists them newest first with status and total; limite takes fewer, and a limite out of range is 400", async () => {
    const made = [await novoPedido(), await novoPedido(), await novoPedido()];
    const listed = await http<PedidoBroker[]>("GET", `${orders.url}/pedidos`);
    expect(listed.status).toBe(200);
    const ids = listed.body.map((p) => p.id);
    // Newest first: the three just made lead the list, the last one made on top.
    expect(ids.slice(0, 3)).toEqual(made.map((p) => p.id).reverse());
    expect(listed.body[0]).toEqual(made[2]);
    const two = await http<PedidoBroker[]>("GET", `${orders.url}/pedidos?limite=2`);
    expect(two.body.map((p) => p.id)).toEqual(ids.slice(0, 2));
    for (const bad of ["0", "5001", "x"])
      expect((await http("GET", `${orders.url}/pedidos?limite=${bad}`)).status, bad).toBe(400);
  });

  const invalidos: [string, unknown][] = [
    ["no items", { clienteId: "c", itens: [] }],
    ["a missing clienteId", { itens: [{ sku: "A", quantidade: 1, precoUnitario: 1 }] }],
    ["quantidade < 1", { clienteId: "c", itens: [{ sku: "A", quantidade: 0, precoUnitario: 1 }] }],
    [
      "precoUnitario ≤ 0",
      { clienteId: "c", itens: [{ sku: "A", quantidade: 1, precoUnitario: 0 }] },
    ],
  ];
  for (const [what, body] of invalidos) {
    it(`When the body has ${what}, then 400 with field details`, async () => {
      const res = await http<{ erro: string; campos: Record<string, string> }>(
        "POST",
        `${orders.url}/pedidos`,
        body,
      );
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.campos).length).toBeGreaterThan(0);
    });
  }
  it("When the body is malformed JSON, then 400", async () => {
    expect((await http("POST", `${orders.url}/pedidos`, "{nope")).status).toBe(400);
  });

  it("When an item is added while ABERTO, then 200 with the new total; an unknown order is 404", async () => {
    const p = await novoPedido();
    const res = await http<PedidoBroker>("POST", `${orders.url}/pedidos/${p.id}/itens`, {
      sku: "PAO",
      quantidade: 3,
      precoUnitario: 0.5,
    });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(39.3);
    expect(
      (
        await http("POST", `${orders.url}/pedidos/${randomUUID()}/itens`, {
          sku: "PAO",
          quantidade: 1,
          precoUnitario: 1,
        })
      ).status,
    ).toBe(404);
    expect((await http("GET", `${orders.url}/pedidos/${randomUUID()}`)).status).toBe(404);
  });
});

describe("Consumers", () => {
  it("Prefetch is 1: each consumer of both queues holds at most one unacknowledged message (CONSUMIDORES consumers per queue)", async () => {
    const expected = readConfig(brokerEnv(vhost, "x")).consumers;
    const consumers = await waitFor(
      async () => {
        const list = (await (await vhost.api("GET", "/consumers/{vhost}")).json()) as {
          queue: { name: string };
          prefetch_count: number;
        }[];
        return list.length === 2 * expected ? list : null;
      },
      { what: `${2 * expected} consumers in the management API` },
    );
    for (const queue of [QUEUES.solicitacoes, QUEUES.resultados]) {
      const mine = consumers.filter((c) => c.queue.name === queue);
      expect(mine, queue).toHaveLength(expected);
      for (const c of mine) expect(c.prefetch_count, queue).toBe(1);
    }
  });
});

describe("Timeline: GET /pedidos/{id}/historico (broker edition)", () => {
  it("When a refusal then an approval are requested, then each request's timeline shows record stored, publish confirmed, decision stored and result applied, in order", async () => {
    const p = await novoPedido();
    const recusa = randomUUID();
    expect((await pedir(p.id, recusa, "RECUSAR")).status).toBe(202);
    await waitFor(async () => (await historico(p.id)).solicitacoes[0]?.etapas.length === 4, {
      what: "the refusal's four steps",
    });
    const aprovacao = randomUUID();
    expect((await pedir(p.id, aprovacao, "APROVAR")).status).toBe(202);
    await ate(p.id, "PAGO");
    const h = await waitFor(
      async () => {
        const body = await historico(p.id);
        return body.solicitacoes[1]?.etapas.length === 4 ? body : null;
      },
      { what: "the approval's four steps" },
    );
    expect(h.solicitacoes.map((s) => s.solicitacaoId)).toEqual([recusa, aprovacao]);
    for (const s of h.solicitacoes) {
      expect(s.etapas.map((e) => e.etapa)).toEqual([
        "registro-guardado",
        "publicacao-confirmada",
        "decisao-guardada",
        "resultado-aplicado",
      ]);
      // The decision may be stored before the publisher's confirm reaches the orders service.
      const [guardado, confirmado, decidido, aplicado] = s.etapas.map((e) => Date.parse(e.em));
      expect(confirmado).toBeGreaterThanOrEqual(guardado as number);
      expect(decidido).toBeGreaterThanOrEqual(guardado as number);
      expect(aplicado).toBeGreaterThanOrEqual(decidido as number);
    }
    expect(h.solicitacoes[0]?.etapas[2]?.detalhes).toMatchObject({ aprovado: false });
    expect(h.solicitacoes[1]?.etapas[2]?.detalhes).toMatchObject({ aprovado: true });
    expect((await http("GET", `${orders.url}/pedidos/${randomUUID()}/historico`)).status).toBe(404);
  });
});

describe("POST /pedidos/{pedidoId}/pagamentos", () => {
  it("When APROVAR is requested, then 202 (accepted, not paid) with the amount read from the order, and the order ends PAGO", async () => {
    const p = await novoPedido();
    const key = randomUUID();
    const res = await pedir(p.id, key, "APROVAR");
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      solicitacaoId: key,
      pedidoId: p.id,
      valor: 37.8,
      cenario: "APROVAR",
      estado: "PENDENTE",
      motivo: null,
    });
    await ate(p.id, "PAGO");
  });

  it("Rule B4: when a concluded request is repeated, then 200 with the stored result and nothing is published", async () => {
    const p = await novoPedido();
    const key = randomUUID();
    await pedir(p.id, key, "APROVAR");
    await ate(p.id, "PAGO");
    await pararPagamentos();
    try {
      const res = await pedir(p.id, key, "APROVAR");
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        solicitacaoId: key,
        pedidoId: p.id,
        valor: 37.8,
        cenario: "APROVAR",
        estado: "APROVADO",
        aprovado: true,
        motivo: expect.stringMatching(/aprovado/),
      });
      expect(await readyCount(vhost, QUEUES.solicitacoes)).toBe(0);
    } finally {
      await voltarPagamentos();
    }
  });

  it("Request rules: a pending repeat is 202 and published again; another cenario under the key is 409; items are locked; a new key is 409", async () => {
    await pararPagamentos();
    try {
      const p = await novoPedido();
      const key = randomUUID();
      expect((await pedir(p.id, key, "APROVAR")).status).toBe(202);
      expect((await estado(p.id)).status).toBe("EM_PAGAMENTO");
      expect((await pedir(p.id, key, "APROVAR")).status).toBe(202);
      expect(await readyCount(vhost, QUEUES.solicitacoes)).toBe(2);

      const conflito = await pedir(p.id, key, "RECUSAR");
      expect(conflito.status).toBe(409);
      expect(conflito.body.erro).toMatch(/different content/);

      const item = await http<{ erro: string }>("POST", `${orders.url}/pedidos/${p.id}/itens`, {
        sku: "X",
        quantidade: 1,
        precoUnitario: 1,
      });
      expect(item.status).toBe(409);
      expect((await estado(p.id)).total).toBe(37.8);

      expect((await pedir(p.id, randomUUID(), "APROVAR")).status).toBe(409);
    } finally {
      await voltarPagamentos();
    }
  });

  it("Request rules: an unknown order is 404; malformed JSON, a bad UUID, an unknown cenario or a client-sent amount are 400", async () => {
    const p = await novoPedido();
    expect((await pedir(randomUUID(), randomUUID(), "APROVAR")).status).toBe(404);
    expect((await http("POST", `${orders.url}/pedidos/${p.id}/pagamentos`, "{oops")).status).toBe(
      400,
    );
    expect((await pedir(p.id, "not-a-uuid", "APROVAR")).status).toBe(400);
    expect((await pedir(p.id, randomUUID(), "TALVEZ")).status).toBe(400);
    const comValor = await http("POST", `${orders.url}/pedidos/${p.id}/pagamentos`, {
      solicitacaoId: randomUUID(),
      cenario: "APROVAR",
      valor: 1,
    });
    expect(comValor.status).toBe(400);
    expect((await estado(p.id)).status).toBe("ABERTO");
  });

  it("Rules B19 and B21: refusal, then approval: the order goes back to ABERTO with items and total unchanged, then PAGO; the old refusal repeated changes nothing", async () => {
    const p = await novoPedido();
    const recusa = randomUUID();
    expect((await pedir(p.id, recusa, "RECUSAR")).status).toBe(202);
    await ate(p.id, "ABERTO");
    const depois = await estado(p.id);
    expect(depois.total).toBe(37.8);
    expect(depois.itens).toEqual(p.itens);
    const repetida = await pedir(p.id, recusa, "RECUSAR");
    expect(repetida.status).toBe(200);
    expect(repetida.body).toMatchObject({ aprovado: false });

    expect((await pedir(p.id, randomUUID(), "APROVAR")).status).toBe(202);
    await ate(p.id, "PAGO");

    // The old refusal's result arrives again, long after.
    const antigo = JSON.stringify({
      versao: 1,
      solicitacaoId: recusa,
      pedidoId: p.id,
      valor: 37.8,
      aprovado: false,
      motivo: "recusado",
    });
    await publishRaw(vhost, EXCHANGES.events, ROUTING_KEYS.resultado, antigo);
    await waitFor(async () => (await readyCount(vhost, QUEUES.resultados)) === 0);
    expect((await estado(p.id)).status).toBe("PAGO");
    expect((await pedir(p.id, randomUUID(), "APROVAR")).status).toBe(409); // a paid order takes no new request
  });

  it("Two deliveries: an approval command delivered twice gives one stored decision and a PAGO order", async () => {
    const p = await novoPedido();
    const key = randomUUID();
    const tratadas = collect((payments as PaymentsService).events, "acked");
    await pedir(p.id, key, "APROVAR");
    await publishRaw(
      vhost,
      EXCHANGES.commands,
      ROUTING_KEYS.solicitar,
      JSON.stringify({
        versao: 1,
        solicitacaoId: key,
        pedidoId: p.id,
        valor: 37.8,
        cenario: "APROVAR",
      }),
    );
    await ate(p.id, "PAGO");
    // Both deliveries handled and acked by payments (the second as a repeat).
    await waitFor(() => tratadas.length === 2, { what: "both deliveries acked" });
    const decisoes = (await http<{ solicitacaoId: string }[]>("GET", `${payments?.url}/decisoes`))
      .body;
    expect(decisoes.filter((d) => d.solicitacaoId === key)).toHaveLength(1);
  });

  it("The old endpoint: the synchronous approval sent by the client does not exist (404)", async () => {
    const p = await novoPedido();
    for (const path of [
      `/pedidos/${p.id}/aprovacao`,
      `/pedidos/${p.id}/pagamento`,
      "/pagamentos",
    ]) {
      expect(
        (await http("POST", `${orders.url}${path}`, { aprovado: true, motivo: "eu mesmo" })).status,
        path,
      ).toBe(404);
    }
    expect((await estado(p.id)).status).toBe("ABERTO");
  });
});
