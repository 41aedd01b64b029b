import { moneyRangeTrigger, openDatabase } from "@shop/service";
import type { Decisao } from "./domain/decisao.ts";

const MIGRATIONS = [
  `CREATE TABLE decisoes (
     solicitacao_id TEXT NOT NULL UNIQUE,
     pedido_id TEXT NOT NULL,
     valor_centavos INTEGER NOT NULL,
     cenario TEXT NOT NULL CHECK (cenario IN ('APROVAR', 'RECUSAR')),
     aprovado INTEGER NOT NULL,
     motivo TEXT NOT NULL,
     decidida_em TEXT NOT NULL
   )`,
  moneyRangeTrigger("decisoes", "decisoes_valor_no_limite", "NEW.valor_centavos"),
  // Deliveries of a decided request recognised as repeats (a redelivery, a client's repeat).
  "ALTER TABLE decisoes ADD COLUMN repeticoes INTEGER NOT NULL DEFAULT 0",
];

interface DecisaoRow {
  solicitacao_id: string;
  pedido_id: string;
  valor_centavos: number;
  cenario: Decisao["cenario"];
  aprovado: number;
  motivo: string;
  decidida_em: string;
}

const toDecisao = (r: DecisaoRow): Decisao & { decididaEm: string } => ({
  solicitacaoId: r.solicitacao_id,
  pedidoId: r.pedido_id,
  valorCentavos: r.valor_centavos,
  cenario: r.cenario,
  aprovado: r.aprovado === 1,
  motivo: r.motivo,
  decididaEm: r.decidida_em,
});

export type DecisaoStore = ReturnType<typeof openStore>;

/**
 * One decision per solicitacaoId, held by a UNIQUE constraint; decisions survive restarts.
 * SQL only: the use cases (src/pagamentos.ts) decide and wrap writes in a transaction.
 */
export function openStore(path: string) {
  const db = openDatabase(path, MIGRATIONS);
  const q = {
    byKey: db.prepare<[string], DecisaoRow>("SELECT * FROM decisoes WHERE solicitacao_id = ?"),
    insert: db.prepare(
      `INSERT INTO decisoes (solicitacao_id, pedido_id, valor_centavos, cenario, aprovado, motivo, decidida_em)
       VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (solicitacao_id) DO NOTHING`,
    ),
    countRepeat: db.prepare(
      "UPDATE decisoes SET repeticoes = repeticoes + 1 WHERE solicitacao_id = ?",
    ),
    newestFirst: db.prepare<[number], DecisaoRow>(
      "SELECT * FROM decisoes ORDER BY rowid DESC LIMIT ?",
    ),
  };
  const inTransaction = db.transaction((work: () => unknown) => work());

  return {
    /** Runs work in one IMMEDIATE transaction (a writer lock from the start). */
    transaction<T>(work: () => T): T {
      return inTransaction.immediate(work) as T;
    },
    findDecisao(solicitacaoId: string) {
      const row = q.byKey.get(solicitacaoId);
      return row ? toDecisao(row) : null;
    },
    /** Stores the decision unless one exists for the key; returns the one that is stored. */
    insertDecisao(d: Decisao) {
      q.insert.run(
        d.solicitacaoId,
        d.pedidoId,
        d.valorCentavos,
        d.cenario,
        d.aprovado ? 1 : 0,
        d.motivo,
        new Date().toISOString(),
      );
      return toDecisao(q.byKey.get(d.solicitacaoId) as DecisaoRow);
    },
    /** Counts a delivery of an already decided request, recognised as a repeat. */
    countRepeat(solicitacaoId: string): void {
      q.countRepeat.run(solicitacaoId);
    },
    listDecisoes(limit = 500) {
      return q.newestFirst.all(limit).map(toDecisao);
    },
    close() {
      db.close();
    },
  };
}
