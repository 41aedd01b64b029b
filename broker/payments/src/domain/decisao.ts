import type { Cenario, Cents } from "@shop/contracts";

export const MOTIVO_APROVADO = "aprovado pelo simulador (cenário APROVAR)";
export const MOTIVO_RECUSADO = "recusado pelo simulador (cenário RECUSAR)";

export interface Decisao {
  solicitacaoId: string;
  pedidoId: string;
  valorCentavos: Cents;
  cenario: Cenario;
  aprovado: boolean;
  motivo: string;
}

/** Deterministic, no randomness: APROVAR approves, RECUSAR refuses. */
export function decide(cenario: Cenario): Pick<Decisao, "aprovado" | "motivo"> {
  return cenario === "APROVAR"
    ? { aprovado: true, motivo: MOTIVO_APROVADO }
    : { aprovado: false, motivo: MOTIVO_RECUSADO };
}

/** The same key must come with the same pedidoId, valor and cenario; otherwise it fails. */
export function differenceFrom(
  d: Decisao,
  s: { pedidoId: string; valorCentavos: Cents; cenario: Cenario },
): string | null {
  if (d.pedidoId !== s.pedidoId)
    return `pedidoId ${s.pedidoId} differs from the stored ${d.pedidoId}`;
  if (d.valorCentavos !== s.valorCentavos)
    return `valor ${s.valorCentavos} cents differs from the stored ${d.valorCentavos}`;
  if (d.cenario !== s.cenario) return `cenario ${s.cenario} differs from the stored ${d.cenario}`;
  return null;
}
