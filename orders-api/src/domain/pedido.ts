import {
  type Cents,
  multiplyCents,
  type StatusPagamento,
  type StatusPedido,
  toCents,
} from "@shop/contracts";

/** An order as the domain sees it: money in cents. */
export interface Pedido {
  id: number;
  cliente: string;
  item: string;
  quantidade: number;
  valorCentavos: Cents;
  status: StatusPedido;
  motivo: string | null;
  processadoPor: string | null;
  criadoEm: string;
}

export interface PedidoInput {
  cliente: string;
  item: string;
  quantidade: number;
  precoUnitario: number;
}

/** The server computes valor = quantidade × precoUnitario, in integer cents. */
export function newPedido(input: PedidoInput, now: Date): Omit<Pedido, "id"> {
  return {
    cliente: input.cliente,
    item: input.item,
    quantidade: input.quantidade,
    valorCentavos: multiplyCents(toCents(input.precoUnitario), input.quantidade),
    status: "AGUARDANDO_PAGAMENTO",
    motivo: null,
    processadoPor: null,
    criadoEm: now.toISOString(),
  };
}

export interface Resultado {
  status: StatusPagamento;
  motivo: string | null;
  instancia: string;
}

export type Effect =
  | { apply: true; status: StatusPedido; motivo: string | null; processadoPor: string }
  | { apply: false; reason: string };

/**
 * A result moves an order only while it is AGUARDANDO_PAGAMENTO: APROVADO -> PAGO,
 * RECUSADO -> RECUSADO. A repeated result, or one for an order already decided, changes
 * nothing.
 */
export function resultadoEffect(status: StatusPedido, resultado: Resultado): Effect {
  if (status !== "AGUARDANDO_PAGAMENTO") {
    return { apply: false, reason: `order already ${status}: repeated result ignored` };
  }
  return {
    apply: true,
    status: resultado.status === "APROVADO" ? "PAGO" : "RECUSADO",
    motivo: resultado.motivo,
    processadoPor: resultado.instancia,
  };
}
