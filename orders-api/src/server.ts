import {
  chaveDoPedido,
  type EstadoOutbox,
  FATOR_DE_REPLICACAO,
  type NomesKafka,
  nomesKafka,
  type Plataforma,
  ResultadoPagamento,
  topicosDoPedido,
} from "@shop/contracts";
import {
  createKafka,
  createPublisher,
  describePlatform,
  ensureTopics,
  type Publicador,
  type RunningConsumer,
  startConsumer,
} from "@shop/kafka";
import { createLogger, type Logger, listen, medidor } from "@shop/service";
import type { Kafka } from "kafkajs";
import type { Config } from "./config.ts";
import { createApp } from "./http/app.ts";
import { startRelay } from "./outbox.ts";
import { pedidosService } from "./pedidos.ts";
import { openStore, type PedidosStore } from "./store.ts";

/** Longer than kafkajs's retries of one send (3 retries, a 30 s request timeout at most). */
const LIMITE_DO_RELAY_MS = 150_000;

export interface OrdersApi {
  port: number;
  url: string;
  consumer: RunningConsumer | null;
  stop(): Promise<void>;
}

/** Wires store, Kafka and HTTP. In the synchronous configuration Kafka is not used at all. */
export async function startOrdersApi(
  config: Config,
  log: Logger = createLogger("orders-api"),
): Promise<OrdersApi> {
  const store = openStore(config.dbPath);
  const nomes = nomesKafka(config.kafkaPrefix);
  const kafka =
    config.modo === "eventos" ? createKafka(config.kafkaBrokers, "orders-api", log) : null;
  let publicador: Publicador | null = null;
  if (kafka) {
    const created = await ensureTopics(kafka, topicosDoPedido(nomes), FATOR_DE_REPLICACAO);
    if (created.length > 0) log.info("created topics", { topics: created.join(",") });
    publicador = createPublisher(kafka, config.confirmacaoMs, log);
  }

  // The relay waits for kafkajs's own verdict on each send, not for our 5 s: a send given
  // up on while kafkajs still retried it could be written late, after the relay had sent
  // the same rows again (two PedidoCriado records, two decisions). Its own producer, with
  // a time limit longer than kafkajs's retries, learns whether the rows were written.
  const publicadorDoRelay =
    kafka && config.outbox ? createPublisher(kafka, LIMITE_DO_RELAY_MS, log) : null;
  const relay = publicadorDoRelay
    ? startRelay({ store, publicador: publicadorDoRelay, log })
    : null;
  if (relay) {
    medidor("shop_outbox_pending", "outbox rows not yet acknowledged by Kafka", [], (g) => {
      g.set(store.estadoOutbox().pendentes);
    });
    medidor(
      "shop_outbox_set_aside",
      "outbox rows Kafka refused for good, set aside so that the rest go on",
      [],
      (g) => {
        g.set(store.postasDeLado().length);
      },
    );
  }
  const pedidos = pedidosService({
    store,
    log,
    modo: config.modo,
    nomes,
    publicador,
    relay,
    confirmacaoMs: config.confirmacaoMs,
    pagamentosUrl: config.pagamentosUrl,
  });

  const consumer: RunningConsumer | null =
    kafka && publicador
      ? await startConsumer({
          kafka,
          groupId: nomes.grupos.pedidosApi,
          topics: [nomes.topicos.pagamentosResultados],
          contract: ResultadoPagamento,
          keyOf: (r) => chaveDoPedido(r.pedidoId),
          handle: pedidos.aplicarResultado,
          deadLetters: publicador,
          log,
        })
      : null;

  const plataforma = kafka ? platformReader(kafka, nomes) : null;
  const app = createApp({
    pedidos,
    outbox: relay ? () => estadoOutbox(store) : null,
    presas: consumer ? () => consumer.status().presas : null,
    modo: config.modo,
    plataforma: plataforma?.read ?? null,
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
      await publicadorDoRelay?.close();
      await consumer?.stop();
      await publicador?.close();
      await plataforma?.close();
      store.close();
    },
  };
}

/**
 * The platform panel's data, read through one admin connection and kept for a second, so
 * that many browsers polling every 2 s cost Kafka one round of admin requests a second.
 */
function platformReader(kafka: Kafka, nomes: NomesKafka) {
  const admin = kafka.admin();
  let connected: Promise<void> | null = null;
  let cached: { at: number; value: Promise<Plataforma> } | null = null;
  // Who reads what, as in the spec's topic table.
  const readers = {
    [nomes.topicos.pedidosCriados]: [nomes.grupos.pagamentos, nomes.grupos.analytics],
    [nomes.topicos.pagamentosResultados]: [nomes.grupos.pedidosApi, nomes.grupos.analytics],
  };
  return {
    read(): Promise<Plataforma> {
      if (cached && Date.now() - cached.at < 1000) return cached.value;
      connected ??= admin.connect().catch((error: unknown) => {
        connected = null;
        throw error;
      });
      const value = connected.then(() => describePlatform(admin, readers));
      value.catch(() => {
        cached = null;
      });
      cached = { at: Date.now(), value };
      return value;
    },
    async close() {
      if (connected) await admin.disconnect();
    },
  };
}

/** Pending outbox rows and the age of the oldest, for /saude and the platform panel. */
export function estadoOutbox(store: PedidosStore): EstadoOutbox {
  const e = store.estadoOutbox();
  return {
    pendentes: e.pendentes,
    maisAntigoEm: e.maisAntigoEm,
    idadeMaisAntigoMs: e.maisAntigoEm ? Date.now() - Date.parse(e.maisAntigoEm) : 0,
    postosDeLado: store
      .postasDeLado()
      .map(({ pedidoId, em, motivo }) => ({ pedidoId, em, motivo })),
  };
}
