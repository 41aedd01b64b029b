import { STATUS_PEDIDO } from "@shop/contracts";
import { moneyRangeTrigger, openDatabase } from "@shop/service";
import type { Pedido } from "./domain/pedido.ts";

/**
 * Where each field of an order is stored: its column. The one list of them, checked by the
 * compiler against the domain's `Pedido` (itself the contract's order): a field added there
 * and not here, or the reverse, fails typecheck. The INSERT and the SELECT are built from it
 * (column names only, constants of this file; values go as parameters), and a SELECT names
 * each column as its field, so a row is a Pedido without a mapping by hand.
 */
const PEDIDO_COLUMNS = {
  cliente: "cliente",
  item: "item",
  quantidade: "quantidade",
  valorCentavos: "valor_centavos",
  status: "status",
  motivo: "motivo",
  processadoPor: "processado_por",
  criadoEm: "criado_em",
} as const satisfies { [F in keyof Omit<Pedido, "id">]-?: string };
const columns = Object.entries(PEDIDO_COLUMNS);
/** better-sqlite3 fails on a named parameter left without a value: never a silent default. */
const INSERT_PEDIDO = `INSERT INTO pedidos (${columns.map(([, c]) => c).join(", ")})
  VALUES (${columns.map(([f]) => `@${f}`).join(", ")})`;
const SELECT_PEDIDO = `SELECT id, ${columns.map(([f, c]) => (f === c ? c : `${c} AS ${f}`)).join(", ")} FROM pedidos`;
const PEDIDO_BY_ID = `${SELECT_PEDIDO} WHERE id = ?`;
const NEWEST_PEDIDOS = `${SELECT_PEDIDO} ORDER BY id DESC LIMIT ?`;

/** `IN (...)` of a CHECK, from the contract's own list. */
const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

const MIGRATIONS = [
  `CREATE TABLE pedidos (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     cliente TEXT NOT NULL,
     item TEXT NOT NULL,
     quantidade INTEGER NOT NULL CHECK (quantidade BETWEEN 1 AND 50),
     valor_centavos INTEGER NOT NULL CHECK (valor_centavos > 0),
     status TEXT NOT NULL CHECK (status IN (${sqlList(STATUS_PEDIDO)})),
     motivo TEXT,
     processado_por TEXT,
     criado_em TEXT NOT NULL
   )`,
  // The outbox: each order's PedidoCriado, written in the order's own transaction and
  // published later by the relay (src/messaging/outbox-relay.ts).
  `CREATE TABLE outbox (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     pedido_id INTEGER NOT NULL REFERENCES pedidos(id),
     topico TEXT NOT NULL,
     chave TEXT NOT NULL,
     valor TEXT NOT NULL,
     criado_em TEXT NOT NULL,
     enviado_em TEXT
   );
   CREATE INDEX outbox_pendentes ON outbox (id) WHERE enviado_em IS NULL;`,
  // When the result was applied: created -> decided latency, for benchmarks and timelines.
  "ALTER TABLE pedidos ADD COLUMN decidido_em TEXT",
  // The W3C traceparent of the request that created the order, sent with its event.
  "ALTER TABLE outbox ADD COLUMN traceparent TEXT",
  // The order's timeline (GET /pedidos/{id}/historico): one row per step after creation.
  `CREATE TABLE historico (
     pedido_id INTEGER NOT NULL,
     etapa TEXT NOT NULL,
     em TEXT NOT NULL,
     detalhes TEXT NOT NULL
   );
   CREATE INDEX historico_pedido ON historico (pedido_id);`,
  // A row Kafka refuses for good (too large, say) is set aside with why, and the rows after
  // it go on: the outbox never stops behind one row.
  `ALTER TABLE outbox ADD COLUMN posta_de_lado_em TEXT;
   ALTER TABLE outbox ADD COLUMN motivo TEXT;`,
  // Idempotency-Key of POST /pedidos: the key, what the body was, the order it created (in
  // the order's own transaction) and the answer given, replayed for a repeat.
  `CREATE TABLE idempotencia (
     chave TEXT PRIMARY KEY,
     impressao TEXT NOT NULL,
     pedido_id INTEGER NOT NULL REFERENCES pedidos(id),
     status INTEGER,
     resposta TEXT,
     criada_em TEXT NOT NULL
   );
   CREATE INDEX idempotencia_criada ON idempotencia (criada_em);`,
  // Every stored total is one PedidoCriado can carry.
  moneyRangeTrigger("pedidos", "pedidos_valor_no_limite", "NEW.valor_centavos"),
];

export type Details = Record<string, string | number | boolean | null>;

export interface OutboxRow {
  id: number;
  traceparent: string | null;
  pedido_id: number;
  topico: string;
  chave: string;
  valor: string;
  criado_em: string;
}

/** An order's event as the outbox keeps it, written in the order's own transaction. */
export interface OutboxEntry {
  topic: string;
  key: string;
  value: string;
  /** The W3C traceparent of the request that created the order, sent with its event. */
  traceparent: string;
}

/** An Idempotency-Key and the fingerprint of the body it came with. */
export interface IdempotencyKey {
  key: string;
  fingerprint: string;
}

export interface IdempotencyRecord extends IdempotencyKey {
  pedidoId: number;
  /** The answer given (null until it was: the request is in progress, or its process died). */
  status: number | null;
  answer: unknown;
}

export type PedidoStore = ReturnType<typeof openStore>;

/**
 * The orders database: WAL, prepared statements, migrations by user_version. SQL only:
 * the rules that decide what to write are the use cases' (src/pedidos.ts).
 */
export function openStore(path: string) {
  const db = openDatabase(path, MIGRATIONS);

  const q = {
    insertPedido: db.prepare<[Omit<Pedido, "id">], never>(INSERT_PEDIDO),
    pedido: db.prepare<[number], Pedido>(PEDIDO_BY_ID),
    newestFirst: db.prepare<[number], Pedido>(NEWEST_PEDIDOS),
    updateStatus: db.prepare<[string, string | null, string, number], never>(
      `UPDATE pedidos SET status = ?, motivo = ?, processado_por = ?, decidido_em = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
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
    setAsideRows: db.prepare<[], { id: number; pedidoId: number; em: string; motivo: string }>(
      "SELECT id, pedido_id AS pedidoId, posta_de_lado_em AS em, motivo FROM outbox WHERE posta_de_lado_em IS NOT NULL AND enviado_em IS NULL ORDER BY id",
    ),
    markSent: db.prepare<[string, number], never>("UPDATE outbox SET enviado_em = ? WHERE id = ?"),
    outboxState: db.prepare<[], { pendentes: number; maisAntigo: string | null }>(
      "SELECT COUNT(*) AS pendentes, MIN(criado_em) AS maisAntigo FROM outbox WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL",
    ),
    insertKey: db.prepare<[string, string, number, string], never>(
      "INSERT INTO idempotencia (chave, impressao, pedido_id, criada_em) VALUES (?, ?, ?, ?)",
    ),
    key: db.prepare<
      [string],
      {
        chave: string;
        impressao: string;
        pedido_id: number;
        status: number | null;
        resposta: string | null;
      }
    >("SELECT chave, impressao, pedido_id, status, resposta FROM idempotencia WHERE chave = ?"),
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

  return {
    /** Runs work in one IMMEDIATE transaction (a writer lock from the start). */
    transaction<T>(work: () => T): T {
      return inTransaction.immediate(work) as T;
    },
    /**
     * A new order, with its Idempotency-Key (when given) and its outbox row (when
     * `outboxOf` gives one for the saved order, whose id it needs): three writes, one call,
     * inside the caller's transaction.
     */
    savePedido(
      pedido: Omit<Pedido, "id">,
      {
        key,
        outboxOf,
      }: { key?: IdempotencyKey; outboxOf?: (saved: Pedido) => OutboxEntry | null } = {},
    ): Pedido {
      const info = q.insertPedido.run(pedido);
      const saved = { ...pedido, id: Number(info.lastInsertRowid) };
      if (key) q.insertKey.run(key.key, key.fingerprint, saved.id, saved.criadoEm);
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
    },
    findPedido(id: number): Pedido | null {
      return q.pedido.get(id) ?? null;
    },
    listPedidos(limit = 1000): Pedido[] {
      return q.newestFirst.all(limit);
    },
    /** Moves an order that is still AGUARDANDO_PAGAMENTO; decidido_em is now. */
    updateStatus(
      id: number,
      change: { status: Pedido["status"]; motivo: string | null; processadoPor: string },
    ): void {
      q.updateStatus.run(change.status, change.motivo, change.processadoPor, id);
    },
    /** A step of the order's timeline (GET /pedidos/{id}/historico). */
    insertStep,
    /** The timeline after creation, oldest first. */
    steps(pedidoId: number): { etapa: string; em: string; detalhes: Details }[] {
      return q.steps
        .all(pedidoId)
        .map((e) => ({ etapa: e.etapa, em: e.em, detalhes: JSON.parse(e.detalhes) as Details }));
    },

    pendingOutbox(limit: number): OutboxRow[] {
      return q.pendingOutbox.all(limit);
    },
    /** Marks rows sent and puts "evento-confirmado" (partition, offset) on each timeline. */
    markSent: db.transaction(
      (
        rows: { id: number; pedidoId: number; topico: string; particao: number; offset: string }[],
      ) => {
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
      },
    ),
    /** A row Kafka refused for good: set aside with why, on the order's timeline too. */
    setAside: db.transaction((row: { id: number; pedidoId: number }, reason: string) => {
      const now = new Date().toISOString();
      q.setAside.run(now, reason, row.id);
      insertStep(row.pedidoId, "evento-posto-de-lado", { motivo: reason }, now);
    }),
    /** The rows set aside, oldest first. */
    setAsideRows(): { id: number; pedidoId: number; em: string; motivo: string }[] {
      return q.setAsideRows.all();
    },
    outboxState(): { pendentes: number; maisAntigoEm: string | null } {
      const e = q.outboxState.get() as { pendentes: number; maisAntigo: string | null };
      return { pendentes: e.pendentes, maisAntigoEm: e.maisAntigo };
    },

    findKey(key: string): IdempotencyRecord | null {
      const row = q.key.get(key);
      if (!row) return null;
      return {
        key: row.chave,
        fingerprint: row.impressao,
        pedidoId: row.pedido_id,
        status: row.status,
        answer: row.resposta === null ? null : JSON.parse(row.resposta),
      };
    },
    saveAnswer(key: string, status: number, answer: unknown): void {
      q.saveAnswer.run(status, JSON.stringify(answer), key);
    },
    /** Forgets the keys created before `before` (ISO 8601). */
    forgetKeys(before: string): number {
      return q.forgetKeys.run(before).changes;
    },
    close() {
      db.close();
    },
  };
}
