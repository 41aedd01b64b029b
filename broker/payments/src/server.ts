import { shopClient } from "@shop/amqp";
import { type ConsumerEvents, createLogger, groupCommit, type Logger, listen } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { startSolicitacoesConsumer } from "./messaging/solicitacoes-consumer.ts";
import { pagamentoUseCases } from "./pagamentos.ts";
import { openStore } from "./store.ts";

export interface PaymentsService {
  port: number;
  url: string;
  /** The queue consumer's events (received, handled, retried, dead-lettered, acked). */
  events: ConsumerEvents;
  stop(): Promise<void>;
}

/** Wires store, messaging and HTTP of the broker edition's payments service. */
export async function startPayments(
  config: Config,
  log: Logger = createLogger("broker-payments"),
): Promise<PaymentsService> {
  const store = openStore(config.dbPath);
  const amqp = shopClient(config.broker, log);
  // Group commit: the decisions stored in one turn share a transaction.
  const pagamentos = pagamentoUseCases({
    store,
    inTransaction: groupCommit((work) => store.transaction(work)),
  });
  const consumer = await startSolicitacoesConsumer({
    amqp,
    pagamentos,
    confirmMs: config.confirmMs,
    log,
    consumers: config.consumers,
    pauseBeforeAckMs: config.pauseBeforeAckMs,
  });

  const app = createApp({ pagamentos, connected: () => amqp.connected, log });
  const http = await listen(app, config.port, config.host);
  const { url } = http;
  log.info(`payments service listening on ${url} (RabbitMQ vhost ${config.broker.vhost})`);
  return {
    port: http.port,
    url,
    events: consumer.events,
    async stop() {
      await http.close();
      // The messages in hand are finished and acked before the connection closes.
      await consumer.stop();
      await amqp.close();
      store.close();
    },
  };
}
