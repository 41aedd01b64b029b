import { randomUUID } from "node:crypto";
import { ERROR_QUEUES, EXCHANGES, QUEUES, ROUTING_KEYS } from "@shop/contracts";
import { describe, expect, it } from "vitest";
import { shopConfig } from "../../../../harness/env.ts";
import { AmqpMethods, TcpProxy } from "../../../../harness/tcp-proxy.ts";
import {
  createBrokerPedido,
  getBrokerPedido,
  inOwnVhost,
  publishRaw,
  readyCount,
  requestPagamento,
} from "../../../../test/helpers/broker.ts";
import { http } from "../../../../test/helpers/shop.ts";
import { waitFor } from "../../../../test/helpers/wait.ts";

const comando = (solicitacaoId: string, pedidoId: string, valor: number, cenario = "APROVAR") =>
  JSON.stringify({ versao: 1, solicitacaoId, pedidoId, valor, cenario });

interface Decisao {
  solicitacaoId: string;
  pedidoId: string;
  valor: number;
  aprovado: boolean;
}

describe("Restart before the ack", () => {
  it(
    "Rules B16 and B17: when both processes stop after the decision is stored and published but before the ack, then after a restart the redelivery keeps one record and the order ends PAGO",
    () =>
      inOwnVhost("pagamentos", async ({ start, vhost, ordersEnv, paymentsEnv }) => {
        let orders = await start("orders", "broker/orders", ordersEnv);
        let payments = await start("payments", "broker/payments", {
          ...paymentsEnv,
          PAUSA_ANTES_DO_ACK_MS: "60000",
        });
        const pedido = await createBrokerPedido(orders.url());
        const key = randomUUID();
        expect((await requestPagamento(orders.url(), pedido.id, key)).status).toBe(202);

        // Decision stored and its result published (the order is PAGO); the command waits
        // 60 s for its ack.
        await waitFor(
          async () => (await getBrokerPedido(orders.url(), pedido.id)).status === "PAGO",
          {
            what: "the decision stored and its result applied",
          },
        );
        await Promise.all([payments.kill(), orders.kill()]);
        // Proof the kill landed before the ack: the command is back in its queue.
        await waitFor(async () => (await readyCount(vhost, QUEUES.solicitacoes)) === 1, {
          what: "the unacked command back in pagamentos.solicitacoes",
        });

        orders = await start("orders-2", "broker/orders", ordersEnv);
        payments = await start("payments-2", "broker/payments", paymentsEnv);
        // The redelivery is read as a repeat (the stored decision, republished) and acked.
        await waitFor(async () => (await readyCount(vhost, QUEUES.solicitacoes)) === 0, {
          what: "the redelivered command acked",
        });
        await waitFor(
          async () => (await getBrokerPedido(orders.url(), pedido.id)).status === "PAGO",
        );
        const decisoes = (await http<Decisao[]>("GET", `${payments.url()}/decisoes`)).body.filter(
          (d) => d.solicitacaoId === key,
        );
        expect(decisoes).toHaveLength(1);
        await Promise.all([payments.stop(), orders.stop()]);
      }),
    120_000,
  );
});

describe("A crash with idle consumers beside the busy one", () => {
  it(
    "When payments is killed -9 while one of its 64 consumers holds an unacked message, then after a restart it is decided once and not dead-lettered: one crash counts one delivery (3 rounds)",
    () =>
      inOwnVhost("pagamentos", async ({ start, vhost, paymentsEnv }) => {
        // The idle consumers are what a returned message could go to while the dead
        // process's channels are still being closed. The race is timing-dependent: with a
        // channel per consumer, about one round in three lost its message to .erros.
        const env = { ...paymentsEnv, CONSUMIDORES: "64" };
        for (let round = 1; round <= 3; round++) {
          const paused = await start(`payments-paused-${round}`, "broker/payments", {
            ...env,
            PAUSA_ANTES_DO_ACK_MS: "60000",
          });
          const key = randomUUID();
          await publishRaw(
            vhost,
            EXCHANGES.commands,
            ROUTING_KEYS.solicitar,
            comando(key, randomUUID(), 10),
          );
          // Decided and stored; its ack waits 60 s.
          await waitFor(
            async () =>
              (await http<Decisao[]>("GET", `${paused.url()}/decisoes`)).body.some(
                (d) => d.solicitacaoId === key,
              ),
            { what: "the decision stored" },
          );
          await paused.kill();
          // Proof the kill landed before the ack: the command is back in its queue.
          await waitFor(async () => (await readyCount(vhost, QUEUES.solicitacoes)) === 1, {
            what: "the unacked command back in its queue",
          });

          const payments = await start(`payments-after-${round}`, "broker/payments", env);
          await waitFor(async () => (await readyCount(vhost, QUEUES.solicitacoes)) === 0, {
            what: "the redelivered command acked",
          });
          expect(await readyCount(vhost, ERROR_QUEUES.solicitacoes), `round ${round}`).toBe(0);
          const decididas = (await http<Decisao[]>("GET", `${payments.url()}/decisoes`)).body;
          expect(decididas.filter((d) => d.solicitacaoId === key)).toHaveLength(1);
          await payments.stop();
        }
      }),
    120_000,
  );
});

describe("Divergent request content", () => {
  it(
    "Rule B15: when a known key comes with another valor, then payments fails 3 times, the command lands in pagamentos.solicitacoes.erros and the stored decision is unchanged",
    () =>
      inOwnVhost("pagamentos", async ({ start, vhost, paymentsEnv }) => {
        const payments = await start("payments-3", "broker/payments", paymentsEnv);
        const key = randomUUID();
        const pedidoId = randomUUID();
        await publishRaw(
          vhost,
          EXCHANGES.commands,
          ROUTING_KEYS.solicitar,
          comando(key, pedidoId, 10),
        );
        await waitFor(
          async () =>
            (await http<Decisao[]>("GET", `${payments.url()}/decisoes`)).body.some(
              (d) => d.solicitacaoId === key,
            ),
          { what: "the decision stored" },
        );
        const antes = await readyCount(vhost, ERROR_QUEUES.solicitacoes);

        await publishRaw(
          vhost,
          EXCHANGES.commands,
          ROUTING_KEYS.solicitar,
          comando(key, pedidoId, 99),
        );
        await waitFor(
          async () => (await readyCount(vhost, ERROR_QUEUES.solicitacoes)) === antes + 1,
          {
            what: "the command in .erros",
          },
        );
        // Two attempts returned, the third dead-lettered, each failing on the divergence.
        const falhas = [...payments.events("retried"), ...payments.events("dead-lettered")];
        expect(falhas.map((e) => e.tentativa)).toEqual([1, 2, 3]);
        for (const e of falhas)
          expect(String(e.reason)).toMatch(/already decided for other content/);
        const [d] = (await http<Decisao[]>("GET", `${payments.url()}/decisoes`)).body.filter(
          (x) => x.solicitacaoId === key,
        );
        expect(d).toMatchObject({ pedidoId, valor: 10, aprovado: true });
        await payments.stop();
      }),
    60_000,
  );

  it(
    "When the consumer restarts between attempts, then the attempt count does not reset: 3 attempts in all, then .erros",
    () =>
      inOwnVhost("pagamentos", async ({ start, vhost, paymentsEnv }) => {
        // One consumer, so that no second consumer takes attempt 2 while this one is killed.
        const env = { ...paymentsEnv, CONSUMIDORES: "1" };
        let payments = await start("payments-4", "broker/payments", env);
        const antes = await readyCount(vhost, ERROR_QUEUES.solicitacoes);
        await publishRaw(
          vhost,
          EXCHANGES.commands,
          ROUTING_KEYS.solicitar,
          '{"versao": 1, "solicitacaoId": "broken"}',
        );
        await waitFor(() => payments.events("retried").length > 0, { what: "attempt 1 failed" });
        await payments.kill();
        const first = payments.events("retried").length;

        payments = await start("payments-5", "broker/payments", env);
        await waitFor(
          async () => (await readyCount(vhost, ERROR_QUEUES.solicitacoes)) === antes + 1,
          {
            what: "the poison in .erros",
          },
        );
        const second = [...payments.events("retried"), ...payments.events("dead-lettered")];
        expect(first + second.length).toBe(3);
        expect(payments.events("dead-lettered").map((e) => e.tentativa)).toEqual([3]);
        await payments.stop();
      }),
    60_000,
  );

  it(
    "Consumer acknowledgement (issue 14): when a message fails, then each failed attempt goes back with basic.reject, which every RabbitMQ version counts in x-delivery-count, never basic.nack; the third is rejected to .erros",
    () =>
      inOwnVhost("pagamentos", async ({ start, vhost, paymentsEnv }) => {
        const methods = new AmqpMethods();
        const r = shopConfig().rabbit;
        const proxy = await TcpProxy.start(r.host, r.port, methods.read);
        try {
          const payments = await start("payments-reject", "broker/payments", {
            ...paymentsEnv,
            BROKER_PORT: String(proxy.port),
            CONSUMIDORES: "1",
          });
          const antes = await readyCount(vhost, ERROR_QUEUES.solicitacoes);
          await publishRaw(vhost, EXCHANGES.commands, ROUTING_KEYS.solicitar, '{"versao": 1}');
          await waitFor(
            async () => (await readyCount(vhost, ERROR_QUEUES.solicitacoes)) === antes + 1,
            { what: "the poison in .erros after 3 attempts" },
          );
          const devolucoes = methods.seen.filter((m) => m === "basic.reject" || m === "basic.nack");
          expect(devolucoes).toEqual(["basic.reject", "basic.reject", "basic.reject"]);
          await payments.stop();
        } finally {
          await proxy.close();
        }
      }),
    60_000,
  );
});
