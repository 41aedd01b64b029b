import { MAX_CENTS, STATUS_PEDIDO } from "@shop/contracts";
import { AppError, moneyRangeTrigger } from "@shop/service";
import type { Pedido } from "./domain/pedido.ts";

/**
 * The orders API's store: one interface, two implementations sharing one test suite
 * (orders-api/test/integration/store.test.ts, run against each):
 *  - SQLite (store/sqlite.ts), the embedded default: one file, one process;
 *  - PostgreSQL (store/postgres.ts), when DATABASE_URL is set: several orders API
 *    instances share it (issue 37).
 * Two implementations rather than a query builder: each keeps its SQL plain and in its
 * own dialect (SQLite's synchronous group commit, PostgreSQL's row locks and advisory locks),
 * and the shared suite holds them to the same behaviour. SQL only: the rules that decide
 * what to write are the use cases' (src/pedidos.ts).
 */
export interface PedidoStore {
  /**
   * A new order, with its Idempotency-Key (when given) and its outbox row (when `outboxOf`
   * gives one for the saved order, whose id it needs), in one transaction. Throws KeyTaken
   * when the key was saved first by another request (another instance, say).
   */
  savePedido(pedido: Omit<Pedido, "id">, options?: SaveOptions): Promise<Pedido>;
  /**
   * In one transaction, the order held until commit: `decide` says what to write (a
   * status change, timeline steps) and what to answer; null for an unknown order.
   */
  updatePedido<T>(id: number, decide: (pedido: Pedido) => PedidoWrite<T>): Promise<T | null>;
  findPedido(id: number): Promise<Pedido | null>;
  /** Newest first. */
  listPedidos(limit?: number): Promise<Pedido[]>;
  /** A step of the order's timeline (GET /pedidos/{id}/historico). */
  insertStep(pedidoId: number, etapa: string, details: Details, at?: string): Promise<void>;
  /** The timeline after creation, oldest first. */
  steps(pedidoId: number): Promise<Step[]>;

  /**
   * Claims up to `limit` pending outbox rows, oldest first, for `work`, which publishes
   * them and marks them (sent, or set aside) through `claim`. No other relay gets them
   * while `work` runs; rows `work` leaves unmarked are pending again after it.
   * On PostgreSQL one relay of all the instances publishes, the one that owns the outbox
   * (an advisory lock held by its connection), with no transaction open while `work`
   * publishes; the others claim nothing until its instance dies.
   */
  claimOutbox(
    limit: number,
    work: (rows: OutboxRow[], claim: OutboxClaim) => Promise<void>,
  ): Promise<void>;
  /**
   * Tells `listener` about rows any relay marked (sent, or set aside with why), once
   * committed: an order's request waits for its event whichever instance's relay publishes
   * it (PostgreSQL's LISTEN/NOTIFY; with SQLite the only relay is this process's own).
   */
  onOutboxMarked(listener: (marked: OutboxMarked) => void): void;
  /**
   * Tells `listener` when another instance wrote outbox rows, for this instance's relay to
   * publish them now if it owns the outbox (PostgreSQL; SQLite's only writer is its relay's).
   */
  onOutboxWaiting(listener: () => void): void;
  /** The rows set aside, oldest first. */
  setAsideRows(): Promise<SetAsideRow[]>;
  outboxState(): Promise<{ pendentes: number; maisAntigoEm: string | null }>;

  findKey(key: string): Promise<IdempotencyRecord | null>;
  /** The answer a keyed request got: its status and its body as the JSON text sent. */
  saveAnswer(key: string, status: number, answerJson: string): Promise<void>;
  /** Forgets the keys created before `before` (ISO 8601). */
  forgetKeys(before: string): Promise<number>;
  close(): Promise<void>;
}

/** The Idempotency-Key was saved first by another request: its order is that one's. */
export class KeyTaken extends Error {}

/** The database does not answer (PostgreSQL stopped, say): the request is refused, 503. */
export class StoreUnavailable extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("banco-indisponivel", message, 503, undefined, {
      ...options,
      mensagem: "O banco de dados não responde: nada foi salvo; tente de novo em instantes.",
    });
  }
}

export interface SaveOptions {
  key?: IdempotencyKey;
  outboxOf?: (saved: Pedido) => OutboxEntry | null;
}

/** What `updatePedido`'s decision writes: a status change (when any) and timeline steps. */
export interface PedidoWrite<T> {
  status: { status: Pedido["status"]; motivo: string | null; processadoPor: string } | null;
  steps: { etapa: string; details: Details; at?: string | undefined }[];
  answer: T;
}

/** What a relay does with the rows it claimed. */
export interface OutboxClaim {
  /** Marks rows sent with where Kafka wrote them: "evento-confirmado" on each timeline. */
  markSent(rows: SentRow[]): Promise<void>;
  /** A row Kafka refused for good: set aside with why, on the order's timeline too. */
  setAside(row: { id: number; pedidoId: number }, reason: string): Promise<void>;
}

/** The orders whose outbox rows a relay marked: sent, or set aside with the reason. */
export interface OutboxMarked {
  sent: number[];
  setAside: [pedidoId: number, reason: string][];
}

export type Details = Record<string, string | number | boolean | null>;

export interface Step {
  etapa: string;
  em: string;
  detalhes: Details;
}

export interface OutboxRow {
  id: number;
  traceparent: string | null;
  pedido_id: number;
  topico: string;
  chave: string;
  valor: string;
  criado_em: string;
}

export interface SentRow {
  id: number;
  pedidoId: number;
  topico: string;
  particao: number;
  offset: string;
}

export interface SetAsideRow {
  id: number;
  pedidoId: number;
  em: string;
  motivo: string;
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

/** An idempotencia row, as both stores select it. */
export interface KeyRow {
  chave: string;
  impressao: string;
  pedido_id: number;
  status: number | null;
  resposta: string | null;
}

export const keyRecord = (row: KeyRow): IdempotencyRecord => ({
  key: row.chave,
  fingerprint: row.impressao,
  pedidoId: row.pedido_id,
  status: row.status,
  answer: row.resposta === null ? null : JSON.parse(row.resposta),
});

/** A historico row, as both stores select it. */
export const stepOf = (row: { etapa: string; em: string; detalhes: string }): Step => ({
  etapa: row.etapa,
  em: row.em,
  detalhes: JSON.parse(row.detalhes) as Details,
});

/** An outbox row the relay marked sent, with where Kafka wrote it, as both stores select it. */
export interface ConfirmedRow {
  topico: string;
  particao: number;
  deslocamento: string;
  enviado_em: string;
}

/**
 * The timeline after creation: its event's "evento-confirmado", read from its outbox row,
 * then the order's historico rows in the order written. The confirmation comes first even
 * when its time is later than a decision's: every other step follows from the record Kafka
 * wrote, and the relay marks the row after Kafka's acknowledgement, which a result can
 * outrun (a test that publishes one straight after the 201 does). Its time is the mark's.
 */
export function timeline(rows: Step[], confirmed: ConfirmedRow | undefined): Step[] {
  if (!confirmed) return rows;
  const { topico, particao, deslocamento, enviado_em } = confirmed;
  const step = {
    etapa: "evento-confirmado",
    em: enviado_em,
    detalhes: { topico, particao, offset: deslocamento },
  };
  return [step, ...rows];
}

/**
 * Where each field of an order is stored: its column. The one list of them, checked by the
 * compiler against the domain's `Pedido` (itself the contract's order): a field added there
 * and not here, or the reverse, fails typecheck. Both stores build their INSERT and SELECT
 * from it (column names only, constants; values go as parameters), and a SELECT names each
 * column as its field, so a row is a Pedido without a mapping by hand.
 */
export const PEDIDO_COLUMNS = {
  cliente: "cliente",
  item: "item",
  quantidade: "quantidade",
  valorCentavos: "valor_centavos",
  status: "status",
  motivo: "motivo",
  processadoPor: "processado_por",
  criadoEm: "criado_em",
} as const satisfies { [F in keyof Omit<Pedido, "id">]-?: string };
export const PEDIDO_FIELDS = Object.keys(PEDIDO_COLUMNS) as (keyof typeof PEDIDO_COLUMNS)[];

/** `SELECT id, <column> AS "<field>", ...`: PostgreSQL keeps a quoted alias's case. */
export const SELECT_PEDIDO = `SELECT id, ${Object.entries(PEDIDO_COLUMNS)
  .map(([f, c]) => (f === c ? c : `${c} AS "${f}"`))
  .join(", ")} FROM pedidos`;

/** `IN (...)` of a CHECK, from the contract's own list. */
const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

/**
 * One schema, one history: migration n is the same step in both dialects, and each store
 * records how many it applied (SQLite's user_version, PostgreSQL's versao_esquema). A
 * migration is appended, never edited.
 */
export interface Migration {
  sqlite: string;
  postgres: string;
}

type Dialect = keyof Migration;
/** A migration written once; what differs between the dialects is named below. */
const inBoth = (sql: (d: Dialect) => string): Migration => ({
  sqlite: sql("sqlite"),
  postgres: sql("postgres"),
});
const same = (sql: string): Migration => inBoth(() => sql);
/** A table's own id, given by the database in insertion order, never reused. */
const ID: Record<Dialect, string> = {
  sqlite: "INTEGER PRIMARY KEY AUTOINCREMENT",
  postgres: "INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
};
/** The timeline's order: SQLite's rowid, or in PostgreSQL (which has none) an id. */
const STEP_ID: Record<Dialect, string> = {
  sqlite: "",
  postgres: "\n     id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,",
};
/** Cents up to MAX_CENTS: SQLite's INTEGER is 64-bit; PostgreSQL's is not. */
const CENTS: Record<Dialect, string> = { sqlite: "INTEGER", postgres: "BIGINT" };

export const MIGRATIONS: readonly Migration[] = [
  inBoth(
    (d) => `CREATE TABLE pedidos (
     id ${ID[d]},
     cliente TEXT NOT NULL,
     item TEXT NOT NULL,
     quantidade INTEGER NOT NULL CHECK (quantidade BETWEEN 1 AND 50),
     valor_centavos ${CENTS[d]} NOT NULL CHECK (valor_centavos > 0),
     status TEXT NOT NULL CHECK (status IN (${sqlList(STATUS_PEDIDO)})),
     motivo TEXT,
     processado_por TEXT,
     criado_em TEXT NOT NULL
   )`,
  ),
  // The outbox: each order's PedidoCriado, written in the order's own transaction and
  // published later by the relay (src/messaging/outbox-relay.ts).
  inBoth(
    (d) => `CREATE TABLE outbox (
     id ${ID[d]},
     pedido_id INTEGER NOT NULL REFERENCES pedidos(id),
     topico TEXT NOT NULL,
     chave TEXT NOT NULL,
     valor TEXT NOT NULL,
     criado_em TEXT NOT NULL,
     enviado_em TEXT
   );
   CREATE INDEX outbox_pendentes ON outbox (id) WHERE enviado_em IS NULL;`,
  ),
  // When the result was applied: created -> decided latency, for benchmarks and timelines.
  same("ALTER TABLE pedidos ADD COLUMN decidido_em TEXT"),
  // The W3C traceparent of the request that created the order, sent with its event.
  same("ALTER TABLE outbox ADD COLUMN traceparent TEXT"),
  // The order's timeline (GET /pedidos/{id}/historico): one row per step after creation,
  // in the order written.
  inBoth(
    (d) => `CREATE TABLE historico (${STEP_ID[d]}
     pedido_id INTEGER NOT NULL,
     etapa TEXT NOT NULL,
     em TEXT NOT NULL,
     detalhes TEXT NOT NULL
   );
   CREATE INDEX historico_pedido ON historico (pedido_id);`,
  ),
  // A row Kafka refuses for good (too large, say) is set aside with why, and the rows after
  // it go on: the outbox never stops behind one row.
  same(`ALTER TABLE outbox ADD COLUMN posta_de_lado_em TEXT;
   ALTER TABLE outbox ADD COLUMN motivo TEXT;`),
  // Idempotency-Key of POST /pedidos: the key, what the body was, the order it created (in
  // the order's own transaction) and the answer given, replayed for a repeat.
  same(`CREATE TABLE idempotencia (
     chave TEXT PRIMARY KEY,
     impressao TEXT NOT NULL,
     pedido_id INTEGER NOT NULL REFERENCES pedidos(id),
     status INTEGER,
     resposta TEXT,
     criada_em TEXT NOT NULL
   );
   CREATE INDEX idempotencia_criada ON idempotencia (criada_em);`),
  // Every stored total is one PedidoCriado can carry.
  {
    sqlite: moneyRangeTrigger("pedidos", "pedidos_valor_no_limite", "NEW.valor_centavos"),
    postgres: `ALTER TABLE pedidos ADD CONSTRAINT pedidos_valor_no_limite
     CHECK (valor_centavos BETWEEN 1 AND ${MAX_CENTS})`,
  },
  // Where Kafka wrote the event, kept on its outbox row by the mark that says it was sent:
  // the timeline's "evento-confirmado" is read from there (`timeline`), as "criado" is
  // read from the order's row, instead of a historico row written for every event (issue
  // 57). The index holds only the rows marked so, and is written by the mark.
  same(`ALTER TABLE outbox ADD COLUMN particao INTEGER;
   ALTER TABLE outbox ADD COLUMN deslocamento TEXT;
   CREATE INDEX outbox_confirmado ON outbox (pedido_id) WHERE particao IS NOT NULL;`),
];
