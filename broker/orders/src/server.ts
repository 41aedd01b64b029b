import { type AmqpService, startAmqpService } from "@shop/amqp";
import { createLogger, type Logger } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { platformReader } from "./messaging/platform.ts";
import { startResultadosConsumer } from "./messaging/resultados-consumer.ts";
import { solicitacaoPublisher } from "./messaging/solicitacao-publisher.ts";
import type { PedidoPorts } from "./pedidos.ts";
import { openStore } from "./store.ts";

export type OrdersService = AmqpService;

/** Wires the broker edition's orders service: use cases over its store, messaging, HTTP. */
export function startOrders(
  config: Config,
  log: Logger = createLogger("broker-orders"),
): Promise<OrdersService> {
  return startAmqpService({
    name: "orders service",
    config,
    log,
    // Under a disk or memory alarm, a payment request is answered 503 at once, not after
    // the spec's 5 s wait for a confirm RabbitMQ will not send (libs/amqp/src/client.ts).
    refuseWhileBlocked: true,
    openStore,
    async wire({ store, amqp, inTransaction }) {
      const publisher = solicitacaoPublisher(amqp, config.confirmMs, log);
      const pedidos: PedidoPorts = { store, inTransaction, publisher };
      const consumer = await startResultadosConsumer({
        amqp,
        pedidos,
        log,
        consumers: config.consumers,
        pauseBeforeAckMs: config.pauseBeforeAckMs,
      });
      const plataforma = platformReader(config.panel, config.broker.vhost, (queues) =>
        amqp.countQueues(queues),
      );
      return {
        consumer,
        app: createApp({
          pedidos,
          log,
          plataforma: plataforma.read,
          frontOrigin: config.frontOrigin,
        }),
      };
    },
  });
}
