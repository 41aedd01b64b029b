import { type SolicitacaoPagamento, toCents } from "@shop/contracts";
import { type Decisao, decide, differenceFrom } from "./domain/decisao.ts";
import type { DecisaoStore } from "./store.ts";

/**
 * What the broker edition's payments use cases work with (src/server.ts makes it); each
 * use case below takes it as its first argument, as the orders services' do.
 */
export interface PagamentoPorts {
  store: DecisaoStore;
  /** Runs work in one transaction; the work of one turn may share it (group commit). */
  inTransaction: <T>(work: () => T) => Promise<T>;
}

/** The same key with other content is the client's error: it throws, the decision unchanged. */
function sameContent(d: Decisao, s: Parameters<typeof differenceFrom>[1]) {
  const difference = differenceFrom(d, s);
  if (difference)
    throw new Error(
      `solicitacaoId ${d.solicitacaoId} already decided for other content: ${difference}`,
    );
}

/**
 * Rules B13-B16: one decision per key, stored before the result is published; a repeated
 * request gets the stored decision again; the same key with other content fails and leaves
 * the stored decision as it was.
 */
export async function decidePagamento(
  { store, inTransaction }: PagamentoPorts,
  s: SolicitacaoPagamento,
): Promise<{ decisao: Decisao & { decididaEm: string }; repeated: boolean }> {
  const request = { pedidoId: s.pedidoId, valorCentavos: toCents(s.valor), cenario: s.cenario };
  const existing = store.findDecisao(s.solicitacaoId);
  if (existing) {
    sameContent(existing, request);
    await inTransaction(() => store.countRepeat(s.solicitacaoId));
    return { decisao: existing, repeated: true };
  }
  const decisao = await inTransaction(() =>
    store.insertDecisao({ solicitacaoId: s.solicitacaoId, ...request, ...decide(s.cenario) }),
  );
  sameContent(decisao, request); // a concurrent insert won the UNIQUE race
  return { decisao, repeated: false };
}

export const listDecisoes = ({ store }: PagamentoPorts) => store.listDecisoes();
