import { batchPerTurn, inCallersContext, withTimeLimit } from "@shop/service";
import type pg from "pg";
import type { Pedido } from "../domain/pedido.ts";
import {
  type ConfirmedRow,
  type Details,
  type KeyRow,
  KeyTaken,
  keyRecord,
  MIGRATIONS,
  type OutboxClaim,
  type OutboxMarked,
  type OutboxRow,
  PEDIDO_COLUMNS,
  PEDIDO_FIELDS,
  type PedidoStore,
  type PedidoWrite,
  type SaveOptions,
  SELECT_PEDIDO,
  type SentRow,
  type SetAsideRow,
  StoreUnavailable,
  stepOf,
  timeline,
} from "../store.ts";

/** `$1` new ids of orders, in one round trip. */
const NEXT_PEDIDO_IDS =
  "SELECT nextval(pg_get_serial_sequence('pedidos', 'id')) AS id FROM generate_series(1, $1)";
/** Each order field's column and its type, as json_to_recordset reads it. */
const PEDIDO_COLUMN_TYPES = {
  cliente: "text",
  item: "text",
  quantidade: "integer",
  valorCentavos: "bigint",
  status: "text",
  motivo: "text",
  processadoPor: "text",
  criadoEm: "text",
} as const satisfies Record<(typeof PEDIDO_FIELDS)[number], string>;
const pedidoColumns = PEDIDO_FIELDS.map((f) => PEDIDO_COLUMNS[f]).join(", ");
/**
 * A batch of orders (issue 49: group commit), each with its Idempotency-Key and its outbox
 * row when it has them, in one statement: one round trip and one commit (one WAL flush) for
 * all of them, atomic without a BEGIN and a COMMIT (a key already there fails it whole).
 * `$1` is a JSON array of the records saveTogether builds. The ids come first
 * (NEXT_PEDIDO_IDS), for the outbox rows' events carry them.
 */
const SAVE_PEDIDOS = `WITH novos AS (
    SELECT * FROM json_to_recordset($1::json) AS x(id integer, ${PEDIDO_FIELDS.map(
      (f) => `${PEDIDO_COLUMNS[f]} ${PEDIDO_COLUMN_TYPES[f]}`,
    ).join(
      ", ",
    )}, chave text, impressao text, topico text, registro_chave text, valor text, traceparent text)
  ), pedido AS (
    INSERT INTO pedidos (id, ${pedidoColumns}) OVERRIDING SYSTEM VALUE
    SELECT id, ${pedidoColumns} FROM novos
  ), chave AS (
    INSERT INTO idempotencia (chave, impressao, pedido_id, criada_em)
    SELECT chave, impressao, id, criado_em FROM novos WHERE chave IS NOT NULL
  )
  INSERT INTO outbox (pedido_id, topico, chave, valor, criado_em, traceparent)
  SELECT id, topico, registro_chave, valor, criado_em, traceparent FROM novos
  WHERE topico IS NOT NULL ORDER BY id`;
const PEDIDO_BY_ID = `${SELECT_PEDIDO} WHERE id = $1`;
const PEDIDO_FOR_UPDATE = `${SELECT_PEDIDO} WHERE id = $1 FOR UPDATE`;
const NEWEST_PEDIDOS = `${SELECT_PEDIDO} ORDER BY id DESC LIMIT $1`;
const UPDATE_STATUS = `UPDATE pedidos SET status = $1, motivo = $2, processado_por = $3, decidido_em = $4
  WHERE id = $5 AND status = 'AGUARDANDO_PAGAMENTO'`;
/** Steps of one or more orders' timelines, one row per element of the arrays, in order. */
const INSERT_STEPS = `INSERT INTO historico (pedido_id, etapa, em, detalhes)
  SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[])`;
const STEPS = "SELECT etapa, em, detalhes FROM historico WHERE pedido_id = $1 ORDER BY id";
const CONFIRMED =
  "SELECT topico, particao, deslocamento, enviado_em FROM outbox WHERE pedido_id = $1 AND particao IS NOT NULL";
/**
 * The pending rows, oldest first, read by the relay that owns the outbox (OUTBOX_OWNER):
 * no other relay publishes while it lives, so they are read without a lock and published
 * with no transaction open (issue 57).
 */
const PENDING = `SELECT id, pedido_id, topico, chave, valor, criado_em, traceparent FROM outbox
  WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL ORDER BY id LIMIT $1`;
/**
 * The outbox's owner: one relay of all the instances publishes, the one whose LISTEN
 * connection holds this advisory lock (PostgreSQL's two-key form, a key space of its own).
 * The lock is free exactly when that connection is gone: its instance died, or lost the
 * server. The others try it at most every OWN_EVERY_MS.
 */
const OUTBOX_OWNER = [57_057, 1] as const;
const TRY_OWN = "SELECT pg_try_advisory_lock($1, $2) AS owner";
const OWN_EVERY_MS = 500;
/** The channel on which an instance that does not own the outbox says it wrote rows to it. */
const WAITING_CHANNEL = "outbox_pendente";
/**
 * The relay's marks in one statement (one round trip where there were two): the rows sent,
 * each with where Kafka wrote it (the timeline's "evento-confirmado"), the NOTIFY every
 * instance hears at commit, and the commit made asynchronous (set_config's SET LOCAL): it
 * returns without waiting for its WAL flush. A mark lost to a crash of the server sends its
 * rows again, as a crash between the publish and the mark does; the consumers are
 * idempotent (at least once). Writes in WITH run to completion whether or not the SELECT
 * reads them.
 */
const MARK_SENT = `WITH sent AS (UPDATE outbox SET enviado_em = $1, particao = s.particao, deslocamento = s.deslocamento
    FROM unnest($2::int[], $3::int[], $4::text[]) AS s (id, particao, deslocamento) WHERE outbox.id = s.id)
  SELECT pg_notify($5, $6), set_config('synchronous_commit', 'off', true)`;
const SET_ASIDE =
  "UPDATE outbox SET posta_de_lado_em = $1, motivo = $2 WHERE id = $3 AND enviado_em IS NULL";
const SET_ASIDE_ROWS = `SELECT id, pedido_id AS "pedidoId", posta_de_lado_em AS em, motivo FROM outbox
  WHERE posta_de_lado_em IS NOT NULL AND enviado_em IS NULL ORDER BY id`;
const OUTBOX_STATE = `SELECT COUNT(*) AS pendentes, MIN(criado_em) AS "maisAntigoEm" FROM outbox
  WHERE enviado_em IS NULL AND posta_de_lado_em IS NULL`;
const KEY =
  "SELECT chave, impressao, pedido_id, status, resposta FROM idempotencia WHERE chave = $1";
const SAVE_ANSWER = "UPDATE idempotencia SET status = $1, resposta = $2 WHERE chave = $3";
const FORGET_KEYS = "DELETE FROM idempotencia WHERE criada_em < $1";
/** The channel on which a relay's marks are announced to every instance, at commit. */
const MARKED_CHANNEL = "outbox_marcado";
/** Two instances starting at once: one migrates, the other waits for it (any constant). */
const MIGRATION_LOCK = 370_037;

/** A connection that cannot be made or was lost, or a query that did not answer in time. */
const WITHIN_MS = { connect: 2000, query: 3000 };

/** The driver's module, loaded by the store that uses it (openPostgresStore). */
type Driver = typeof pg;

/** int8 (COUNT, BIGINT amounts) as a number: every one here is below 2^53. */
export const int8AsNumber = (driver: Driver) => ({
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === driver.types.builtins.INT8
      ? Number
      : driver.types.getTypeParser(oid, format)) as Driver["types"]["getTypeParser"],
});

/** A server's answer about the SQL (a constraint, a syntax error) is not the store being down. */
function unavailable(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code))
    return code.startsWith("08") || code.startsWith("57") || code === "53300";
  return true;
}

function asStoreError(error: unknown): unknown {
  return unavailable(error) && !(error instanceof KeyTaken)
    ? new StoreUnavailable(`PostgreSQL does not answer: ${(error as Error).message}`, {
        cause: error,
      })
    : error;
}

/** An open orders database on PostgreSQL: its pool, and the listener of the relays' marks. */
interface Postgres {
  pool: pg.Pool;
  marks: ReturnType<typeof listenForMarks>;
}

/**
 * The orders database on PostgreSQL (DATABASE_URL): a pool of connections, one transaction
 * per unit of work, the same schema and migration history as SQLite's (store.ts). Several
 * orders API instances share it: a key is unique in the database, an order's result is
 * applied under its row lock, and one relay at a time publishes the outbox, the one that
 * owns it (claimOutbox). Each method of the PedidoStore is one of the functions below.
 */
export async function openPostgresStore(url: string): Promise<PedidoStore> {
  // Loaded here, not at the top: the build bundles this file into the orders API, where a
  // static import would load the driver at every start, on SQLite too (2 MB of RSS).
  const { default: driver } = await import("pg");
  const pool = new driver.Pool({
    connectionString: url,
    max: 8,
    connectionTimeoutMillis: WITHIN_MS.connect,
    query_timeout: WITHIN_MS.query,
    types: int8AsNumber(driver),
  });
  // A connection lost while idle (PostgreSQL restarted): the pool drops it; the next
  // query opens another or fails as StoreUnavailable.
  pool.on("error", () => {});
  await inTransaction(pool, migrate);
  const p: Postgres = { pool, marks: await listening(driver, url) };
  const save = batchedSaves(p);
  const inTurn = oneAtATimePerPedido();
  return {
    savePedido: (pedido, options = {}) => save(pedido, options),
    updatePedido: (id, decide) =>
      inTurn(id, () => inTransaction(pool, (c) => updatePedido(c, id, decide))),
    findPedido: async (id) => (await query<Pedido>(pool, PEDIDO_BY_ID, [id]))[0] ?? null,
    listPedidos: (limit = 1000) => query<Pedido>(pool, NEWEST_PEDIDOS, [limit]),
    insertStep: (pedidoId, etapa, details, at) =>
      asStoreErrors(() => insertSteps(pool, [{ pedidoId, etapa, details, at }])),
    steps: async (pedidoId) => {
      const [rows, confirmed] = await Promise.all([
        query<StepRow>(pool, STEPS, [pedidoId]),
        query<ConfirmedRow>(pool, CONFIRMED, [pedidoId]),
      ]);
      return timeline(rows.map(stepOf), confirmed[0]);
    },
    claimOutbox: (limit, work) => claimOutbox(p, limit, work),
    onOutboxMarked: (listener) => p.marks.add(listener),
    onOutboxWaiting: (listener) => p.marks.onWaiting(listener),
    setAsideRows: () => query<SetAsideRow>(pool, SET_ASIDE_ROWS),
    outboxState: async () => {
      const [e] = await query<{ pendentes: number; maisAntigoEm: string | null }>(
        pool,
        OUTBOX_STATE,
      );
      return e ?? { pendentes: 0, maisAntigoEm: null };
    },
    findKey: async (key) => {
      const [row] = await query<KeyRow>(pool, KEY, [key]);
      return row ? keyRecord(row) : null;
    },
    saveAnswer: async (key, status, answerJson) => {
      await query(pool, SAVE_ANSWER, [status, answerJson, key]);
    },
    forgetKeys: (before) =>
      asStoreErrors(async () => (await pool.query(FORGET_KEYS, [before])).rowCount ?? 0),
    close: async () => {
      await p.marks.close();
      await pool.end();
    },
  };
}

type StepRow = { etapa: string; em: string; detalhes: string };

/** The schema's migrations not yet applied, under a lock: two instances starting at once take turns. */
async function migrate(c: pg.PoolClient): Promise<void> {
  await c.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
  await c.query("CREATE TABLE IF NOT EXISTS versao_esquema (versao INTEGER NOT NULL)");
  const [row] = (await c.query<{ versao: number }>("SELECT versao FROM versao_esquema")).rows;
  if (!row) await c.query("INSERT INTO versao_esquema (versao) VALUES (0)");
  for (const m of MIGRATIONS.slice(row?.versao ?? 0)) await c.query(m.postgres);
  await c.query("UPDATE versao_esquema SET versao = $1", [MIGRATIONS.length]);
}

/**
 * One order's updates one after the other, in the order they were asked (Rule E7: the
 * first result of the partition is the one applied). The results consumer hands a turn's
 * records over without waiting (pipelined), and each update is a transaction on a
 * connection of its own: two for one order raced for its row lock, and a repeated result
 * could win over the first, whose instance then showed as the one that decided it (the
 * timeline test saw it). Updates of different orders still run side by side.
 */
function oneAtATimePerPedido() {
  const last = new Map<number, Promise<unknown>>();
  return <T>(id: number, work: () => Promise<T>): Promise<T> => {
    const run = (last.get(id) ?? Promise.resolve()).then(work);
    const settled = run.then(
      () => {},
      () => {},
    );
    last.set(id, settled);
    void settled.then(() => {
      if (last.get(id) === settled) last.delete(id);
    });
    return run;
  };
}

/** `work` in one transaction on a connection of the pool; a lost server is StoreUnavailable. */
async function inTransaction<T>(pool: pg.Pool, work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw asStoreError(error);
  }
  // The pool stops listening for a client's errors while it is lent out: a server that
  // goes away under a transaction would emit an error nobody hears, and end the process.
  // The queries reject with it all the same.
  const ignore = () => {};
  client.on("error", ignore);
  const release = (error?: Error) => {
    client.removeListener("error", ignore);
    client.release(error);
  };
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    release();
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    release(unavailable(error) ? (error as Error) : undefined);
    throw asStoreError(error);
  }
}

/** One statement on its own (the pool's autocommit). */
async function query<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  sql: string,
  values: unknown[] = [],
): Promise<R[]> {
  return asStoreErrors(async () => (await pool.query<R>(sql, values)).rows);
}

async function asStoreErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asStoreError(error);
  }
}

/** A new order handed to the store, with the trace context of the request that made it. */
interface SaveRequest {
  pedido: Omit<Pedido, "id">;
  options: SaveOptions;
  within: <T>(work: () => T) => T;
}

/**
 * Group commit on PostgreSQL (issue 49): the orders handed over while a batch is in
 * flight go together as the next batch (batchPerTurn's whileInFlight), in one statement and
 * one commit, where each order cost a commit (a WAL flush) of its own. Each request still
 * gets its own outcome: a key taken fails the statement whole, and the batch's orders are
 * then saved one by one, so that only the request whose key was taken gets KeyTaken. A
 * database that does not answer fails the whole batch at once (no order of it was saved).
 */
function batchedSaves(p: Postgres) {
  const save = batchPerTurn((batch: SaveRequest[]) => savePedidos(p, batch), {
    whileInFlight: true,
    splitOnFailure: false,
  });
  return async (pedido: Omit<Pedido, "id">, options: SaveOptions): Promise<Pedido> => {
    const outcome = await save({ pedido, options, within: inCallersContext() });
    if (outcome instanceof Error) throw outcome;
    return outcome;
  };
}

async function savePedidos(p: Postgres, batch: SaveRequest[]): Promise<(Pedido | Error)[]> {
  try {
    return await saveTogether(p, batch);
  } catch (error) {
    if (batch.length === 1 || (error as { code?: string }).code !== UNIQUE_VIOLATION) {
      const failure = asSaveError(error, batch.length === 1 ? batch[0] : undefined);
      return batch.map(() => failure as Error);
    }
    const outcomes: (Pedido | Error)[] = [];
    for (const one of batch) {
      try {
        outcomes.push(...(await saveTogether(p, [one])));
      } catch (e) {
        outcomes.push(asSaveError(e, one) as Error);
      }
    }
    return outcomes;
  }
}

const UNIQUE_VIOLATION = "23505";

/** A key taken (in a batch of one, whose key it can only be) is KeyTaken; else a store error. */
function asSaveError(error: unknown, one: SaveRequest | undefined): unknown {
  const key = one?.options.key;
  if ((error as { code?: string }).code === UNIQUE_VIOLATION && key)
    return new KeyTaken(`Idempotency-Key ${key.key} was saved first by another request`);
  return asStoreError(error);
}

/** The batch's orders, keys and outbox rows in one statement (SAVE_PEDIDOS). */
async function saveTogether(p: Postgres, batch: SaveRequest[]): Promise<Pedido[]> {
  const ids = (
    await p.pool.query<{ id: number }>({
      name: "next_pedido_ids",
      text: NEXT_PEDIDO_IDS,
      values: [batch.length],
    })
  ).rows;
  const saved = batch.map(({ pedido }, i) => ({ ...pedido, id: (ids[i] as { id: number }).id }));
  const records = batch.map(({ options, within }, i) => {
    const pedido = saved[i] as Pedido;
    // The event carries the trace of the request that made the order, not the batch's.
    const entry = within(() => options.outboxOf?.(pedido)) ?? null;
    return {
      id: pedido.id,
      ...Object.fromEntries(PEDIDO_FIELDS.map((f) => [PEDIDO_COLUMNS[f], pedido[f]])),
      chave: options.key?.key ?? null,
      impressao: options.key?.fingerprint ?? null,
      topico: entry?.topic ?? null,
      registro_chave: entry?.key ?? null,
      valor: entry?.value ?? null,
      traceparent: entry?.traceparent ?? null,
    };
  });
  await p.pool.query({
    name: "save_pedidos",
    text: SAVE_PEDIDOS,
    values: [JSON.stringify(records)],
  });
  // The relay that owns the outbox is another instance's: it is told, and publishes now
  // rather than at its next poll.
  if (!p.marks.owner() && records.some((r) => r.topico !== null))
    await p.pool.query("SELECT pg_notify($1, '')", [WAITING_CHANNEL]);
  return saved;
}

/** The order held under its row lock until commit; `decide` says what to write. */
async function updatePedido<T>(
  c: pg.PoolClient,
  id: number,
  decide: (pedido: Pedido) => PedidoWrite<T>,
): Promise<T | null> {
  const forUpdate = { name: "pedido_for_update", text: PEDIDO_FOR_UPDATE, values: [id] };
  const [pedido] = (await c.query<Pedido>(forUpdate)).rows;
  if (!pedido) return null;
  const write = decide(pedido);
  if (write.status) {
    const { status, motivo, processadoPor } = write.status;
    await c.query({
      name: "update_status",
      text: UPDATE_STATUS,
      values: [status, motivo, processadoPor, new Date().toISOString(), id],
    });
  }
  await insertSteps(
    c,
    write.steps.map((s) => ({ pedidoId: id, ...s })),
  );
  return write.answer;
}

/** Timeline steps in one statement, in a transaction (`c`) or on their own (the pool). */
async function insertSteps(
  c: pg.PoolClient | pg.Pool,
  steps: { pedidoId: number; etapa: string; details: Details; at?: string | undefined }[],
): Promise<void> {
  if (steps.length === 0) return;
  const now = new Date().toISOString();
  await c.query({
    name: "insert_steps",
    text: INSERT_STEPS,
    values: [
      steps.map((s) => s.pedidoId),
      steps.map((s) => s.etapa),
      steps.map((s) => s.at ?? now),
      steps.map((s) => JSON.stringify(s.details)),
    ],
  });
}

/**
 * The relay's round on PostgreSQL (issue 57): when this instance's relay owns the outbox
 * (OUTBOX_OWNER), the pending rows of every instance, for `work`, with no transaction open
 * while it publishes them and no lock written per row; else nothing. One relay publishes
 * at a time, in batches as large as one relay of SQLite makes; when its instance dies, the
 * first relay to take the lock after it publishes what it left.
 */
async function claimOutbox(
  p: Postgres,
  limit: number,
  work: (rows: OutboxRow[], claim: OutboxClaim) => Promise<void>,
): Promise<void> {
  if (!(await p.marks.own())) return;
  const pending = { name: "pending_outbox", text: PENDING, values: [limit] };
  const rows = (await asStoreErrors(() => p.pool.query<OutboxRow>(pending))).rows;
  if (rows.length === 0) return;
  await work(rows, {
    markSent: (sent) => asStoreErrors(() => markSent(p.pool, sent)),
    setAside: (row, reason) => inTransaction(p.pool, (c) => setAside(c, row, reason)),
  });
}

/** The relay's rows acknowledged by Kafka: sent, where Kafka wrote them, announced to every instance at commit. */
async function markSent(c: pg.Pool, rows: SentRow[]): Promise<void> {
  const marked: OutboxMarked = { sent: rows.map((r) => r.pedidoId), setAside: [] };
  await c.query({
    name: "mark_sent",
    text: MARK_SENT,
    values: [
      new Date().toISOString(),
      rows.map((r) => r.id),
      rows.map((r) => r.particao),
      rows.map((r) => r.offset),
      MARKED_CHANNEL,
      JSON.stringify(marked),
    ],
  });
}

/** A row Kafka refused for good: set aside with why, announced, on the order's timeline. */
async function setAside(
  c: pg.PoolClient,
  row: { id: number; pedidoId: number },
  reason: string,
): Promise<void> {
  const now = new Date().toISOString();
  await announceMarks(c, { sent: [], setAside: [[row.pedidoId, reason]] });
  await c.query(SET_ASIDE, [now, reason, row.id]);
  const step = { etapa: "evento-posto-de-lado", details: { motivo: reason }, at: now };
  await insertSteps(c, [{ pedidoId: row.pedidoId, ...step }]);
}

/** NOTIFY is delivered at commit: no instance learns of a mark that is rolled back. */
const announceMarks = (c: pg.PoolClient, marked: OutboxMarked) =>
  c.query("SELECT pg_notify($1, $2)", [MARKED_CHANNEL, JSON.stringify(marked)]);

/**
 * The LISTEN connection, once it listens (or after WITHIN_MS.connect, and it goes on
 * trying): the relay that owns the outbox may be another instance's, and this instance's
 * requests learn that their rows were published from its marks, which a store not yet
 * listening would miss.
 */
async function listening(driver: Driver, url: string) {
  const marks = listenForMarks(driver, url);
  const notYet = () => new Error("not listening yet: the connection goes on trying");
  await withTimeLimit(marks.listening, WITHIN_MS.connect, notYet).catch(() => {});
  return marks;
}

/** A notification to the listeners of its channel: rows marked, or rows waiting. */
function hear(
  n: pg.Notification,
  listeners: Set<(marked: OutboxMarked) => void>,
  waiting: Set<() => void>,
) {
  if (n.channel === WAITING_CHANNEL) for (const l of waiting) l();
  if (n.channel !== MARKED_CHANNEL || !n.payload) return;
  const marked = JSON.parse(n.payload) as OutboxMarked;
  for (const l of listeners) l(marked);
}

/**
 * One connection that LISTENs for the relays' marks and hands each to the listeners, hears
 * when other instances wrote rows (WAITING_CHANNEL), and holds the outbox's ownership
 * (OUTBOX_OWNER) once it took it (`own`, tried at most every OWN_EVERY_MS), for as long
 * as it lives. Lost (PostgreSQL restarted), it connects again a second later, without the
 * ownership; a mark announced meanwhile is missed, and its request answers as not
 * acknowledged in time (its event is published all the same). An owner that lost its
 * connection in the middle of a publish may see another relay publish the same rows: the
 * consumers are idempotent (at least once).
 */
function listenForMarks(driver: Driver, url: string) {
  const listeners = new Set<(marked: OutboxMarked) => void>();
  const waiting = new Set<() => void>();
  let owner = false;
  let triedAt = 0;
  let listened: () => void = () => {};
  const listening = new Promise<void>((resolve) => {
    listened = resolve;
  });
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;
  const again = () => {
    client = null;
    owner = false;
    if (!closed) retry = setTimeout(connect, 1000);
  };
  function connect() {
    const c = new driver.Client({
      connectionString: url,
      connectionTimeoutMillis: WITHIN_MS.connect,
    });
    client = c;
    c.on("notification", (n) => hear(n, listeners, waiting));
    c.on("error", () => {
      c.end().catch(() => {});
      if (client === c) again();
    });
    c.connect()
      .then(() => c.query(`LISTEN ${MARKED_CHANNEL}; LISTEN ${WAITING_CHANNEL}`))
      .then(() => listened())
      .catch(() => {
        c.end().catch(() => {});
        if (client === c) again();
      });
  }
  connect();
  return {
    add: (listener: (marked: OutboxMarked) => void) => {
      listeners.add(listener);
    },
    listening,
    onWaiting: (listener: () => void) => waiting.add(listener),
    owner: () => owner,
    async own(): Promise<boolean> {
      const c = client;
      if (owner || !c || Date.now() - triedAt < OWN_EVERY_MS) return owner;
      triedAt = Date.now();
      const [row] = (await c.query<{ owner: boolean }>(TRY_OWN, [...OUTBOX_OWNER])).rows;
      owner = client === c && row?.owner === true;
      return owner;
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}
