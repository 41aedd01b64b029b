import { randomUUID } from "node:crypto";
import { EXCHANGES, QUEUES, ROUTING_KEYS, SolicitacaoPagamento } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVhost, type ShopVhost } from "../../../../harness/vhost.ts";
import { brokerEnv, publishRaw, readyCount } from "../../../../test/helpers/broker.ts";
import { capturingLogger } from "../../../../test/helpers/shop.ts";
import { collect, waitFor } from "../../../../test/helpers/wait.ts";
import { brokerAddress } from "../../src/config.ts";
import { shopClient, startConsumer } from "../../src/index.ts";

let vhost: ShopVhost;
beforeAll(async () => {
  vhost = await createVhost("amqp-stop");
});
afterAll(async () => {
  await vhost?.dispose();
});

/** The shop's AMQP client, as the broker services make it, in this file's vhost. */
function cliente(nome: string, v: ShopVhost = vhost) {
  const env = brokerEnv(v, nome);
  const log = capturingLogger(nome);
  const client = shopClient(
    brokerAddress({
      BROKER_HOST: env.BROKER_HOST as string,
      BROKER_PORT: Number(env.BROKER_PORT),
      BROKER_VHOST: v.vhost,
      BROKER_USER: env.BROKER_USER as string,
      BROKER_PASSWORD: env.BROKER_PASSWORD as string,
    }),
    log,
  );
  return { client, log };
}

const comando = () =>
  JSON.stringify({
    versao: 1,
    solicitacaoId: randomUUID(),
    pedidoId: randomUUID(),
    valor: 10,
    cenario: "APROVAR",
  });

describe("The AMQP consumer's stop()", () => {
  it("When stop() is called while a message is being handled, then no new message is delivered, stop waits for the handler, and the message is acked before the connection closes", async () => {
    const { client, log } = cliente("amqp-stop");
    let soltar: () => void = () => {};
    const portao = new Promise<void>((r) => {
      soltar = r;
    });
    const tratadas: string[] = [];
    let comecou = false;
    const consumidor = await startConsumer({
      client,
      queue: QUEUES.solicitacoes,
      contract: SolicitacaoPagamento,
      log,
      handle: async (s) => {
        comecou = true;
        await portao;
        tratadas.push(s.solicitacaoId);
      },
    });
    await publishRaw(vhost, EXCHANGES.commands, ROUTING_KEYS.solicitar, comando());
    await waitFor(() => comecou, { what: "the handler to start" });

    let parou = false;
    const parando = consumidor.stop().then(() => {
      parou = true;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(parou).toBe(false);
    // Cancelled: a message published now is not delivered to this consumer.
    await publishRaw(vhost, EXCHANGES.commands, ROUTING_KEYS.solicitar, comando());
    soltar();
    await parando;
    await client.close();
    expect(tratadas).toHaveLength(1);
    // The first was acked before the close (not returned); the second is still ready.
    expect(await readyCount(vhost, QUEUES.solicitacoes)).toBe(1);
  });

  it("When a message breaks its contract, then the wrapper's events tell it all: received three times, retried twice, dead-lettered once, never handled or acked", async () => {
    // A vhost of its own: the stop test leaves a message in its queue on purpose.
    const proprio = await createVhost("amqp-eventos");
    const { client, log } = cliente("amqp-eventos", proprio);
    const consumidor = await startConsumer({
      client,
      queue: QUEUES.solicitacoes,
      contract: SolicitacaoPagamento,
      log,
      retryDelayMs: 10,
      handle: async () => {},
    });
    const recebidas = collect(consumidor.events, "received");
    const retentadas = collect(consumidor.events, "retried");
    const mortas = collect(consumidor.events, "dead-lettered");
    const tratadas = collect(consumidor.events, "handled");
    const confirmadas = collect(consumidor.events, "acked");
    try {
      await publishRaw(proprio, EXCHANGES.commands, ROUTING_KEYS.solicitar, '{"versao": 7}');
      await waitFor(() => mortas.length === 1, { what: "the dead-lettered event" });
      expect(recebidas.map((e) => e.where)).toEqual([
        `${QUEUES.solicitacoes}#1`,
        `${QUEUES.solicitacoes}#2`,
        `${QUEUES.solicitacoes}#3`,
      ]);
      expect(retentadas.map((e) => e.attempt)).toEqual([1, 2]);
      expect(mortas[0]?.reason).toMatch(/versao 7/);
      expect(tratadas).toEqual([]);
      expect(confirmadas).toEqual([]);
    } finally {
      await consumidor.stop();
      await client.close();
      await proprio.dispose();
    }
  });
});
