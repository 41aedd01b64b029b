import { kafkaNames, pedidoTopics, REPLICATION_FACTOR } from "@shop/contracts";
import { createKafka, createPublisher, ensureTopics, type Publisher } from "@shop/kafka";
import { createLogger, type Logger, listen } from "@shop/service";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { startPedidosCriadosConsumer } from "./messaging/pedidos-criados-consumer.ts";
import { pagamentoPorts } from "./pagamentos.ts";

export interface PaymentsInstance {
  port: number;
  url: string;
  stop(): Promise<void>;
}

export async function startPayments(
  config: Config,
  log: Logger = createLogger(`payments ${config.instancia}`),
  print?: (line: string) => void,
): Promise<PaymentsInstance> {
  const names = kafkaNames(config.kafkaPrefix);
  const kafka =
    config.modo === "eventos"
      ? createKafka(config.kafkaBrokers, `payments-${config.instancia}`, log, config.kafkaSecurity)
      : null;
  // Whichever service starts first creates the topics (the same ones, idempotently).
  if (kafka) await ensureTopics(kafka, pedidoTopics(names), REPLICATION_FACTOR);
  // A decided result is sent again until its 5 s limit, not given up after kafkajs's own
  // tries (under 2 s): a partition whose leader died or paused moves within the limit, and
  // a result given up is a record read again and decided again.
  const publisher: Publisher | null = kafka
    ? createPublisher(kafka, 5000, log, { tryUntilLimit: true })
    : null;
  const pagamentos = pagamentoPorts({
    instancia: config.instancia,
    decisionWaitMs: config.decisionWaitMs,
    ...(print ? { print } : {}),
  });
  const consumer =
    kafka && publisher
      ? await startPedidosCriadosConsumer({
          kafka,
          names: names,
          publisher,
          pagamentos,
          log,
          autoCommitInterval: config.commitIntervalMs,
          partitionsAtOnce: config.partitionsAtOnce,
          exactlyOnce: config.exactlyOnce,
        })
      : null;

  const app = createApp({
    instancia: config.instancia,
    modo: config.modo,
    pagamentos,
    consumerStatus: () => consumer?.status() ?? null,
    log,
  });
  const http = await listen(app, config.port, config.host);
  const { url } = http;
  const delivery = config.exactlyOnce ? ", exactly-once" : "";
  log.info(`payments ${config.instancia} listening on ${url} (${config.modo}${delivery})`);

  return {
    port: http.port,
    url,
    async stop() {
      await http.close();
      await consumer?.stop(); // waits for the record in progress
      await publisher?.close();
    },
  };
}
