import { type ConsumerEvents, groupCommit, type Logger, listen } from "@shop/service";
import { type AmqpClient, shopClient } from "./client.ts";
import type { BrokerServiceConfig } from "./config.ts";
import type { RunningConsumer } from "./consumer.ts";

/** A running broker-edition service: its HTTP address and its queue consumer's events. */
export interface AmqpService {
  port: number;
  url: string;
  /** The queue consumer's events (received, handled, retried, dead-lettered, acked). */
  events: ConsumerEvents;
  stop(): Promise<void>;
}

/** What a service's own wiring gives back: its queue consumer and its HTTP app. */
export interface AmqpServiceParts {
  consumer: RunningConsumer;
  app: Parameters<typeof listen>[0];
}

/**
 * The one shell of both broker-edition services: opens the store, connects to RabbitMQ,
 * lets `wire` build the use cases, the consumer and the HTTP app (with a group commit
 * over the store's transactions), then listens. stop() undoes it in reverse: no new
 * requests, the messages in hand finished and acked, then the connection and the store.
 */
export async function startAmqpService<
  S extends { transaction<T>(work: () => T): T; close(): void },
>(opts: {
  name: string;
  config: BrokerServiceConfig;
  log: Logger;
  openStore: (path: string) => S;
  /** AmqpClientOptions.refuseWhileBlocked: for the service whose publishes answer a client. */
  refuseWhileBlocked?: boolean;
  wire: (parts: {
    store: S;
    amqp: AmqpClient;
    /** Runs work in one transaction; the work of one turn shares it (group commit). */
    inTransaction: <T>(work: () => T) => Promise<T>;
  }) => Promise<AmqpServiceParts>;
}): Promise<AmqpService> {
  const { config, log } = opts;
  const store = opts.openStore(config.dbPath);
  const amqp = shopClient(config.broker, log, { refuseWhileBlocked: opts.refuseWhileBlocked });
  const { consumer, app } = await opts.wire({
    store,
    amqp,
    inTransaction: groupCommit((work) => store.transaction(work)),
  });
  const http = await listen(app, config.port, config.host);
  log.info(`${opts.name} listening on ${http.url} (RabbitMQ vhost ${config.broker.vhost})`);
  return {
    port: http.port,
    url: http.url,
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
