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
export function canAddItem(
  pedido: Pedido,
): { ok: true } | { ok: false; reason: string; mensagem: string } {
  return pedido.status === "ABERTO"
    ? { ok: true }
    : {
        ok: false,
        reason: `order is ${pedido.status}: its items are locked`,
        mensagem: `Os itens do pedido estão bloqueados: ele está ${pedido.status}.`,
      };
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
  | { kind: "new" }
  /** Same key, same content, still PENDENTE: publish again, 202. */
  | { kind: "republish"; solicitacao: Solicitacao }
  /** Same key, same content, concluded: 200 with the stored result, nothing published. */
  | { kind: "concluded"; solicitacao: Solicitacao }
  /** 409: `reason` for developers, `mensagem` the sentence a person reads (Portuguese). */
  | { kind: "conflict"; reason: string; mensagem: string };

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
        kind: "conflict",
        reason: "this solicitacaoId was already used with different content",
        mensagem: "Este solicitacaoId já foi usado com outro conteúdo (pedido, cenário ou valor).",
      };
    }
    return existing.estado === "PENDENTE"
      ? { kind: "republish", solicitacao: existing }
      : { kind: "concluded", solicitacao: existing };
  }
  if (pedido.status === "PAGO") {
    return { kind: "conflict", reason: "order already paid", mensagem: "O pedido já está pago." };
  }
  if (pedido.status === "EM_PAGAMENTO") {
    return {
      kind: "conflict",
      reason: "a payment with another solicitacaoId is pending for this order",
      mensagem: "Já há um pagamento pendente deste pedido com outro solicitacaoId.",
    };
  }
  return { kind: "new" };
}

export type ResultadoEffect =
  | { kind: "apply"; pedidoStatus: StatusPedidoBroker }
  | { kind: "repeated" }
  | { kind: "conflict"; reason: string };

/**
 * A result must match its record: same pedidoId and valor, and the outcome the cenario
 * asked for. A repeat for a concluded record changes nothing. Approved -> PAGO; refused ->
 * ABERTO (items and total unchanged); a result never reopens a paid order.
 */
export function resultadoEffect(
  solicitacao: Solicitacao,
  pedidoStatus: StatusPedidoBroker,
  resultado: { pedidoId: string; valorCentavos: Cents; aprovado: boolean },
): ResultadoEffect {
  if (resultado.pedidoId !== solicitacao.pedidoId) {
    return {
      kind: "conflict",
      reason: `pedidoId ${resultado.pedidoId} differs from the record's ${solicitacao.pedidoId}`,
    };
  }
  if (resultado.valorCentavos !== solicitacao.valorCentavos) {
    return {
      kind: "conflict",
      reason: `valor ${resultado.valorCentavos} cents differs from the record's ${solicitacao.valorCentavos}`,
    };
  }
  if (resultado.aprovado !== (solicitacao.cenario === "APROVAR")) {
    return {
      kind: "conflict",
      reason: `outcome aprovado=${resultado.aprovado} does not match cenario ${solicitacao.cenario}`,
    };
  }
  if (solicitacao.estado === "CONCLUIDA") return { kind: "repeated" };
  if (pedidoStatus === "PAGO") return { kind: "apply", pedidoStatus: "PAGO" };
  return { kind: "apply", pedidoStatus: resultado.aprovado ? "PAGO" : "ABERTO" };
}
