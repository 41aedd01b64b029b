import type { Express } from "express";

/**
 * What the bare programs (bare-intake.ts, bare-pipeline.ts, bare-broker.ts) share: an
 * order's body checked by hand, the 201 body, and listening where the benchmark reads it.
 */
export interface BareOrder {
  cliente: string;
  item: string;
  quantidade: number;
  valorCentavos: number;
  criadoEm: string;
}

/** The body of POST /pedidos checked by hand, its total in cents; null when it is not one. */
export function bareOrder(body: unknown): BareOrder | null {
  const { cliente, item, quantidade, precoUnitario } = (body ?? {}) as Record<string, unknown>;
  if (
    typeof cliente !== "string" ||
    typeof item !== "string" ||
    typeof quantidade !== "number" ||
    !Number.isInteger(quantidade) ||
    typeof precoUnitario !== "number" ||
    precoUnitario <= 0
  )
    return null;
  return {
    cliente,
    item,
    quantidade,
    valorCentavos: Math.round(precoUnitario * 100) * quantidade,
    criadoEm: new Date().toISOString(),
  };
}

/** The 201 body of a new order, as the orders API answers it. */
export const bareAnswer = (id: number, o: BareOrder) => ({
  id,
  cliente: o.cliente,
  item: o.item,
  quantidade: o.quantidade,
  valor: o.valorCentavos / 100,
  status: "AGUARDANDO_PAGAMENTO",
  motivo: null,
  processadoPor: null,
  criadoEm: o.criadoEm,
});

/** Listens on a free port and prints it, as ServiceProcess waits to read. */
export function listen(app: Express, what: string): void {
  const server = app.listen(0, "127.0.0.1", () => {
    const address = server.address();
    console.log(
      `bare ${what} listening on http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    );
  });
}
