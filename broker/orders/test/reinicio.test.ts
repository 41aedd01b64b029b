import { randomUUID } from "node:crypto";
import { FILAS_ERROS } from "@shop/contracts";
import { describe, expect, it } from "vitest";
import { emVhostProprio, prontas } from "../../../test/helpers/broker.ts";
import { http } from "../../../test/helpers/shop.ts";

describe("Orders consumer rule 4: ack only after the commit", () => {
  it(
    "When the orders service is killed -9 after committing a result and before its ack, then the redelivered result changes nothing: the order stays PAGO, the record concluded once, nothing in .erros",
    () =>
      emVhostProprio("reinicio", async ({ start, vhost, ordersEnv, paymentsEnv }) => {
        let orders = await start("orders", "broker/orders", {
          ...ordersEnv,
          PAUSA_ANTES_DO_ACK_MS: "60000",
        });
        await start("payments", "broker/payments", paymentsEnv);
        const pedido = (
          await http<{ id: string }>("POST", `${orders.url()}/pedidos`, {
            clienteId: "c",
            itens: [{ sku: "BOLO", quantidade: 1, precoUnitario: 30 }],
          })
        ).body;
        const key = randomUUID();
        const pedir = await http("POST", `${orders.url()}/pedidos/${pedido.id}/pagamentos`, {
          solicitacaoId: key,
          cenario: "APROVAR",
        });
        expect(pedir.status).toBe(202);

        // The result is committed (the order is PAGO) while its delivery is still unacked.
        await orders.waitForLine(new RegExp(`(?=.*pausing 60000 ms before the ack)(?=.*${key})`));
        const antes = await http<{ status: string }>("GET", `${orders.url()}/pedidos/${pedido.id}`);
        expect(antes.body.status).toBe("PAGO");
        await orders.kill();

        orders = await start("orders-2", "broker/orders", ordersEnv);
        await orders.waitForLine(
          new RegExp(`(?=.*repeated result for a concluded request: nothing changes)(?=.*${key})`),
        );
        const depois = await http<{ status: string }>(
          "GET",
          `${orders.url()}/pedidos/${pedido.id}`,
        );
        expect(depois.body.status).toBe("PAGO");
        const historico = await http<{
          solicitacoes: { solicitacaoId: string; etapas: { etapa: string }[] }[];
        }>("GET", `${orders.url()}/pedidos/${pedido.id}/historico`);
        const [s] = historico.body.solicitacoes;
        expect(s?.solicitacaoId).toBe(key);
        expect(s?.etapas.filter((e) => e.etapa === "resultado-aplicado")).toHaveLength(1);
        expect(await prontas(vhost, FILAS_ERROS.resultados)).toBe(0);
      }),
    90_000,
  );
});
