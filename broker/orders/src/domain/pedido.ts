import { type Cenario, type Cents, multiplyCents, type StatusPedidoBroker } from "@shop/contracts";

export interface PedidoItem {
  sku: string;
  quantidade: number;
  precoCentavos: Cents;
}

export interface Pedido {
  id: string;
  clienteId: string;
  status: StatusPedidoBroker;
  itens: PedidoItem[];
}

/** The total is computed by the service from the items, never sent by the client. */
export function totalOf(itens: readonly PedidoItem[]): Cents {
  return itens.reduce((sum, i) => sum + multiplyCents(i.precoCentavos, i.quantidade), 0);
}

/** Items may change only while the order is ABERTO: they are locked while it is being paid. */
export function canAddItem(pedido: Pedido): { ok: true } | { ok: false; porque: string } {
  return pedido.status === "ABERTO"
    ? { ok: true }
    : { ok: false, porque: `order is ${pedido.status}: its items are locked` };
}

/** The payment-request record, keyed by solicitacaoId. */
export interface Solicitacao {
  solicitacaoId: string;
  pedidoId: string;
  cenario: Cenario;
  valorCentavos: Cents;
  estado: "PENDENTE" | "CONCLUIDA";
  aprovado: boolean | null;
  motivo: string | null;
}

export type PagamentoRequestDecision =
  /** Store the record PENDENTE and move the order to EM_PAGAMENTO, then publish: 202. */
  | { tipo: "nova" }
  /** Same key, same content, still PENDENTE: publish again, 202. */
  | { tipo: "republicar"; solicitacao: Solicitacao }
  /** Same key, same content, concluded: 200 with the stored result, nothing published. */
  | { tipo: "concluida"; solicitacao: Solicitacao }
  | { tipo: "conflito"; porque: string };

/** The rules of POST /pedidos/{pedidoId}/pagamentos, given the order and the key's record. */
export function decidePagamentoRequest(
  pedido: Pedido,
  existing: Solicitacao | null,
  request: { solicitacaoId: string; cenario: Cenario },
): PagamentoRequestDecision {
  if (existing) {
    const sameContent =
      existing.pedidoId === pedido.id &&
      existing.cenario === request.cenario &&
      existing.valorCentavos === totalOf(pedido.itens);
    if (!sameContent) {
      return {
        tipo: "conflito",
        porque: "this solicitacaoId was already used with different content",
      };
    }
    return existing.estado === "PENDENTE"
      ? { tipo: "republicar", solicitacao: existing }
      : { tipo: "concluida", solicitacao: existing };
  }
  if (pedido.status === "PAGO") return { tipo: "conflito", porque: "order already paid" };
  if (pedido.status === "EM_PAGAMENTO") {
    return {
      tipo: "conflito",
      porque: "a payment with another solicitacaoId is pending for this order",
    };
  }
  return { tipo: "nova" };
}

export type ResultadoEffect =
  | { tipo: "aplicar"; statusDoPedido: StatusPedidoBroker }
  | { tipo: "repetido" }
  | { tipo: "conflito"; porque: string };

/**
 * A result must match its record: same pedidoId and valor, and the outcome the cenario
 * asked for. A repeat for a concluded record changes nothing. Approved -> PAGO; refused ->
 * ABERTO (items and total unchanged); a result never reopens a paid order.
 */
export function resultadoEffect(
  solicitacao: Solicitacao,
  statusDoPedido: StatusPedidoBroker,
  resultado: { pedidoId: string; valorCentavos: Cents; aprovado: boolean },
): ResultadoEffect {
  if (resultado.pedidoId !== solicitacao.pedidoId) {
    return {
      tipo: "conflito",
      porque: `pedidoId ${resultado.pedidoId} differs from the record's ${solicitacao.pedidoId}`,
    };
  }
  if (resultado.valorCentavos !== solicitacao.valorCentavos) {
    return {
      tipo: "conflito",
      porque: `valor ${resultado.valorCentavos} cents differs from the record's ${solicitacao.valorCentavos}`,
    };
  }
  if (resultado.aprovado !== (solicitacao.cenario === "APROVAR")) {
    return {
      tipo: "conflito",
      porque: `outcome aprovado=${resultado.aprovado} does not match cenario ${solicitacao.cenario}`,
    };
  }
  if (solicitacao.estado === "CONCLUIDA") return { tipo: "repetido" };
  if (statusDoPedido === "PAGO") return { tipo: "aplicar", statusDoPedido: "PAGO" };
  return { tipo: "aplicar", statusDoPedido: resultado.aprovado ? "PAGO" : "ABERTO" };
}
