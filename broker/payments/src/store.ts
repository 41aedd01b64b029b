import { limiteDeDinheiro, openDatabase } from "@shop/service";
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
  limiteDeDinheiro("decisoes", "decisoes_valor_no_limite", "NEW.valor_centavos"),
];

interface Linha {
  solicitacao_id: string;
  pedido_id: string;
  valor_centavos: number;
  cenario: Decisao["cenario"];
  aprovado: number;
  motivo: string;
  decidida_em: string;
}

const toDecisao = (l: Linha): Decisao & { decididaEm: string } => ({
  solicitacaoId: l.solicitacao_id,
  pedidoId: l.pedido_id,
  valorCentavos: l.valor_centavos,
  cenario: l.cenario,
  aprovado: l.aprovado === 1,
  motivo: l.motivo,
  decididaEm: l.decidida_em,
});

export type PaymentsStore = ReturnType<typeof openStore>;

/** One decision per solicitacaoId, held by a UNIQUE constraint; decisions survive restarts. */
export function openStore(path: string) {
  const db = openDatabase(path, MIGRATIONS);
  const byKey = db.prepare<[string], Linha>("SELECT * FROM decisoes WHERE solicitacao_id = ?");
  const insert = db.prepare(
    `INSERT INTO decisoes (solicitacao_id, pedido_id, valor_centavos, cenario, aprovado, motivo, decidida_em)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (solicitacao_id) DO NOTHING`,
  );
  const newestFirst = db.prepare<[number], Linha>(
    "SELECT * FROM decisoes ORDER BY rowid DESC LIMIT ?",
  );
  /** Stores the decision unless one exists for the key; returns the one that is stored. */
  function guardar(d: Decisao) {
    insert.run(
      d.solicitacaoId,
      d.pedidoId,
      d.valorCentavos,
      d.cenario,
      d.aprovado ? 1 : 0,
      d.motivo,
      new Date().toISOString(),
    );
    return toDecisao(byKey.get(d.solicitacaoId) as Linha);
  }
  const guardarVarios = db.transaction((ds: Decisao[]) => ds.map(guardar));

  return {
    buscar(solicitacaoId: string) {
      const l = byKey.get(solicitacaoId);
      return l ? toDecisao(l) : null;
    },
    /**
     * Stores several decisions in one transaction, in order (the consumers' group
     * commit: agrupar in libs/service); a repeated key gets the first one's decision.
     */
    guardarVarios(ds: Decisao[]) {
      return guardarVarios.immediate(ds);
    },
    listar(limite = 500) {
      return newestFirst.all(limite).map(toDecisao);
    },
    close() {
      db.close();
    },
  };
}
