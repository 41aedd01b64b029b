import { shopClient } from "@shop/amqp";
import { type ConsumerEvents, createLogger, groupCommit, type Logger, listen } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { startResultadosConsumer } from "./messaging/resultados-consumer.ts";
import { solicitacaoPublisher } from "./messaging/solicitacao-publisher.ts";
import { pedidoUseCases } from "./pedidos.ts";
import { openStore } from "./store.ts";

export interface OrdersService {
  port: number;
  url: string;
  /** The queue consumer's events (received, handled, retried, dead-lettered, acked). */
  events: ConsumerEvents;
  stop(): Promise<void>;
}

/** Wires store, messaging and HTTP of the broker edition's orders service. */
export async function startOrders(
  config: Config,
  log: Logger = createLogger("broker-orders"),
): Promise<OrdersService> {
  const store = openStore(config.dbPath);
  const amqp = shopClient(config.broker, log);
  // Group commit: the work of one turn (requests, confirms, results) shares a transaction.
  const pedidos = pedidoUseCases({
    store,
    inTransaction: groupCommit((work) => store.transaction(work)),
    publisher: solicitacaoPublisher(amqp, config.confirmMs, log),
  });
  const consumer = await startResultadosConsumer({
    amqp,
    pedidos,
    log,
    consumers: config.consumers,
    pauseBeforeAckMs: config.pauseBeforeAckMs,
  });

  const http = await listen(createApp({ pedidos, log }), config.port, config.host);
  const { url } = http;
  log.info(`orders service listening on ${url} (RabbitMQ vhost ${config.broker.vhost})`);
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
