import { type AmqpClient, type RunningConsumer, startConsumer } from "@shop/amqp";
import {
  EXCHANGES,
  fromCents,
  PagamentoProcessado,
  QUEUES,
  ROUTING_KEYS,
  SolicitacaoPagamento,
} from "@shop/contracts";
import type { Logger } from "@shop/service";
import { decidePagamento, type PagamentoPorts } from "../pagamentos.ts";

/**
 * The payment requests queue's consumer: decide (stored before anything is published),
 * then publish PagamentoProcessado, confirmed; the delivery is acked after all this.
 */
export function startSolicitacoesConsumer(deps: {
  amqp: AmqpClient;
  pagamentos: PagamentoPorts;
  confirmMs: number;
  log: Logger;
  consumers: number;
  pauseBeforeAckMs: number;
}): Promise<RunningConsumer> {
  const { amqp, pagamentos, log } = deps;
  return startConsumer({
    client: amqp,
    queue: QUEUES.solicitacoes,
    contract: SolicitacaoPagamento,
    log,
    consumers: deps.consumers,
    pauseBeforeAckMs: deps.pauseBeforeAckMs,
    async handle(solicitacao) {
      const { decisao, repeated } = await decidePagamento(pagamentos, solicitacao);
      log.info(
        repeated ? "repeated request: republishing the stored decision" : "decision stored",
        {
          solicitacao: solicitacao.solicitacaoId,
          pedido: solicitacao.pedidoId,
          aprovado: decisao.aprovado,
        },
      );
      const message = PagamentoProcessado.encode({
        versao: 1,
        solicitacaoId: decisao.solicitacaoId,
        pedidoId: decisao.pedidoId,
        valor: fromCents(decisao.valorCentavos),
        aprovado: decisao.aprovado,
        motivo: decisao.motivo,
      });
      // When the decision was stored, for the orders service's timeline: metadata in a
      // header, outside the body's contract (docs/CONTRACT-CHANGES.md).
      await amqp.publish(EXCHANGES.events, ROUTING_KEYS.resultado, message, deps.confirmMs, {
        "x-decidida-em": decisao.decididaEm,
      });
    },
  });
}
