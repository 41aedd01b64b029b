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

export interface DadosDoPedido {
  cliente: string;
  item: string;
  quantidade: number;
  precoUnitario: number;
}

/** The server computes valor = quantidade × precoUnitario, in integer cents. */
export function novoPedido(dados: DadosDoPedido, agora: Date): Omit<Pedido, "id"> {
  return {
    cliente: dados.cliente,
    item: dados.item,
    quantidade: dados.quantidade,
    valorCentavos: multiplyCents(toCents(dados.precoUnitario), dados.quantidade),
    status: "AGUARDANDO_PAGAMENTO",
    motivo: null,
    processadoPor: null,
    criadoEm: agora.toISOString(),
  };
}

export interface Resultado {
  status: StatusPagamento;
  motivo: string | null;
  instancia: string;
}

export type Efeito =
  | { aplicar: true; status: StatusPedido; motivo: string | null; processadoPor: string }
  | { aplicar: false; porque: string };

/**
 * A result moves an order only while it is AGUARDANDO_PAGAMENTO: APROVADO -> PAGO,
 * RECUSADO -> RECUSADO. A repeated result, or one for an order already decided, changes
 * nothing.
 */
export function efeitoDoResultado(status: StatusPedido, resultado: Resultado): Efeito {
  if (status !== "AGUARDANDO_PAGAMENTO") {
    return { aplicar: false, porque: `order already ${status}: repeated result ignored` };
  }
  return {
    aplicar: true,
    status: resultado.status === "APROVADO" ? "PAGO" : "RECUSADO",
    motivo: resultado.motivo,
    processadoPor: resultado.instancia,
  };
}
