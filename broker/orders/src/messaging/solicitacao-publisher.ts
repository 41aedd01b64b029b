import type { AmqpClient } from "@shop/amqp";
import { EXCHANGES, fromCents, ROUTING_KEYS, SolicitacaoPagamento } from "@shop/contracts";
import type { Logger } from "@shop/service";
import type { SolicitacaoPublisher } from "../pedidos.ts";

/** SolicitacaoPagamento to the commands exchange: mandatory, persistent, confirmed in confirmMs. */
export function solicitacaoPublisher(
  amqp: AmqpClient,
  confirmMs: number,
  log: Logger,
): SolicitacaoPublisher {
  return {
    async publish(s) {
      const message = SolicitacaoPagamento.encode({
        versao: 1,
        solicitacaoId: s.solicitacaoId,
        pedidoId: s.pedidoId,
        valor: fromCents(s.valorCentavos),
        cenario: s.cenario,
      });
      await amqp.publish(EXCHANGES.commands, ROUTING_KEYS.solicitar, message, confirmMs);
      log.info("payment request published and confirmed", {
        solicitacao: s.solicitacaoId,
        pedido: s.pedidoId,
      });
    },
  };
}
