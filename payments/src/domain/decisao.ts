import { type Cents, MOTIVO_OVER_LIMIT, type StatusPagamento } from "@shop/contracts";

/** The test card's limit: 100.00 is approved, 100.01 is refused. */
export const LIMIT_CENTS: Cents = 100_00;

export interface Decisao {
  status: StatusPagamento;
  motivo: string | null;
}

/** Deterministic: the same valor always gets the same decision. */
export function decide(valorCentavos: Cents): Decisao {
  return valorCentavos <= LIMIT_CENTS
    ? { status: "APROVADO", motivo: null }
    : { status: "RECUSADO", motivo: MOTIVO_OVER_LIMIT };
}
