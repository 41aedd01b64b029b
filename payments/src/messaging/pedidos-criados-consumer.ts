import { type KafkaNames, PedidoCriado, pedidoKey, ResultadoPagamento } from "@shop/contracts";
import { type Publisher, type RunningConsumer, startConsumer } from "@shop/kafka";
import { currentContext, type Logger } from "@shop/service";
import type { Kafka } from "kafkajs";
import type { PagamentoUseCases } from "../pagamentos.ts";

/**
 * The PedidoCriado consumer (group pagamentos): decide, then publish the result with the
 * same key, then record and print the decision line. The wait and the decision are in
 * record order; the publish is handed back (pipelined), so that the next record's wait
 * starts at once, and its offset is resolved only after the acknowledgement. Results
 * decided in the same turn go out in one produce request (publishInTurn).
 */
export function startPedidosCriadosConsumer(deps: {
  kafka: Kafka;
  names: KafkaNames;
  publisher: Publisher;
  pagamentos: PagamentoUseCases;
  log: Logger;
  /** COMMIT_INTERVAL_MS: offsets are committed at this interval. */
  autoCommitInterval: number;
}): Promise<RunningConsumer> {
  const { kafka, names, publisher, pagamentos, log } = deps;
  return startConsumer({
    kafka,
    groupId: names.groups.pagamentos,
    topics: [names.topics.pedidosCriados],
    contract: PedidoCriado,
    keyOf: (e) => pedidoKey(e.pedidoId),
    deadLetters: publisher,
    log,
    autoCommitInterval: deps.autoCommitInterval,
    async handle(evento, meta) {
      const decisao = await pagamentos.decidePagamento(evento.valor);
      const processadoEm = new Date().toISOString();
      const published = publisher.publishInTurn(
        names.topics.pagamentosResultados,
        pedidoKey(evento.pedidoId),
        ResultadoPagamento.encode({
          versao: 1,
          pedidoId: evento.pedidoId,
          ...decisao,
          processadoEm,
        }),
      );
      return {
        pending: published.then(() =>
          pagamentos.recordDecision(
            {
              pedidoId: evento.pedidoId,
              valor: evento.valor,
              ...decisao,
              processadoEm,
              origem: "kafka",
              particao: meta.partition,
              offset: meta.offset,
            },
            currentContext()?.traceId ?? null,
          ),
        ),
      };
    },
  });
}
