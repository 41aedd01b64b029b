import {
  type Cents,
  multiplyCents,
  type NovoPedido,
  NovoPedidoSchema,
  type Pedido as PedidoWire,
  type StatusPagamento,
  type StatusPedido,
  toCents,
} from "@shop/contracts";

/**
 * An order as the domain sees it: the contract's order (`Pedido` of contracts/src/event-log.ts),
 * its money in cents. Its fields are declared once, in the contract; a field added there is
 * a field here, and `newPedido` fails typecheck until it gives it a value.
 */
export type Pedido = Omit<PedidoWire, "valor"> & { valorCentavos: Cents };

/** The body's fields a client may leave out (optional in NovoPedidoSchema). */
type Omittable = {
  [K in keyof NovoPedido]-?: undefined extends NovoPedido[K] ? K : never;
}[keyof NovoPedido];

/**
 * Each field the body may leave out, null until given: the order's JSON has every field
 * (PedidoSchema's are nullable), and a field added to both needs no line here.
 */
const ABSENT = Object.fromEntries(
  Object.entries(NovoPedidoSchema.shape)
    .filter(([, schema]) => schema.safeParse(undefined).success)
    .map(([field]) => [field, null]),
) as { [K in Omittable]: null };

/** The server computes valor = quantidade × precoUnitario, in integer cents. */
export function newPedido(input: NovoPedido, now: Date): Omit<Pedido, "id"> {
  const { precoUnitario, ...given } = input;
  return {
    ...ABSENT,
    ...given,
    valorCentavos: multiplyCents(toCents(precoUnitario), input.quantidade),
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
