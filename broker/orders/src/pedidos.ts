import { randomUUID } from "node:crypto";
import { type AmqpClient, type Entrega, PublicacaoFalhou } from "@shop/amqp";
import {
  type Etapa,
  EXCHANGES,
  FORA_DO_LIMITE,
  fromCents,
  type HistoricoBroker,
  type Item,
  inMoneyRange,
  type NovoPedidoBroker,
  type PagamentoProcessado,
  type PedidoDePagamento,
  ROUTING_KEYS,
  SolicitacaoPagamento,
  toCents,
} from "@shop/contracts";
import { AppError, agrupar, type Logger, naoEncontrado } from "@shop/service";
import {
  decidirPedidoDePagamento,
  type EfeitoDoResultado,
  efeitoDoResultado,
  type Pedido,
  podeAdicionarItem,
  type Solicitacao,
  totalDe,
} from "./domain/pedido.ts";
import type { OrdersStore } from "./store.ts";

export interface PedidosDeps {
  store: OrdersStore;
  amqp: AmqpClient;
  confirmacaoMs: number;
  log: Logger;
}

const conflito = (porque: string) => new AppError("conflito", porque, 409);
const itemDoPedido = (i: Item) => ({
  sku: i.sku,
  quantidade: i.quantidade,
  precoCentavos: toCents(i.precoUnitario),
});

export type RespostaPagamento =
  | {
      status: 202;
      body: { solicitacaoId: string; pedidoId: string; valor: number; estado: "PENDENTE" };
    }
  | {
      status: 200;
      body: {
        solicitacaoId: string;
        pedidoId: string;
        valor: number;
        aprovado: boolean;
        motivo: string | null;
      };
    };

/** The orders service's use cases. */
export function pedidosService({ store, amqp, confirmacaoMs, log }: PedidosDeps) {
  /** Group commit: the publish confirms of a turn are marked in one transaction. */
  const marcarConfirmada = agrupar((ids: string[]) => {
    store.marcarConfirmadas(ids);
    return ids;
  });

  function obter(id: string): Pedido {
    const pedido = store.buscar(id);
    if (!pedido) throw naoEncontrado(`order ${id}`);
    return pedido;
  }

  async function publicarSolicitacao(s: Solicitacao): Promise<void> {
    const message = SolicitacaoPagamento.encode({
      versao: 1,
      solicitacaoId: s.solicitacaoId,
      pedidoId: s.pedidoId,
      valor: fromCents(s.valorCentavos),
      cenario: s.cenario,
    });
    try {
      await amqp.publicar(EXCHANGES.comandos, ROUTING_KEYS.solicitar, message, confirmacaoMs);
      await marcarConfirmada(s.solicitacaoId);
      log.info("payment request published and confirmed", {
        solicitacao: s.solicitacaoId,
        pedido: s.pedidoId,
      });
    } catch (error) {
      const motivo = error instanceof PublicacaoFalhou ? error.message : String(error);
      throw new AppError(
        "publicacao-nao-confirmada",
        `the payment request was not accepted by the broker (${motivo}); it stays PENDENTE: repeat the same request with the same solicitacaoId to recover`,
        503,
        undefined,
        { cause: error },
      );
    }
  }

  /** One result's effect: conclude the record and move the order (inside a transaction). */
  function aplicarUm({
    resultado,
    decididaEm,
  }: {
    resultado: PagamentoProcessado;
    decididaEm: string | null;
  }): EfeitoDoResultado {
    const registro = store.solicitacao(resultado.solicitacaoId);
    if (!registro) throw new Error(`unknown solicitacaoId ${resultado.solicitacaoId}`);
    const pedido = obter(registro.pedidoId);
    const e = efeitoDoResultado(registro, pedido.status, {
      pedidoId: resultado.pedidoId,
      valorCentavos: toCents(resultado.valor),
      aprovado: resultado.aprovado,
    });
    if (e.tipo === "conflito")
      throw new Error(`conflicting result for ${resultado.solicitacaoId}: ${e.porque}`);
    if (e.tipo === "aplicar") {
      store.concluirSolicitacao(
        registro.solicitacaoId,
        resultado.aprovado,
        resultado.motivo,
        decididaEm,
      );
      store.mudarStatus(registro.pedidoId, e.statusDoPedido);
    }
    return e;
  }

  /**
   * Group commit of the results consumer: the results its consumers hand over in one turn
   * share a transaction, and each delivery is acked only after that commit. If one of them
   * fails, each is applied alone, so that only the failing one is retried.
   */
  const aplicarJunto = agrupar((itens: Parameters<typeof aplicarUm>[0][]) =>
    store.transacao(() => itens.map(aplicarUm)),
  );

  return {
    criar(dados: NovoPedidoBroker): Pedido {
      const id = randomUUID();
      store.criar(id, dados.clienteId, dados.itens.map(itemDoPedido));
      return obter(id);
    },

    buscar: obter,

    /** Each payment request's timeline: stored, publish confirmed, decision stored, applied. */
    historico(pedidoId: string): HistoricoBroker {
      obter(pedidoId);
      const etapa = (nome: string, em: string | null, detalhes: Etapa["detalhes"] = {}) =>
        em ? [{ etapa: nome, em, detalhes }] : [];
      return {
        pedidoId,
        solicitacoes: store.historico(pedidoId).map((l) => ({
          solicitacaoId: l.solicitacao_id,
          etapas: [
            ...etapa("registro-guardado", l.criada_em, {
              cenario: l.cenario,
              valor: fromCents(l.valor_centavos),
            }),
            ...etapa("publicacao-confirmada", l.confirmada_em),
            ...etapa("decisao-guardada", l.decidida_em, {
              aprovado: l.aprovado === null ? null : l.aprovado === 1,
              motivo: l.motivo,
            }),
            ...etapa("resultado-aplicado", l.concluida_em),
          ],
        })),
      };
    },

    adicionarItem(id: string, item: Item): Pedido {
      store.transacao(() => {
        const atual = obter(id);
        const regra = podeAdicionarItem(atual);
        if (!regra.ok) throw conflito(regra.porque);
        const novo = itemDoPedido(item);
        if (!inMoneyRange(totalDe([...atual.itens, novo]))) {
          throw new AppError("entrada-invalida", "invalid input", 400, {
            precoUnitario: `with this item, the order's total ${FORA_DO_LIMITE}`,
          });
        }
        store.adicionarItem(id, novo);
      });
      return obter(id);
    },

    /** Rules 1-11 of POST /pedidos/{pedidoId}/pagamentos. */
    async solicitarPagamento(
      pedidoId: string,
      pedido: PedidoDePagamento,
    ): Promise<RespostaPagamento> {
      const decisao = store.transacao(() => {
        const atual = obter(pedidoId);
        const d = decidirPedidoDePagamento(atual, store.solicitacao(pedido.solicitacaoId), pedido);
        if (d.tipo === "conflito") throw conflito(d.porque);
        if (d.tipo === "nova") {
          // The record and the order's move to EM_PAGAMENTO: one local transaction.
          store.criarSolicitacao({ ...pedido, pedidoId, valorCentavos: totalDe(atual.itens) });
          store.mudarStatus(pedidoId, "EM_PAGAMENTO");
        }
        return d;
      });
      const registro = store.solicitacao(pedido.solicitacaoId) as Solicitacao;
      const valor = fromCents(registro.valorCentavos);
      if (decisao.tipo === "concluida") {
        return {
          status: 200,
          body: {
            solicitacaoId: registro.solicitacaoId,
            pedidoId,
            valor,
            aprovado: registro.aprovado === true,
            motivo: registro.motivo,
          },
        };
      }
      await publicarSolicitacao(registro);
      return {
        status: 202,
        body: { solicitacaoId: registro.solicitacaoId, pedidoId, valor, estado: "PENDENTE" },
      };
    },

    /** aplicarResultadoOnPagamentoProcessado: conclude the record and move the order, in one transaction. */
    async aplicarResultado(resultado: PagamentoProcessado, entrega?: Entrega): Promise<void> {
      const decididaEm = entrega?.headers["x-decidida-em"];
      const efeito = await aplicarJunto({
        resultado,
        decididaEm: typeof decididaEm === "string" ? decididaEm : null,
      });
      const where = { solicitacao: resultado.solicitacaoId, pedido: resultado.pedidoId };
      if (efeito.tipo === "repetido")
        log.info("repeated result for a concluded request: nothing changes", where);
      else if (efeito.tipo === "aplicar")
        log.info(`result applied: order ${efeito.statusDoPedido}`, {
          ...where,
          aprovado: resultado.aprovado,
        });
    },
  };
}

export type PedidosService = ReturnType<typeof pedidosService>;
