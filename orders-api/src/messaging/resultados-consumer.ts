import { type KafkaNames, pedidoKey, ResultadoPagamento } from "@shop/contracts";
import {
  type MemberIdentity,
  type Publisher,
  type RecordMeta,
  type RunningConsumer,
  startConsumer,
} from "@shop/kafka";
import { currentContext, type Logger } from "@shop/service";
import type { Kafka } from "kafkajs";
import { applyResultado, type PedidoPorts } from "../pedidos.ts";

/**
 * The results consumer (group pedidos-api): each ResultadoPagamento goes to the use case
 * with where it came from (topic, partition, offset, trace) for the order's timeline.
 * Pipelined: the results handed over in one turn share a transaction (group commit), and
 * each record's offset is resolved only once that transaction committed.
 */
export function startResultadosConsumer(deps: ConsumerDeps): Promise<RunningConsumer> {
  const { kafka, names, publisher, log } = deps;
  return startConsumer({
    kafka,
    groupId: names.groups.pedidosApi,
    topics: [names.topics.pagamentosResultados],
    contract: ResultadoPagamento,
    keyOf: (r) => pedidoKey(r.pedidoId),
    deadLetters: publisher,
    log,
    // Applying a result is a short database write: the three partitions' results are
    // applied side by side, and their writes share group commits.
    partitionsAtOnce: 3,
    ...(deps.memberIdentity ? { memberIdentity: deps.memberIdentity } : {}),
    handle: (resultado, meta) => handleResultado(deps, resultado, meta),
  });
}

interface ConsumerDeps {
  kafka: Kafka;
  names: KafkaNames;
  publisher: Publisher;
  pedidos: PedidoPorts;
  log: Logger;
  /** On SQLite, the one instance of its database: its group member id, kept beside it. */
  memberIdentity?: MemberIdentity;
}

/**
 * One ResultadoPagamento: applied by the use case (applyResultado, Rule E7) with where it
 * came from, for the order's timeline; its offset is resolved once the write committed.
 */
async function handleResultado(
  { pedidos, log }: ConsumerDeps,
  resultado: ResultadoPagamento,
  meta: RecordMeta,
) {
  const where = { pedido: resultado.pedidoId, partition: meta.partition, offset: meta.offset };
  const applied = applyResultado(pedidos, resultado, {
    topico: meta.topic,
    particao: meta.partition,
    offset: meta.offset,
    trace: currentContext()?.traceId ?? null,
  });
  return {
    pending: applied.then((o) => {
      if (o.outcome === "unknown-pedido") log.warn("result for an unknown order ignored", where);
      else if (o.outcome === "applied")
        log.info(`order ${o.status}`, { ...where, por: o.processadoPor });
      else log.info(o.reason, where);
    }),
  };
}
