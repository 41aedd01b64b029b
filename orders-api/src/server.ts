import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import {
  createKafka,
  createPublisher,
  ensureTopics,
  type Publisher,
  type RunningConsumer,
} from "@shop/kafka";
import { createLogger, type Logger, listen } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { type OutboxRelay, outboxStatus, startOutboxRelay } from "./messaging/outbox-relay.ts";
import { paymentsHttpAnnouncer } from "./messaging/payments-http.ts";
import { directAnnouncer, outboxAnnouncer } from "./messaging/pedido-criado.ts";
import { platformReader } from "./messaging/platform.ts";
import { startResultadosConsumer } from "./messaging/resultados-consumer.ts";
import { type PedidoAnnouncer, pedidoUseCases } from "./pedidos.ts";
import { openStore } from "./store.ts";

/** Longer than kafkajs's retries of one send (3 retries, a 30 s request timeout at most). */
const RELAY_TIME_LIMIT_MS = 150_000;

export interface OrdersApi {
  port: number;
  url: string;
  consumer: RunningConsumer | null;
  stop(): Promise<void>;
}

/** Wires store, messaging and HTTP. In the synchronous configuration Kafka is not used at all. */
export async function startOrdersApi(
  config: Config,
  log: Logger = createLogger("orders-api"),
): Promise<OrdersApi> {
  const store = await openStore(config);
  const names = kafkaNames(config.kafkaPrefix);
  const kafka =
    config.modo === "eventos"
      ? createKafka(config.kafkaBrokers, config.clientId, log, config.kafkaSecurity)
      : null;
  let publisher: Publisher | null = null;
  let relayPublisher: Publisher | null = null;
  let relay: OutboxRelay | null = null;
  let closeDirect = async () => {};
  let announcer: PedidoAnnouncer = paymentsHttpAnnouncer(config.pagamentosUrl);
  if (kafka) {
    const created = await ensureTopics(kafka, pedidoTopics(names), REPLICATION_FACTOR);
    if (created.length > 0) log.info("created topics", { topics: created.join(",") });
    publisher = createPublisher(kafka, config.confirmMs, log);
    if (config.outbox) {
      // The relay waits for kafkajs's own verdict on each send, not for our 5 s: a send
      // given up on while kafkajs still retried it could be written late, after the relay
      // had sent the same rows again (two PedidoCriado records, two decisions). Its own
      // producer, with a time limit longer than kafkajs's retries, learns whether the rows
      // were written.
      relayPublisher = createPublisher(kafka, RELAY_TIME_LIMIT_MS, log);
      relay = startOutboxRelay({
        store,
        publisher: relayPublisher,
        log,
        pauseBeforeMarkMs: config.pauseBeforeMarkMs,
      });
      announcer = outboxAnnouncer({ names, relay, confirmMs: config.confirmMs });
    } else {
      // The spec's configuration: a 500 says "not confirmed", but kafkajs would go on trying
      // the send, for a minute or more while Kafka is down, and might still write it. Here
      // each kafkajs send gives up within a second or two and is tried again until the
      // 5 s limit: the 500 comes at the limit, and the record is given up soon after it
      // (shop_messages_abandoned_total): the order is then the spec's orphan for good.
      const giveUpSoon = createKafka(
        config.kafkaBrokers,
        config.clientId,
        log,
        config.kafkaSecurity,
        {
          initialRetryTime: 100,
          maxRetryTime: 1000,
          retries: 3,
        },
      );
      const directPublisher = createPublisher(giveUpSoon, config.confirmMs, log, {
        tryUntilLimit: true,
      });
      closeDirect = () => directPublisher.close();
      announcer = directAnnouncer({ store, names: names, publisher: directPublisher, log });
    }
  }
  const pedidos = pedidoUseCases({ store, announcer, log });
  const consumer =
    kafka && publisher
      ? await startResultadosConsumer({ kafka, names: names, publisher, pedidos, log })
      : null;

  const platform = kafka ? platformReader(kafka, names) : null;
  const app = createApp({
    pedidos,
    outbox: relay ? () => outboxStatus(store) : null,
    stuckPartitions: consumer ? () => consumer.status().stuck : null,
    modo: config.modo,
    plataforma: platform?.read ?? null,
    cartas: platform ? (topic) => platform.letters(topic) : null,
    frontOrigin: config.frontOrigin,
    log,
  });
  const http = await listen(app, config.port, config.host);
  const { url } = http;
  log.info(
    `orders API listening on ${url} (${config.modo === "eventos" ? "events on Kafka" : "synchronous configuration"})`,
  );

  return {
    port: http.port,
    url,
    consumer,
    async stop() {
      await http.close();
      await relay?.stop();
      await relayPublisher?.close();
      await consumer?.stop();
      await publisher?.close();
      await closeDirect();
      await platform?.close();
      await store.close();
    },
  };
}
