import { type AmqpService, startAmqpService } from "@shop/amqp";
import { createLogger, type Logger } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { startSolicitacoesConsumer } from "./messaging/solicitacoes-consumer.ts";
import type { PagamentoPorts } from "./pagamentos.ts";
import { openStore } from "./store.ts";

export type PaymentsService = AmqpService;

/** Wires the broker edition's payments service: use cases over its store, messaging, HTTP. */
export function startPayments(
  config: Config,
  log: Logger = createLogger("broker-payments"),
): Promise<PaymentsService> {
  return startAmqpService({
    name: "payments service",
    config,
    log,
    openStore,
    async wire({ store, amqp, inTransaction }) {
      const pagamentos: PagamentoPorts = { store, inTransaction };
      const consumer = await startSolicitacoesConsumer({
        amqp,
        pagamentos,
        confirmMs: config.confirmMs,
        log,
        consumers: config.consumers,
        pauseBeforeAckMs: config.pauseBeforeAckMs,
      });
      const app = createApp({ pagamentos, connected: () => amqp.connected, log });
      return { consumer, app };
    },
  });
}
