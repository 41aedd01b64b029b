import { type KafkaNames, kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import {
  createKafka,
  createPublisher,
  ensureTopics,
  memberIdentityFile,
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
import { type PedidoAnnouncer, pedidoPorts } from "./pedidos.ts";
import { openStore } from "./store/open.ts";
import type { PedidoStore } from "./store.ts";

/** Longer than kafkajs's retries of one send (5 retries, a 30 s request timeout at most). */
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
  const kafka = config.modo === "eventos" ? await startKafkaSide(config, store, log) : null;
  const announcer = kafka?.announcer ?? paymentsHttpAnnouncer(config.pagamentosUrl);
  const pedidos = pedidoPorts({ store, announcer, log });
  // On SQLite the API is its database's one instance: killed -9 and started again, it
  // rejoins its group as the member it was, not after that member's session (issue 55).
  // Several instances share PostgreSQL: each joins as a new member.
  const memberIdentity = config.databaseUrl
    ? undefined
    : memberIdentityFile(`${config.dbPath}.kafka-member`);
  const consumer = kafka
    ? await startResultadosConsumer({
        ...kafka,
        pedidos,
        log,
        ...(memberIdentity ? { memberIdentity } : {}),
      })
    : null;
  const app = createApp({
    pedidos,
    outbox: kafka?.relay ? () => outboxStatus(store) : null,
    stuckPartitions: consumer ? () => consumer.status().stuck : null,
    modo: config.modo,
    plataforma: kafka?.platform.read ?? null,
    deadLetters: kafka ? (topic) => kafka.platform.letters(topic) : null,
    frontOrigin: config.frontOrigin,
    log,
  });
  const http = await listen(app, config.port, config.host);
  log.info(
    `orders API listening on ${http.url} (${kafka ? "events on Kafka" : "synchronous configuration"})`,
  );
  return {
    port: http.port,
    url: http.url,
    consumer,
    async stop() {
      await http.close();
      await kafka?.stopRelay();
      await consumer?.stop();
      await kafka?.close();
      await store.close();
    },
  };
}

/** What the orders API has on Kafka (MODO=eventos): its clients, the announcer, the relay. */
interface KafkaSide {
  kafka: ReturnType<typeof createKafka>;
  names: KafkaNames;
  /** Results' dead letters and the spec's configuration's sends. */
  publisher: Publisher;
  announcer: PedidoAnnouncer;
  /** null with OUTBOX=desligado. */
  relay: OutboxRelay | null;
  platform: ReturnType<typeof platformReader>;
  stopRelay(): Promise<void>;
  close(): Promise<void>;
}

/** Kafka's topics, publishers and the announcer of the configuration: outbox (the default) or direct. */
async function startKafkaSide(config: Config, store: PedidoStore, log: Logger): Promise<KafkaSide> {
  const names = kafkaNames(config.kafkaPrefix);
  const kafka = createKafka(config.kafkaBrokers, config.clientId, log, config.kafkaSecurity);
  const created = await ensureTopics(kafka, pedidoTopics(names), REPLICATION_FACTOR);
  if (created.length > 0) log.info("created topics", { topics: created.join(",") });
  const publisher = createPublisher(kafka, config.confirmMs, log);
  const platform = platformReader(kafka, names);
  const side = { kafka, names, publisher, platform };
  if (!config.outbox) {
    const direct = directPublisher(config, log);
    return {
      ...side,
      relay: null,
      announcer: directAnnouncer({ store, names, publisher: direct, log }),
      stopRelay: async () => {},
      close: async () => {
        await publisher.close();
        await direct.close();
        await platform.close();
      },
    };
  }
  // The relay waits for kafkajs's own verdict on each send, not for our 5 s: a send given up
  // on while kafkajs still retried it could be written late, after the relay had sent the
  // same rows again (two PedidoCriado records, two decisions). Its own producer, with a time
  // limit longer than kafkajs's retries, learns whether the rows were written; and it is
  // idempotent, so that a produce request kafkajs sends again (an answer lost, one partition
  // refused while the others were written) is written once.
  const relayPublisher = createPublisher(kafka, RELAY_TIME_LIMIT_MS, log, { idempotent: true });
  // Its producer id taken while Kafka is up (Publisher.connect): the relay's first publish
  // after an outage is then a produce, not a wait for a restarted broker's ids.
  await relayPublisher.connect();
  const relay = startOutboxRelay({
    store,
    publisher: relayPublisher,
    log,
    pauseBeforeMarkMs: config.pauseBeforeMarkMs,
    instance: config.clientId,
  });
  return {
    ...side,
    relay,
    announcer: outboxAnnouncer({ names, relay, confirmMs: config.confirmMs }),
    stopRelay: async () => {
      await relay.stop();
      await relayPublisher.close();
    },
    close: async () => {
      await publisher.close();
      await platform.close();
    },
  };
}

/**
 * The spec's configuration (OUTBOX=desligado): a 500 says "not confirmed", but kafkajs would
 * go on trying the send, for a minute or more while Kafka is down, and might still write it.
 * Here each kafkajs send gives up within a second or two and is tried again until the 5 s
 * limit: the 500 comes at the limit, and the record is given up soon after it
 * (shop_messages_abandoned_total): the order is then the spec's orphan for good.
 */
function directPublisher(config: Config, log: Logger): Publisher {
  const giveUpSoon = createKafka(config.kafkaBrokers, config.clientId, log, config.kafkaSecurity, {
    initialRetryTime: 100,
    maxRetryTime: 1000,
    retries: 3,
  });
  return createPublisher(giveUpSoon, config.confirmMs, log, { tryUntilLimit: true });
}
