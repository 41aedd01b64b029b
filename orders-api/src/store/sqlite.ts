import { groupCommit, openDatabase, transactionWithoutFsync } from "@shop/service";
import type { Database } from "better-sqlite3";
import type { Pedido } from "../domain/pedido.ts";
import {
  MIGRATIONS as BOTH_DIALECTS,
  type ConfirmedRow,
  type Details,
  type KeyRow,
  KeyTaken,
  keyRecord,
  type OutboxClaim,
  type OutboxRow,
  PEDIDO_COLUMNS,
  type PedidoStore,
  type PedidoWrite,
  type SaveOptions,
  SELECT_PEDIDO,
  type SentRow,
  type SetAsideRow,
  stepOf,
  timeline,
} from "../store.ts";

const MIGRATIONS = BOTH_DIALECTS.map((m) => m.sqlite);
const columns = Object.entries(PEDIDO_COLUMNS);
/** better-sqlite3 fails on a named parameter left without a value: never a silent default. */
const INSERT_PEDIDO = `INSERT INTO pedidos (${columns.map(([, c]) => c).join(", ")})
  VALUES (${columns.map(([f]) => `@${f}`).join(", ")})`;
const PEDIDO_BY_ID = `${SELECT_PEDIDO} WHERE id = ?`;
const NEWEST_PEDIDOS = `${SELECT_PEDIDO} ORDER BY id DESC LIMIT ?`;

/** The prepared statements of the orders database, prepared once when it opens. */
function prepareStatements(db: Database) {
  return {
    insertPedido: db.prepare<[Omit<Pedido, "id">], never>(INSERT_PEDIDO),
    pedido: db.prepare<[number], Pedido>(PEDIDO_BY_ID),
    newestFirst: db.prepare<[number], Pedido>(NEWEST_PEDIDOS),
    updateStatus: db.prepare<[string, string | null, string, string, number], never>(
      `UPDATE pedidos SET status = ?, motivo = ?, processado_por = ?, decidido_em = ?
       WHERE id = ? AND status = 'AGUARDANDO_PAGAMENTO'`,
    ),
    insertStep: db.prepare<[number, string, string, string], never>(
      "INSERT INTO historico (pedido_id, etapa, em, detalhes) VALUES (?, ?, ?, ?)",
    ),
    steps: db.prepare<[number], { etapa: string; em: string; detalhes: string }>(
      "SELECT etapa, em, detalhes FROM historico WHERE pedido_id = ? ORDER BY rowid",
    ),
    confirmed: db.prepare<[number], ConfirmedRow>(
      "SELECT topico, particao, deslocamento, enviado_em FROM outbox WHERE pedido_id = ? AND particao IS NOT NULL",
    ),
    insertOutbox: db.prepare<[number, string, string, string, string, string], never>(
      "INSERT INTO outbox (pedido_id, topico, chave, valor, criado_em, traceparent) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    pendingOutbox: db.prepare<[number], OutboxRow>(
      "SELECT id, pedido_id, topico, chave, valor, criado_em, traceparent FROM outbox WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL ORDER BY id LIMIT ?",
    ),
    setAside: db.prepare<[string, string, number], never>(
      "UPDATE outbox SET posta_de_lado_em = ?, motivo = ? WHERE id = ? AND enviado_em IS NULL",
    ),
    setAsideRows: db.prepare<[], SetAsideRow>(
      "SELECT id, pedido_id AS pedidoId, posta_de_lado_em AS em, motivo FROM outbox WHERE posta_de_lado_em IS NOT NULL AND enviado_em IS NULL ORDER BY id",
    ),
    markSent: db.prepare<[string, number, string, number], never>(
      "UPDATE outbox SET enviado_em = ?, particao = ?, deslocamento = ? WHERE id = ?",
    ),
    outboxState: db.prepare<[], { pendentes: number; maisAntigo: string | null }>(
      "SELECT COUNT(*) AS pendentes, MIN(criado_em) AS maisAntigo FROM outbox WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL",
    ),
    insertKey: db.prepare<[string, string, number, string], never>(
      "INSERT INTO idempotencia (chave, impressao, pedido_id, criada_em) VALUES (?, ?, ?, ?)",
    ),
    key: db.prepare<[string], KeyRow>(
      "SELECT chave, impressao, pedido_id, status, resposta FROM idempotencia WHERE chave = ?",
    ),
    saveAnswer: db.prepare<[number, string, string], never>(
      "UPDATE idempotencia SET status = ?, resposta = ? WHERE chave = ?",
    ),
    forgetKeys: db.prepare<[string], never>("DELETE FROM idempotencia WHERE criada_em < ?"),
  };
}

/** An open orders database: its connection, statements and the two ways to write. */
interface Sqlite {
  db: Database;
  q: ReturnType<typeof prepareStatements>;
  /** One transaction of its own (BEGIN IMMEDIATE … COMMIT). */
  inTransaction: <T>(work: () => T) => T;
  /** The work joins this turn's transaction (group commit: one fsync for the turn). */
  commit: <T>(work: () => T) => Promise<T>;
  /** The relay's marks: a transaction whose loss is harmless, so with no fsync of its own. */
  markTransaction: <T>(work: () => T) => T;
  /** The kept answers of one turn, in one such transaction. */
  answers: <T>(work: () => T) => Promise<T>;
}

/**
 * The orders database in one SQLite file: WAL, prepared statements, migrations by
 * user_version. Its writes run without awaiting anything; the orders and results of one
 * event-loop turn share a transaction (group commit: one fsync for all of them). Each
 * method of the PedidoStore is one of the functions below.
 */
export function openSqliteStore(path: string): PedidoStore {
  const db = openDatabase(path, MIGRATIONS);
  // One transaction wrapper for every unit of work: db.transaction() builds a new function
  // (and its BEGIN/COMMIT statements) on each call, a measurable share of a request's CPU.
  const transaction = db.transaction((work: () => unknown) => work());
  const inTransaction = <T>(work: () => T): T => transaction.immediate(work) as T;
  const markTransaction = transactionWithoutFsync(db);
  const s: Sqlite = {
    db,
    q: prepareStatements(db),
    inTransaction,
    commit: groupCommit(inTransaction),
    markTransaction,
    answers: groupCommit(markTransaction),
  };
  const claim: OutboxClaim = {
    markSent: async (rows) => markSent(s, rows),
    setAside: async (row, reason) => setAside(s, row, reason),
  };
  return {
    savePedido: (pedido, options = {}) => s.commit(() => savePedido(s, pedido, options)),
    updatePedido: (id, decide) => s.commit(() => updatePedido(s, id, decide)),
    findPedido: async (id) => s.q.pedido.get(id) ?? null,
    listPedidos: async (limit = 1000) => s.q.newestFirst.all(limit),
    insertStep: async (pedidoId, etapa, details, at) => insertStep(s, pedidoId, etapa, details, at),
    steps: async (pedidoId) =>
      timeline(s.q.steps.all(pedidoId).map(stepOf), s.q.confirmed.get(pedidoId)),
    // One process, one relay: the rows are its own while it works on them.
    claimOutbox: async (limit, work) => {
      const rows = s.q.pendingOutbox.all(limit);
      if (rows.length > 0) await work(rows, claim);
    },
    onOutboxMarked: () => {},
    onOutboxWaiting: () => {},
    setAsideRows: async () => s.q.setAsideRows.all(),
    outboxState: async () => outboxState(s),
    findKey: async (key) => findKey(s, key),
    // A kept answer whose write is lost costs nothing: a repeat then gets the order as it
    // is (placePedido), so the write waits for the next fsync instead of paying its own,
    // and the answers of one turn share one transaction (the requests a relay round
    // answered are answered in one turn).
    saveAnswer: (key, status, answerJson) =>
      s.answers(() => {
        s.q.saveAnswer.run(status, answerJson, key);
      }),
    forgetKeys: async (before) => s.q.forgetKeys.run(before).changes,
    close: async () => {
      db.close();
    },
  };
}

/** The order, its Idempotency-Key and its outbox row, in the caller's transaction. */
function savePedido(s: Sqlite, pedido: Omit<Pedido, "id">, { key, outboxOf }: SaveOptions): Pedido {
  const info = s.q.insertPedido.run(pedido);
  const saved = { ...pedido, id: Number(info.lastInsertRowid) };
  if (key) {
    try {
      s.q.insertKey.run(key.key, key.fingerprint, saved.id, saved.criadoEm);
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY")
        throw new KeyTaken(`Idempotency-Key ${key.key} was saved first by another request`);
      throw error;
    }
  }
  const entry = outboxOf?.(saved);
  if (entry) {
    const { topic, key: recordKey, value, traceparent } = entry;
    s.q.insertOutbox.run(saved.id, topic, recordKey, value, saved.criadoEm, traceparent);
  }
  return saved;
}

/** `decide` reads the order and says what to write; in the caller's transaction. */
function updatePedido<T>(s: Sqlite, id: number, decide: (pedido: Pedido) => PedidoWrite<T>) {
  const pedido = s.q.pedido.get(id);
  if (!pedido) return null;
  const write = decide(pedido);
  if (write.status) {
    const { status, motivo, processadoPor } = write.status;
    s.q.updateStatus.run(status, motivo, processadoPor, new Date().toISOString(), id);
  }
  for (const step of write.steps) insertStep(s, id, step.etapa, step.details, step.at);
  return write.answer;
}

function insertStep(s: Sqlite, pedidoId: number, etapa: string, details: Details, at?: string) {
  s.q.insertStep.run(pedidoId, etapa, at ?? new Date().toISOString(), JSON.stringify(details));
}

/**
 * The relay's rows acknowledged by Kafka: sent, with the partition and offset Kafka gave
 * each (the timeline's "evento-confirmado"). Committed without an fsync of its own
 * (transactionWithoutFsync): a mark lost to a power cut sends its rows again, as a crash
 * between the publish and the mark does.
 */
function markSent(s: Sqlite, rows: SentRow[]): void {
  s.markTransaction(() => {
    const now = new Date().toISOString();
    for (const r of rows) s.q.markSent.run(now, r.particao, r.offset, r.id);
  });
}

/** A row Kafka refused for good: set aside with why, and on the order's timeline. */
function setAside(s: Sqlite, row: { id: number; pedidoId: number }, reason: string): void {
  s.inTransaction(() => {
    const now = new Date().toISOString();
    s.q.setAside.run(now, reason, row.id);
    insertStep(s, row.pedidoId, "evento-posto-de-lado", { motivo: reason }, now);
  });
}

function outboxState(s: Sqlite) {
  const e = s.q.outboxState.get() as { pendentes: number; maisAntigo: string | null };
  return { pendentes: e.pendentes, maisAntigoEm: e.maisAntigo };
}

function findKey(s: Sqlite, key: string) {
  const row = s.q.key.get(key);
  return row ? keyRecord(row) : null;
}
