import { type AmqpClient, type Delivery, type RunningConsumer, startConsumer } from "@shop/amqp";
import { PagamentoProcessado, QUEUES, toCents } from "@shop/contracts";
import type { Logger } from "@shop/service";
import { applyResultado, type PedidoPorts } from "../pedidos.ts";

/**
 * The results queue's consumer: each PagamentoProcessado goes to the use case with when
 * payments stored its decision (the x-decidida-em header, outside the body's contract);
 * the delivery is acked after the use case's transaction committed.
 */
export function startResultadosConsumer(deps: ConsumerDeps): Promise<RunningConsumer> {
  const { amqp, log } = deps;
  return startConsumer({
    client: amqp,
    queue: QUEUES.resultados,
    contract: PagamentoProcessado,
    log,
    consumers: deps.consumers,
    pauseBeforeAckMs: deps.pauseBeforeAckMs,
    handle: (resultado, delivery) => handleResultado(deps, resultado, delivery),
  });
}

interface ConsumerDeps {
  amqp: AmqpClient;
  pedidos: PedidoPorts;
  log: Logger;
  consumers: number;
  pauseBeforeAckMs: number;
}

/** One PagamentoProcessado: applied by the use case (applyResultado), in one transaction. */
async function handleResultado(
  { pedidos, log }: ConsumerDeps,
  resultado: PagamentoProcessado,
  delivery: Delivery,
): Promise<void> {
  const decidedAt = delivery.headers["x-decidida-em"];
  const o = await applyResultado(pedidos, {
    ...resultado,
    valorCentavos: toCents(resultado.valor),
    decididaEm: typeof decidedAt === "string" ? decidedAt : null,
  });
  const where = { solicitacao: resultado.solicitacaoId, pedido: resultado.pedidoId };
  if (o.outcome === "repeated")
    log.info("repeated result for a concluded request: nothing changes", where);
  else log.info(`result applied: order ${o.status}`, { ...where, aprovado: resultado.aprovado });
}
