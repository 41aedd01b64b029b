import { beforeAll, describe, expect, it } from "vitest";
import { testShop } from "../../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../../test/helpers/wait.ts";
import type { OrdersService } from "../../src/server.ts";

/**
 * The course this edition ports drives it with a client collection of ten requests. They
 * are sent here as that client sends them: plain JSON over fetch, the course's own keys,
 * and the fields its lessons read checked in every answer (docs/CONTRACT-CHANGES.md).
 */
const APROVACAO = "11111111-1111-4111-8111-111111111111";
const RECUSA = "22222222-2222-4222-8222-222222222222";
const DESCONHECIDO = "00000000-0000-4000-8000-000000000000";

const shop = testShop("collection");
let orders: OrdersService;

beforeAll(async () => {
  const vhost = await shop.vhost();
  orders = await shop.brokerOrders(vhost);
  await shop.brokerPayments(vhost);
});

/** One request of the collection: method, path and JSON body, as the client sends it. */
async function send(method: "GET" | "POST", path: string, body?: unknown) {
  const res = await fetch(`${orders.url}${path}`, {
    method,
    headers: { "Content-Type": "application/json", Accept: "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const criarPedido = () =>
  send("POST", "/pedidos", {
    clienteId: "cliente-curso",
    itens: [{ sku: "CAFE", quantidade: 2, precoUnitario: 18.9 }],
  });

/** An error answer as the course's client reads it: erro, and a sentence for a person. */
function expectErrorBody(body: Record<string, unknown>) {
  expect(typeof body.erro).toBe("string");
  expect(typeof body.mensagem).toBe("string");
  expect((body.mensagem as string).length).toBeGreaterThan(5);
}

describe("The course's client collection of ten requests, unchanged, against the broker edition", () => {
  it("When the ten requests are sent in order, then each answers the status and the fields the course reads", async () => {
    // 1. Create an order.
    const criado = await criarPedido();
    expect(criado.status).toBe(201);
    expect(criado.body).toMatchObject({ status: "ABERTO", total: 37.8 });
    const pedidoId = criado.body.id as string;

    // 2. Read it.
    const lido = await send("GET", `/pedidos/${pedidoId}`);
    expect(lido.status).toBe(200);
    expect(lido.body).toMatchObject({ id: pedidoId, status: "ABERTO", total: 37.8 });

    // 3. Request its approval: accepted, not paid.
    const aprovacao = { solicitacaoId: APROVACAO, cenario: "APROVAR" };
    const aceito = await send("POST", `/pedidos/${pedidoId}/pagamentos`, aprovacao);
    expect(aceito.status).toBe(202);
    expect(aceito.body).toEqual({
      solicitacaoId: APROVACAO,
      pedidoId,
      valor: 37.8,
      cenario: "APROVAR",
      estado: "PENDENTE",
      motivo: null,
    });

    // 4. Repeat it: 202 while pending, then "200 com estado APROVADO" once concluded.
    const concluido = await waitFor(
      async () => {
        const r = await send("POST", `/pedidos/${pedidoId}/pagamentos`, aprovacao);
        expect([200, 202]).toContain(r.status);
        return r.status === 200 && r;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "the approval to be concluded" },
    );
    expect(concluido.body).toMatchObject({
      solicitacaoId: APROVACAO,
      pedidoId,
      valor: 37.8,
      cenario: "APROVAR",
      estado: "APROVADO",
      aprovado: true,
    });
    expect(concluido.body).toHaveProperty("motivo");
    expect((await send("GET", `/pedidos/${pedidoId}`)).body.status).toBe("PAGO");

    // 5. Request a refusal on another order.
    const outro = (await criarPedido()).body.id as string;
    const recusa = await send("POST", `/pedidos/${outro}/pagamentos`, {
      solicitacaoId: RECUSA,
      cenario: "RECUSAR",
    });
    expect(recusa.status).toBe(202);
    expect(recusa.body).toMatchObject({ cenario: "RECUSAR", estado: "PENDENTE", motivo: null });

    // 6. Read it back: ABERTO again, total unchanged.
    const reaberto = await waitFor(
      async () => {
        const r = await send("GET", `/pedidos/${outro}`);
        return r.body.status === "ABERTO" && r;
      },
      { timeoutMs: 30_000, intervalMs: 200, what: "the refused order back to ABERTO" },
    );
    expect(reaberto.body.total).toBe(37.8);
    const repetida = await send("POST", `/pedidos/${outro}/pagamentos`, {
      solicitacaoId: RECUSA,
      cenario: "RECUSAR",
    });
    expect(repetida.status).toBe(200);
    expect(repetida.body).toMatchObject({
      estado: "RECUSADO",
      aprovado: false,
      cenario: "RECUSAR",
    });

    // 7. The approval's key with cenario RECUSAR: another content under the same key.
    const conflito = await send("POST", `/pedidos/${pedidoId}/pagamentos`, {
      solicitacaoId: APROVACAO,
      cenario: "RECUSAR",
    });
    expect(conflito.status).toBe(409);
    expectErrorBody(conflito.body);

    // 8. An order that does not exist.
    const desconhecido = await send("POST", `/pedidos/${DESCONHECIDO}/pagamentos`, {
      solicitacaoId: "33333333-3333-4333-8333-333333333333",
      cenario: "APROVAR",
    });
    expect(desconhecido.status).toBe(404);
    expectErrorBody(desconhecido.body);

    // 9. A key that is not a UUID.
    const invalido = await send("POST", `/pedidos/${outro}/pagamentos`, {
      solicitacaoId: "nao-e-uuid",
      cenario: "APROVAR",
    });
    expect(invalido.status).toBe(400);
    expectErrorBody(invalido.body);
    expect(invalido.body.campos).toHaveProperty("solicitacaoId");

    // 10. An item added after the payment request: the items are locked.
    const item = await send("POST", `/pedidos/${pedidoId}/itens`, {
      sku: "PAO",
      quantidade: 1,
      precoUnitario: 1.5,
    });
    expect(item.status).toBe(409);
    expectErrorBody(item.body);
  }, 90_000);
});
