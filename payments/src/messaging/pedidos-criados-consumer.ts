import { type KafkaNames, PedidoCriado, pedidoKey, ResultadoPagamento } from "@shop/contracts";
import { type Publisher, type RecordMeta, type RunningConsumer, startConsumer } from "@shop/kafka";
import { currentContext, type Logger } from "@shop/service";
import type { Kafka } from "kafkajs";
import { decidePagamento, type PagamentoPorts, recordDecision } from "../pagamentos.ts";

/**
 * The PedidoCriado consumer (group pagamentos): decide, then publish the result with the
 * same key, then record and print the decision line. The wait and the decision are in
 * record order; the publish is handed back (pipelined), so that the next record's wait
 * starts at once, and its offset is resolved only after the acknowledgement. Results
 * decided while the previous produce request is in flight go out together in the next
 * one (publishInTurn): one at once when idle, few large requests under load.
 */
export function startPedidosCriadosConsumer(deps: ConsumerDeps): Promise<RunningConsumer> {
  const { kafka, names, publisher, log } = deps;
  const letGo = new LetGoWaits();
  return startConsumer({
    kafka,
    groupId: names.groups.pagamentos,
    topics: [names.topics.pedidosCriados],
    contract: PedidoCriado,
    keyOf: (e) => pedidoKey(e.pedidoId),
    deadLetters: publisher,
    log,
    autoCommitInterval: deps.autoCommitInterval,
    partitionsAtOnce: deps.partitionsAtOnce,
    // One transactional id for the group, not the instance: the next owner of a partition
    // fences the previous one.
    ...(deps.exactlyOnce ? { transactional: { transactionalId: names.groups.pagamentos } } : {}),
    handle: (evento, meta) => handlePedidoCriado(deps, evento, meta, letGo),
  });
}

/** How many records let go a consumer remembers the wait of (one per partition is usual). */
const REMEMBERED = 64;

/**
 * How long each record let go at a rebalance had already waited, by `topic[partition]@offset`.
 * A graceful leave rebalances the group, and the member that stays is dealt every partition,
 * the one whose record it let go among them: that record then waits only what is left of
 * its decision time, so the instance still spends the spec's 3 s on it, in two parts, and
 * the rebalance costs the survivor its pause, not the decision it was in (issue 55). A
 * record dealt to another member is decided there from the start; its entry here is
 * forgotten after REMEMBERED others.
 */
class LetGoWaits {
  private readonly waited = new Map<string, number>();

  /** What `where` had waited before it was let go (0: never let go here), forgotten once read. */
  before(where: string): number {
    const ms = this.waited.get(where) ?? 0;
    this.waited.delete(where);
    return ms;
  }

  remember(where: string, ms: number): void {
    this.waited.set(where, ms);
    if (this.waited.size > REMEMBERED)
      this.waited.delete(this.waited.keys().next().value as string);
  }
}

interface ConsumerDeps {
  kafka: Kafka;
  names: KafkaNames;
  publisher: Publisher;
  pagamentos: PagamentoPorts;
  log: Logger;
  /** COMMIT_INTERVAL_MS: offsets are committed at this interval. */
  autoCommitInterval: number;
  /** PARTICOES_EM_PARALELO: partitions decided side by side (1: the spec's one thread). */
  partitionsAtOnce: number;
  /** ENTREGA=exatamente-uma-vez: each result and its record's offset in one transaction. */
  exactlyOnce?: boolean;
}

/**
 * One PedidoCriado: the decision after the wait (decidePagamento), the ResultadoPagamento
 * published with the same key, and, once acknowledged, the decision recorded and its line
 * printed (recordDecision).
 */
async function handlePedidoCriado(
  { names, publisher, pagamentos }: ConsumerDeps,
  evento: PedidoCriado,
  meta: RecordMeta,
  letGo: LetGoWaits,
) {
  // Let go if the group rebalances during the wait (RecordMeta.signal): nothing decided yet.
  // A record let go before and given back waits only the rest of its time (LetGoWaits).
  const where = `${meta.topic}[${meta.partition}]@${meta.offset}`;
  const before = letGo.before(where);
  const began = Date.now();
  const decisao = await decidePagamento(pagamentos, evento.valor, meta.signal, before).catch(
    (error: unknown) => {
      if (meta.signal?.aborted) letGo.remember(where, before + Date.now() - began);
      throw error;
    },
  );
  const processadoEm = new Date().toISOString();
  const topic = names.topics.pagamentosResultados;
  const key = pedidoKey(evento.pedidoId);
  const value = ResultadoPagamento.encode({
    versao: 1,
    pedidoId: evento.pedidoId,
    ...decisao,
    processadoEm,
  });
  // Exactly-once: written in the partition's transaction, visible when it commits.
  const published = meta.send
    ? meta.send([{ topic, key, value }])
    : publisher.publishInTurn(topic, key, value);
  const decided = {
    pedidoId: evento.pedidoId,
    valor: evento.valor,
    ...decisao,
    processadoEm,
    origem: "kafka" as const,
    particao: meta.partition,
    offset: meta.offset,
  };
  const traceId = currentContext()?.traceId ?? null;
  return { pending: published.then(() => recordDecision(pagamentos, decided, traceId)) };
}
