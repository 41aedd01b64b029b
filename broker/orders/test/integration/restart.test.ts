import { randomUUID } from "node:crypto";
import { ERROR_QUEUES, QUEUES } from "@shop/contracts";
import { describe, expect, it } from "vitest";
import {
  createBrokerPedido,
  getBrokerPedido,
  inOwnVhost,
  readyCount,
  requestPagamento,
} from "../../../../test/helpers/broker.ts";
import { http } from "../../../../test/helpers/shop.ts";
import { waitFor } from "../../../../test/helpers/wait.ts";

describe("Rule B21: ack only after the commit", () => {
  it(
    "When the orders service is killed -9 after committing a result and before its ack, then the redelivered result changes nothing: the order stays PAGO, the record concluded once, nothing in .erros",
    () =>
      inOwnVhost("reinicio", async ({ start, vhost, ordersEnv, paymentsEnv }) => {
        let orders = await start("orders", "broker/orders", {
          ...ordersEnv,
          PAUSA_ANTES_DO_ACK_MS: "60000",
        });
        await start("payments", "broker/payments", paymentsEnv);
        const pedido = await createBrokerPedido(orders.url());
        const key = randomUUID();
        expect((await requestPagamento(orders.url(), pedido.id, key)).status).toBe(202);

        // The result is committed (the order is PAGO) while its delivery waits 60 s for its ack.
        await waitFor(
          async () => (await getBrokerPedido(orders.url(), pedido.id)).status === "PAGO",
          {
            what: "the result committed",
          },
        );
        expect(await readyCount(vhost, QUEUES.resultados)).toBe(0);
        await orders.kill();
        // Proof the kill landed before the ack: the broker puts the delivery back in the queue.
        await waitFor(async () => (await readyCount(vhost, QUEUES.resultados)) === 1, {
          what: "the unacked result back in pedidos.resultados",
        });

        orders = await start("orders-2", "broker/orders", ordersEnv);
        // The redelivery is consumed and acked.
        await waitFor(async () => (await readyCount(vhost, QUEUES.resultados)) === 0, {
          what: "the redelivered result acked",
        });
        expect((await getBrokerPedido(orders.url(), pedido.id)).status).toBe("PAGO");
        const historico = await http<{
          solicitacoes: { solicitacaoId: string; etapas: { etapa: string }[] }[];
        }>("GET", `${orders.url()}/pedidos/${pedido.id}/historico`);
        const [s] = historico.body.solicitacoes;
        expect(s?.solicitacaoId).toBe(key);
        expect(s?.etapas.filter((e) => e.etapa === "resultado-aplicado")).toHaveLength(1);
        expect(await readyCount(vhost, ERROR_QUEUES.resultados)).toBe(0);
      }),
    90_000,
  );
});
