import {
  type Pedido,
  type PedidoCriado,
  PedidoCriadoV1,
  type ResultadoPagamento,
} from "@shop/contracts";
import type { Dashboard } from "../../analytics/src/domain/orders-view.ts";
import type { Pedido as StoredPedido } from "../../orders-api/src/domain/pedido.ts";

/**
 * Builders of the shop's records for tests: each field written once, here, so that a
 * required field added to a contract fails typecheck in this file alone, and a test says
 * only what it is about (`aPedidoCriado({ valor: 100.01 })`). docs/adding-a-field.md.
 */
const AT = "2026-11-21T10:00:00.000Z";

/** An order as the orders API answers it (PedidoSchema). */
export const aPedido = (over: Partial<Pedido> = {}): Pedido => ({
  id: 1,
  cliente: "Ana",
  item: "caneca",
  quantidade: 2,
  valor: 37.8,
  status: "AGUARDANDO_PAGAMENTO",
  motivo: null,
  processadoPor: null,
  criadoEm: AT,
  ...over,
});

/** An order as the orders API's store keeps it (cents, no id yet). */
export const aStoredPedido = (over: Partial<StoredPedido> = {}): Omit<StoredPedido, "id"> => {
  const { id: _, valor, ...rest } = aPedido();
  return {
    ...rest,
    valorCentavos: Math.round(valor * 100),
    criadoEm: new Date().toISOString(),
    ...over,
  };
};

/** A PedidoCriado as the orders API publishes it: the fields the event declares, of `aPedido`. */
export const aPedidoCriado = (over: Partial<PedidoCriado> = {}): PedidoCriado => {
  const { id, ...pedido } = aPedido();
  const declared = Object.keys(PedidoCriadoV1.shape).filter((f) => f in pedido);
  const fields = Object.fromEntries(declared.map((f) => [f, pedido[f as keyof typeof pedido]]));
  return { ...fields, versao: 1, pedidoId: id, ...over } as PedidoCriado;
};

/** A ResultadoPagamento as payments publishes it: approved by caixa-1, now. */
export const aResultado = (over: Partial<ResultadoPagamento> = {}): ResultadoPagamento => ({
  versao: 1,
  pedidoId: 1,
  status: "APROVADO",
  motivo: null,
  instancia: "caixa-1",
  processadoEm: new Date().toISOString(),
  ...over,
});

/** The analytics dashboard of an empty log. */
export const aDashboard = (over: Partial<Dashboard> = {}): Dashboard => ({
  pedidosVistos: 0,
  pedidosPagos: 0,
  receitaCentavos: 0,
  maisVendido: null,
  resultadosSemPedido: 0,
  ...over,
});
