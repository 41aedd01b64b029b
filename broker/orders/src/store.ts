import { moneyRangeTrigger, openDatabase } from "@shop/service";
import type { Database } from "better-sqlite3";
import type { Pedido, PedidoItem, Solicitacao } from "./domain/pedido.ts";

const MIGRATIONS = [
  `CREATE TABLE pedidos (
     id TEXT PRIMARY KEY,
     cliente_id TEXT NOT NULL,
     status TEXT NOT NULL CHECK (status IN ('ABERTO', 'EM_PAGAMENTO', 'PAGO')),
     criado_em TEXT NOT NULL
   );
   CREATE TABLE itens (
     pedido_id TEXT NOT NULL REFERENCES pedidos(id),
     seq INTEGER NOT NULL,
     sku TEXT NOT NULL,
     quantidade INTEGER NOT NULL CHECK (quantidade >= 1),
     preco_centavos INTEGER NOT NULL CHECK (preco_centavos > 0),
     PRIMARY KEY (pedido_id, seq)
   );
   CREATE TABLE solicitacoes (
     solicitacao_id TEXT PRIMARY KEY,
     pedido_id TEXT NOT NULL REFERENCES pedidos(id),
     cenario TEXT NOT NULL CHECK (cenario IN ('APROVAR', 'RECUSAR')),
     valor_centavos INTEGER NOT NULL,
     estado TEXT NOT NULL CHECK (estado IN ('PENDENTE', 'CONCLUIDA')),
     aprovado INTEGER,
     motivo TEXT,
     criada_em TEXT NOT NULL,
     concluida_em TEXT
   );`,
  // The timeline of a payment request (GET /pedidos/{id}/historico).
  `ALTER TABLE solicitacoes ADD COLUMN confirmada_em TEXT;
   ALTER TABLE solicitacoes ADD COLUMN decidida_em TEXT;`,
  // Every stored order total and payment amount is one a payment request can carry.
  `${moneyRangeTrigger(
    "itens",
    "itens_total_no_limite",
    "NEW.quantidade * NEW.preco_centavos + (SELECT COALESCE(SUM(quantidade * preco_centavos), 0) FROM itens WHERE pedido_id = NEW.pedido_id)",
  )}
   ${moneyRangeTrigger("solicitacoes", "solicitacoes_valor_no_limite", "NEW.valor_centavos")}`,
  // What became of each result received for a request: applied (moved the order) or
  // recognised as a repeat. Counted, not held by a constraint, so that a double shows.
  `ALTER TABLE solicitacoes ADD COLUMN resultados_aplicados INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE solicitacoes ADD COLUMN resultados_repetidos INTEGER NOT NULL DEFAULT 0;`,
];

interface SolicitacaoRow {
  solicitacao_id: string;
  pedido_id: string;
  cenario: Solicitacao["cenario"];
  valor_centavos: number;
  estado: Solicitacao["estado"];
  aprovado: number | null;
  motivo: string | null;
}

export interface HistoricoRow {
  solicitacao_id: string;
  cenario: string;
  valor_centavos: number;
  aprovado: number | null;
  motivo: string | null;
  criada_em: string;
  confirmada_em: string | null;
  decidida_em: string | null;
  concluida_em: string | null;
}

const toSolicitacao = (r: SolicitacaoRow): Solicitacao => ({
  solicitacaoId: r.solicitacao_id,
  pedidoId: r.pedido_id,
  cenario: r.cenario,
  valorCentavos: r.valor_centavos,
  estado: r.estado,
  aprovado: r.aprovado === null ? null : r.aprovado === 1,
  motivo: r.motivo,
});

export type PedidoStore = ReturnType<typeof openStore>;

/** The prepared statements of the orders service's database, prepared once when it opens. */
function prepareStatements(db: Database) {
  return {
    insertPedido: db.prepare(
      "INSERT INTO pedidos (id, cliente_id, status, criado_em) VALUES (?, ?, 'ABERTO', ?)",
    ),
    insertItem: db.prepare(
      "INSERT INTO itens (pedido_id, seq, sku, quantidade, preco_centavos) VALUES (?, (SELECT COUNT(*) FROM itens WHERE pedido_id = ?), ?, ?, ?)",
    ),
    /** The newest orders first (ids are UUIDs: the insertion order is the rowid's). */
    recent: db.prepare<[number], { id: string }>(
      "SELECT id FROM pedidos ORDER BY rowid DESC LIMIT ?",
    ),
    pedido: db.prepare<[string], { id: string; cliente_id: string; status: Pedido["status"] }>(
      "SELECT id, cliente_id, status FROM pedidos WHERE id = ?",
    ),
    itens: db.prepare<[string], { sku: string; quantidade: number; preco_centavos: number }>(
      "SELECT sku, quantidade, preco_centavos FROM itens WHERE pedido_id = ? ORDER BY seq",
    ),
    status: db.prepare("UPDATE pedidos SET status = ? WHERE id = ?"),
    solicitacao: db.prepare<[string], SolicitacaoRow>(
      "SELECT * FROM solicitacoes WHERE solicitacao_id = ?",
    ),
    insertSolicitacao: db.prepare(
      "INSERT INTO solicitacoes (solicitacao_id, pedido_id, cenario, valor_centavos, estado, criada_em) VALUES (?, ?, ?, ?, 'PENDENTE', ?)",
    ),
    conclude: db.prepare(
      "UPDATE solicitacoes SET estado = 'CONCLUIDA', aprovado = ?, motivo = ?, concluida_em = ?, decidida_em = ? WHERE solicitacao_id = ? AND estado = 'PENDENTE'",
    ),
    countResultado: db.prepare(
      "UPDATE solicitacoes SET resultados_aplicados = resultados_aplicados + ?, resultados_repetidos = resultados_repetidos + ? WHERE solicitacao_id = ?",
    ),
    confirm: db.prepare(
      "UPDATE solicitacoes SET confirmada_em = COALESCE(confirmada_em, ?) WHERE solicitacao_id = ?",
    ),
    historicoRows: db.prepare<[string], HistoricoRow>(
      "SELECT solicitacao_id, cenario, valor_centavos, aprovado, motivo, criada_em, confirmada_em, decidida_em, concluida_em FROM solicitacoes WHERE pedido_id = ? ORDER BY rowid",
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/**
 * The orders service's own database. SQL only: the use cases (src/pedidos.ts) decide what
 * to write and wrap each state change in one transaction.
 */
export function openStore(path: string) {
  const db = openDatabase(path, MIGRATIONS);
  const q = prepareStatements(db);
  // One transaction wrapper for every unit of work: db.transaction() builds a new function
  // (and its BEGIN/COMMIT statements) on each call, a measurable share of a request's CPU.
  const inTransaction = db.transaction((work: () => unknown) => work());
  const now = () => new Date().toISOString();
  return {
    /** Runs work in one IMMEDIATE transaction (a writer lock from the start). */
    transaction: <T>(work: () => T): T => inTransaction.immediate(work) as T,
    insertPedido(id: string, clienteId: string, itens: PedidoItem[]): void {
      q.insertPedido.run(id, clienteId, now());
      for (const i of itens) q.insertItem.run(id, id, i.sku, i.quantidade, i.precoCentavos);
    },
    findPedido: (id: string) => findPedido(q, id),
    /** Up to `limit` orders, newest first, each with its items. */
    listPedidos: (limit: number): Pedido[] =>
      q.recent.all(limit).map((r) => findPedido(q, r.id) as Pedido),
    insertItem: (id: string, i: PedidoItem): void => {
      q.insertItem.run(id, id, i.sku, i.quantidade, i.precoCentavos);
    },
    updateStatus: (id: string, status: Pedido["status"]): void => {
      q.status.run(status, id);
    },
    findSolicitacao(id: string): Solicitacao | null {
      const row = q.solicitacao.get(id);
      return row ? toSolicitacao(row) : null;
    },
    insertSolicitacao: (s: NewSolicitacao): void => {
      q.insertSolicitacao.run(s.solicitacaoId, s.pedidoId, s.cenario, s.valorCentavos, now());
    },
    concludeSolicitacao: (id: string, result: Conclusion): void => {
      const { aprovado, motivo, decididaEm } = result;
      q.conclude.run(aprovado ? 1 : 0, motivo, now(), decididaEm, id);
    },
    /** Counts a result received for the request: applied, or recognised as a repeat. */
    countResultado(id: string, outcome: "applied" | "repeated"): void {
      q.countResultado.run(outcome === "applied" ? 1 : 0, outcome === "repeated" ? 1 : 0, id);
    },
    /** The first confirm of a request's publication (a repeat publishes again). */
    markConfirmed: (solicitacaoId: string): void => {
      q.confirm.run(now(), solicitacaoId);
    },
    /** Each request of an order with the times of its steps, oldest first. */
    historicoRows: (pedidoId: string): HistoricoRow[] => q.historicoRows.all(pedidoId),
    close: () => {
      db.close();
    },
  };
}

type NewSolicitacao = Pick<Solicitacao, "solicitacaoId" | "pedidoId" | "cenario" | "valorCentavos">;
type Conclusion = { aprovado: boolean; motivo: string; decididaEm: string | null };

/** An order with its items, in the order they were added; null for an unknown id. */
function findPedido(q: Statements, id: string): Pedido | null {
  const p = q.pedido.get(id);
  if (!p) return null;
  const itens: PedidoItem[] = q.itens
    .all(id)
    .map((i) => ({ sku: i.sku, quantidade: i.quantidade, precoCentavos: i.preco_centavos }));
  return { id: p.id, clienteId: p.cliente_id, status: p.status, itens };
}
