import { groupCommit, openDatabase } from "@shop/service";
import type { Pedido } from "../domain/pedido.ts";
import {
  MIGRATIONS as BOTH_DIALECTS,
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
  type SetAsideRow,
  stepOf,
} from "../store.ts";

const MIGRATIONS = BOTH_DIALECTS.map((m) => m.sqlite);
const columns = Object.entries(PEDIDO_COLUMNS);
/** better-sqlite3 fails on a named parameter left without a value: never a silent default. */
const INSERT_PEDIDO = `INSERT INTO pedidos (${columns.map(([, c]) => c).join(", ")})
  VALUES (${columns.map(([f]) => `@${f}`).join(", ")})`;
const PEDIDO_BY_ID = `${SELECT_PEDIDO} WHERE id = ?`;
const NEWEST_PEDIDOS = `${SELECT_PEDIDO} ORDER BY id DESC LIMIT ?`;

/**
 * The orders database in one SQLite file: WAL, prepared statements, migrations by
 * user_version. Its writes run without awaiting anything; the orders and results of one event-loop turn
 * share a transaction (group commit: one fsync for all of them).
 */
export function openSqliteStore(path: string): PedidoStore {
  const db = openDatabase(path, MIGRATIONS);

  const q = {
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
    markSent: db.prepare<[string, number], never>("UPDATE outbox SET enviado_em = ? WHERE id = ?"),
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

  const insertStep = (pedidoId: number, etapa: string, details: Details, at?: string) =>
    q.insertStep.run(pedidoId, etapa, at ?? new Date().toISOString(), JSON.stringify(details));

  // One transaction wrapper for every unit of work: db.transaction() builds a new function
  // (and its BEGIN/COMMIT statements) on each call, a measurable share of a request's CPU.
  const inTransaction = db.transaction((work: () => unknown) => work());
  // Group commit: the orders and results of one turn share a transaction (one fsync).
  const commit = groupCommit(<T>(work: () => T): T => inTransaction.immediate(work) as T);

  function save(pedido: Omit<Pedido, "id">, { key, outboxOf }: SaveOptions): Pedido {
    const info = q.insertPedido.run(pedido);
    const saved = { ...pedido, id: Number(info.lastInsertRowid) };
    if (key) {
      try {
        q.insertKey.run(key.key, key.fingerprint, saved.id, saved.criadoEm);
      } catch (error) {
        if ((error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY")
          throw new KeyTaken(`Idempotency-Key ${key.key} was saved first by another request`);
        throw error;
      }
    }
    const entry = outboxOf?.(saved);
    if (entry)
      q.insertOutbox.run(
        saved.id,
        entry.topic,
        entry.key,
        entry.value,
        saved.criadoEm,
        entry.traceparent,
      );
    return saved;
  }

  function update<T>(id: number, decide: (pedido: Pedido) => PedidoWrite<T>): T | null {
    const pedido = q.pedido.get(id);
    if (!pedido) return null;
    const write = decide(pedido);
    if (write.status) {
      const { status, motivo, processadoPor } = write.status;
      q.updateStatus.run(status, motivo, processadoPor, new Date().toISOString(), id);
    }
    for (const s of write.steps) insertStep(id, s.etapa, s.details, s.at);
    return write.answer;
  }

  const claim: OutboxClaim = {
    async markSent(rows) {
      inTransaction.immediate(() => {
        const now = new Date().toISOString();
        for (const r of rows) {
          q.markSent.run(now, r.id);
          insertStep(
            r.pedidoId,
            "evento-confirmado",
            { topico: r.topico, particao: r.particao, offset: r.offset },
            now,
          );
        }
      });
    },
    async setAside(row, reason) {
      inTransaction.immediate(() => {
        const now = new Date().toISOString();
        q.setAside.run(now, reason, row.id);
        insertStep(row.pedidoId, "evento-posto-de-lado", { motivo: reason }, now);
      });
    },
  };

  return {
    savePedido: (pedido, options = {}) => commit(() => save(pedido, options)),
    updatePedido: (id, decide) => commit(() => update(id, decide)),
    findPedido: async (id) => q.pedido.get(id) ?? null,
    listPedidos: async (limit = 1000) => q.newestFirst.all(limit),
    insertStep: async (pedidoId, etapa, details, at) => {
      insertStep(pedidoId, etapa, details, at);
    },
    steps: async (pedidoId) => q.steps.all(pedidoId).map(stepOf),

    // One process, one relay: the rows are its own while it works on them.
    claimOutbox: async (limit, work) => {
      const rows = q.pendingOutbox.all(limit);
      if (rows.length > 0) await work(rows, claim);
    },
    onOutboxMarked: () => {},
    setAsideRows: async () => q.setAsideRows.all(),
    outboxState: async () => {
      const e = q.outboxState.get() as { pendentes: number; maisAntigo: string | null };
      return { pendentes: e.pendentes, maisAntigoEm: e.maisAntigo };
    },

    findKey: async (key) => {
      const row = q.key.get(key);
      return row ? keyRecord(row) : null;
    },
    saveAnswer: async (key, status, answer) => {
      q.saveAnswer.run(status, JSON.stringify(answer), key);
    },
    forgetKeys: async (before) => q.forgetKeys.run(before).changes,
    close: async () => {
      db.close();
    },
  };
}
