import type { AmqpClient } from "@shop/amqp";
import {
  EXCHANGES,
  fromCents,
  PagamentoProcessado,
  ROUTING_KEYS,
  type SolicitacaoPagamento,
  toCents,
} from "@shop/contracts";
import { agrupar, type Logger } from "@shop/service";
import { type Decisao, decidir, mesmoPedido } from "./domain/decisao.ts";
import type { PaymentsStore } from "./store.ts";

export interface PagamentosDeps {
  store: PaymentsStore;
  amqp: AmqpClient;
  confirmacaoMs: number;
  log: Logger;
}

export function pagamentosService({ store, amqp, confirmacaoMs, log }: PagamentosDeps) {
  /** Group commit: the decisions its consumers store in one turn share a transaction. */
  const guardar = agrupar((ds: Decisao[]) => store.guardarVarios(ds));

  async function publicarResultado(d: Decisao & { decididaEm: string }) {
    const message = PagamentoProcessado.encode({
      versao: 1,
      solicitacaoId: d.solicitacaoId,
      pedidoId: d.pedidoId,
      valor: fromCents(d.valorCentavos),
      aprovado: d.aprovado,
      motivo: d.motivo,
    });
    // When the decision was stored, for the orders service's timeline: metadata in a
    // header, outside the body's contract (docs/CONTRACT-CHANGES.md).
    await amqp.publicar(EXCHANGES.eventos, ROUTING_KEYS.resultado, message, confirmacaoMs, {
      "x-decidida-em": d.decididaEm,
    });
  }

  return {
    /**
     * decidirOnSolicitacaoPagamento: one decision per key, stored before the result is
     * published; a repeated request republishes the stored result; the same key with other
     * content fails and leaves the stored decision as it was. The ack comes after all this.
     */
    async onSolicitacao(s: SolicitacaoPagamento): Promise<void> {
      const pedido = { pedidoId: s.pedidoId, valorCentavos: toCents(s.valor), cenario: s.cenario };
      const existente = store.buscar(s.solicitacaoId);
      if (existente) {
        const diferenca = mesmoPedido(existente, pedido);
        if (diferenca)
          throw new Error(
            `solicitacaoId ${s.solicitacaoId} already decided for other content: ${diferenca}`,
          );
      }
      const decisao =
        existente ??
        (await guardar({ solicitacaoId: s.solicitacaoId, ...pedido, ...decidir(s.cenario) }));
      const diferenca = mesmoPedido(decisao, pedido); // a concurrent insert won the UNIQUE race
      if (diferenca)
        throw new Error(
          `solicitacaoId ${s.solicitacaoId} already decided for other content: ${diferenca}`,
        );
      log.info(
        existente ? "repeated request: republishing the stored decision" : "decision stored",
        {
          solicitacao: s.solicitacaoId,
          pedido: s.pedidoId,
          aprovado: decisao.aprovado,
        },
      );
      await publicarResultado(decisao);
    },
    decisoes: () => store.listar(),
  };
}

export type PagamentosService = ReturnType<typeof pagamentosService>;
