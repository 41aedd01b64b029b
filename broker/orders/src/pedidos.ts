import { randomUUID } from "node:crypto";
import {
  type Etapa,
  fromCents,
  type HistoricoBroker,
  type Item,
  inMoneyRange,
  type NovoPedidoBroker,
  type PagamentoRequest,
  toCents,
} from "@shop/contracts";
import {
  canAddItem,
  decidePagamentoRequest,
  type Pedido,
  resultadoEffect,
  type Solicitacao,
  totalOf,
} from "./domain/pedido.ts";
import type { PedidoStore } from "./store.ts";

/** How a payment request reaches payments (src/messaging/): published, confirmed, or throws. */
export interface SolicitacaoPublisher {
  publish(solicitacao: Solicitacao): Promise<void>;
}

/** A result as the use case sees it: money in cents, and when payments stored its decision. */
export interface ResultadoReceived {
  solicitacaoId: string;
  pedidoId: string;
  valorCentavos: number;
  aprovado: boolean;
  motivo: string;
  decididaEm: string | null;
}

export type AddItemOutcome =
  | { outcome: "added"; pedido: Pedido }
  | { outcome: "unknown-pedido" }
  | { outcome: "conflict"; reason: string; mensagem: string }
  | { outcome: "over-limit" };

export type PaymentOutcome =
  | { outcome: "accepted"; solicitacao: Solicitacao }
  | { outcome: "concluded"; solicitacao: Solicitacao }
  | { outcome: "unknown-pedido" }
  | { outcome: "conflict"; reason: string; mensagem: string }
  | { outcome: "not-published"; solicitacao: Solicitacao; error: unknown };

export type ApplyOutcome =
  | { outcome: "applied"; status: Pedido["status"] }
  | { outcome: "repeated" };

/**
 * What the use cases run on: the store, a transaction, and the publisher of payment
 * requests. Built once (src/server.ts); each use case below takes it as its first argument.
 */
export interface PedidoPorts {
  store: PedidoStore;
  /** Runs work in one transaction; the work of one turn may share it (group commit). */
  inTransaction: <T>(work: () => T) => Promise<T>;
  publisher: SolicitacaoPublisher;
}

const toItem = (i: Item) => ({
  sku: i.sku,
  quantidade: i.quantidade,
  precoCentavos: toCents(i.precoUnitario),
});

/** POST /pedidos: a new order, ABERTO, with its items. */
export async function createPedido(ports: PedidoPorts, input: NovoPedidoBroker): Promise<Pedido> {
  const { store, inTransaction } = ports;
  const id = randomUUID();
  return inTransaction(() => {
    store.insertPedido(id, input.clienteId, input.itens.map(toItem));
    return store.findPedido(id) as Pedido;
  });
}

export const getPedido = (ports: PedidoPorts, id: string): Pedido | null =>
  ports.store.findPedido(id);

/** The newest orders first, as many as asked. */
export const listPedidos = (ports: PedidoPorts, limit: number): Pedido[] =>
  ports.store.listPedidos(limit);

/** Items may change only while the order is ABERTO, and its total stays in the money range. */
export function addItem(ports: PedidoPorts, id: string, item: Item): Promise<AddItemOutcome> {
  const { store, inTransaction } = ports;
  return inTransaction(() => {
    const pedido = store.findPedido(id);
    if (!pedido) return { outcome: "unknown-pedido" };
    const rule = canAddItem(pedido);
    if (!rule.ok) return { outcome: "conflict", reason: rule.reason, mensagem: rule.mensagem };
    const added = toItem(item);
    if (!inMoneyRange(totalOf([...pedido.itens, added]))) return { outcome: "over-limit" };
    store.insertItem(id, added);
    return { outcome: "added", pedido: store.findPedido(id) as Pedido };
  });
}

/**
 * Rules B1-B11 of POST /pedidos/{pedidoId}/pagamentos: the record and the order's move to
 * EM_PAGAMENTO in one local transaction (recordPagamentoRequest), then the publish,
 * confirmed; a repeat of a PENDENTE request publishes again, one of a concluded request
 * answers its result.
 */
export async function requestPagamento(
  ports: PedidoPorts,
  pedidoId: string,
  request: PagamentoRequest,
): Promise<PaymentOutcome> {
  const decided = await ports.inTransaction(() =>
    recordPagamentoRequest(ports.store, pedidoId, request),
  );
  if (decided.outcome !== "accepted") return decided;
  const { solicitacao } = decided;
  try {
    await ports.publisher.publish(solicitacao);
  } catch (error) {
    return { outcome: "not-published", solicitacao, error };
  }
  await ports.inTransaction(() => ports.store.markConfirmed(solicitacao.solicitacaoId));
  return decided;
}

/** In the caller's transaction: the domain decides (decidePagamentoRequest); a new request is stored. */
function recordPagamentoRequest(store: PedidoStore, pedidoId: string, request: PagamentoRequest) {
  const pedido = store.findPedido(pedidoId);
  if (!pedido) return { outcome: "unknown-pedido" } as const;
  const d = decidePagamentoRequest(pedido, store.findSolicitacao(request.solicitacaoId), request);
  if (d.kind === "conflict")
    return { outcome: "conflict", reason: d.reason, mensagem: d.mensagem } as const;
  if (d.kind === "new") {
    store.insertSolicitacao({ ...request, pedidoId, valorCentavos: totalOf(pedido.itens) });
    store.updateStatus(pedidoId, "EM_PAGAMENTO");
  }
  const solicitacao = store.findSolicitacao(request.solicitacaoId) as Solicitacao;
  return { outcome: d.kind === "concluded" ? "concluded" : "accepted", solicitacao } as const;
}

/**
 * A PagamentoProcessado: conclude the record and move the order, in one transaction; a
 * repeated one is counted and changes nothing. A result that contradicts its record
 * throws (retried, then dead-lettered).
 */
export function applyResultado(
  ports: PedidoPorts,
  resultado: ResultadoReceived,
): Promise<ApplyOutcome> {
  const { store } = ports;
  return ports.inTransaction(() => {
    const solicitacao = store.findSolicitacao(resultado.solicitacaoId);
    if (!solicitacao) throw new Error(`unknown solicitacaoId ${resultado.solicitacaoId}`);
    const pedido = store.findPedido(solicitacao.pedidoId);
    if (!pedido) throw new Error(`unknown order ${solicitacao.pedidoId}`);
    const e = resultadoEffect(solicitacao, pedido.status, resultado);
    if (e.kind === "conflict")
      throw new Error(`conflicting result for ${resultado.solicitacaoId}: ${e.reason}`);
    if (e.kind === "repeated") {
      store.countResultado(solicitacao.solicitacaoId, "repeated");
      return { outcome: "repeated" };
    }
    store.concludeSolicitacao(solicitacao.solicitacaoId, resultado);
    store.countResultado(solicitacao.solicitacaoId, "applied");
    store.updateStatus(solicitacao.pedidoId, e.pedidoStatus);
    return { outcome: "applied", status: e.pedidoStatus };
  });
}

/** Each payment request's timeline: stored, publish confirmed, decision stored, applied. */
export function getHistorico(ports: PedidoPorts, pedidoId: string): HistoricoBroker | null {
  if (!ports.store.findPedido(pedidoId)) return null;
  const step = (etapa: string, em: string | null, detalhes: Etapa["detalhes"] = {}) =>
    em ? [{ etapa, em, detalhes }] : [];
  return {
    pedidoId,
    solicitacoes: ports.store.historicoRows(pedidoId).map((r) => ({
      solicitacaoId: r.solicitacao_id,
      etapas: [
        ...step("registro-guardado", r.criada_em, {
          cenario: r.cenario,
          valor: fromCents(r.valor_centavos),
        }),
        ...step("publicacao-confirmada", r.confirmada_em),
        ...step("decisao-guardada", r.decidida_em, {
          aprovado: r.aprovado === null ? null : r.aprovado === 1,
          motivo: r.motivo,
        }),
        ...step("resultado-aplicado", r.concluida_em),
      ],
    })),
  };
}
