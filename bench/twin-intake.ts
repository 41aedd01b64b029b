import { createHash, randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import cors from "cors";
import express, { type Express, type RequestHandler } from "express";
import { type Kafka, Partitioners, type Producer } from "kafkajs";
import { Counter, Histogram, Registry } from "prom-client";
import { NovoPedidoSchema, PedidoCriado } from "../contracts/src/event-log.ts";
import { type BareOrder, bareAnswer, bareOrder, perTurn } from "./bare-order.ts";
import type { ShopPromise } from "./promises.ts";

/**
 * The intake's twins (issue 57): POST /pedidos written as plainly as it can be, keeping the
 * promises it is given (promises.ts's PROMISES, in any subset) and nothing else, each the
 * leanest way it can be kept. With none it is the lean twin: the order stored durably
 * (SQLite, WAL, synchronous=FULL), its PedidoCriado acknowledged by every in-sync replica,
 * then 201; a turn's orders in one transaction (one fsync) and their events in one produce
 * request. With all seven it is the feature-matched twin the shop is held to. What each
 * promise adds:
 *
 * - outbox: the event saved in the order's transaction and published from that row, which
 *   is marked sent (its partition and offset on it) after the acknowledgement, in a commit
 *   with no fsync of its own (a mark lost sends the row again); a row left unsent is sent
 *   again within a second. A turn's rows are published from memory, not read back.
 * - idempotency: a request with an Idempotency-Key is looked up; a kept answer is replayed,
 *   a key in use answers 409, the same key with another body 422; a new key is saved with
 *   its order, and its answer with the marks.
 * - timeline: the steps a reader is shown (criado, evento-confirmado) come from rows that
 *   are written anyway: the order's criado_em, and its event's partition and offset, on the
 *   outbox row (on the order row without an outbox).
 * - validation: the contract's schema for the body (NovoPedidoSchema) and for the event
 *   (PedidoCriado.encode) instead of checks by hand and JSON.stringify.
 * - headers: CORS for the page's origin, and OWASP's five headers on an API's answers.
 * - tracing: a W3C traceparent for each order (the caller's, or a new one), carried by its
 *   event; nothing exported.
 * - metrics: a counter and a duration histogram of the requests, served on /metrics.
 *
 * The story of one request: postPedido → save (a turn: insertAll → publish → markAll).
 */
export interface TwinDeps {
  db: Database.Database;
  producer: Producer;
  topic: string;
  /** The topic's partitions: each record's partition is known before its send. */
  partitionCount: number;
  promises: ReadonlySet<ShopPromise>;
}

/** How many partitions `topic` has: a twin places each record itself. */
export async function partitionCountOf(kafka: Kafka, topic: string): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions.length ?? 1;
  } finally {
    await admin.disconnect();
  }
}

/** Registers the twin's POST /pedidos, with the middleware its promises need, on `app`. */
export function twinIntake(app: Express, deps: TwinDeps): void {
  const twin = openTwin(deps);
  // The orders of one event-loop turn go together: one transaction, one produce request.
  const save = perTurn((units: Unit[]) => saveTurn(twin, units));
  if (twin.has("metrics")) app.use(...metricsRoutes());
  if (twin.has("headers")) app.use(...securityHeaders());
  app.use(express.json());
  app.post("/pedidos", (req, res, next) => {
    postPedido(twin, save, req, res).catch(next);
  });
  if (twin.has("outbox")) setInterval(() => void resendUnsent(twin), 1000).unref();
}

/** One order of a turn: what was asked, its key if any, its trace. */
interface Unit {
  order: BareOrder;
  key: { key: string; fingerprint: string } | null;
  traceparent: string | null;
}
/** An order saved: its id, its event, its outbox row (if any) and its trace. */
interface Saved {
  id: number;
  value: string;
  outboxId: number | null;
  traceparent: string | null;
}
type Placed = { partition: number; offset: string };
type Twin = ReturnType<typeof openTwin>;

function openTwin(deps: TwinDeps) {
  const { db } = deps;
  db.exec(`CREATE TABLE IF NOT EXISTS pedidos (
    id INTEGER PRIMARY KEY AUTOINCREMENT, cliente TEXT NOT NULL, item TEXT NOT NULL,
    quantidade INTEGER NOT NULL, valor_centavos INTEGER NOT NULL, status TEXT NOT NULL,
    motivo TEXT, processado_por TEXT, criado_em TEXT NOT NULL, decidido_em TEXT,
    particao INTEGER, deslocamento TEXT);
  CREATE TABLE IF NOT EXISTS outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT, pedido_id INTEGER NOT NULL, valor TEXT NOT NULL,
    traceparent TEXT, enviado_em TEXT, particao INTEGER, deslocamento TEXT);
  CREATE TABLE IF NOT EXISTS idempotencia (
    chave TEXT PRIMARY KEY, impressao TEXT NOT NULL, pedido_id INTEGER NOT NULL,
    resposta TEXT);`);
  const partitioner = Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: deps.partitionCount }, (_, i) => ({
    partitionId: i,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [0],
    isr: [0],
  }));
  const q = statements(db);
  return {
    ...deps,
    q,
    has: (p: ShopPromise) => deps.promises.has(p),
    // kafkajs's default partitioner (murmur2, as the Java client's), as its send uses it.
    partitionOf: (key: string) =>
      partitioner({ topic: deps.topic, partitionMetadata, message: { key, value: null } }),
    /** The turn's orders, with their keys and outbox rows: one transaction, one fsync. */
    insertAll: db.transaction((units: Unit[]) => units.map((u) => insertOne(q, deps, u))),
    /** The marks and the kept answers after the acknowledgement (run without an fsync). */
    markAll: db.transaction((rows: Saved[], at: Placed[], answers: [string, string][]) =>
      markRows(q, deps.promises, rows, at, answers),
    ),
  };
}

function statements(db: Database.Database) {
  return {
    insertPedido: db.prepare(
      "INSERT INTO pedidos (cliente, item, quantidade, valor_centavos, status, criado_em) VALUES (?, ?, ?, ?, 'AGUARDANDO_PAGAMENTO', ?)",
    ),
    insertOutbox: db.prepare("INSERT INTO outbox (pedido_id, valor, traceparent) VALUES (?, ?, ?)"),
    markSent: db.prepare(
      "UPDATE outbox SET enviado_em = ?, particao = ?, deslocamento = ? WHERE id = ?",
    ),
    placed: db.prepare("UPDATE pedidos SET particao = ?, deslocamento = ? WHERE id = ?"),
    unsent: db.prepare(
      "SELECT id AS outboxId, pedido_id AS id, valor AS value, traceparent FROM outbox WHERE enviado_em IS NULL ORDER BY id LIMIT 500",
    ),
    key: db.prepare("SELECT impressao, resposta FROM idempotencia WHERE chave = ?"),
    insertKey: db.prepare(
      "INSERT INTO idempotencia (chave, impressao, pedido_id) VALUES (?, ?, ?)",
    ),
    saveAnswer: db.prepare("UPDATE idempotencia SET resposta = ? WHERE chave = ?"),
  };
}
type Statements = ReturnType<typeof statements>;

async function postPedido(
  twin: Twin,
  save: (unit: Unit) => Promise<number>,
  req: express.Request,
  res: express.Response,
) {
  const order = orderOf(twin, req.body);
  if (!order) {
    res.status(400).json({ erro: "invalid body" });
    return;
  }
  const header = twin.has("idempotency") ? req.get("idempotency-key") : undefined;
  const key = header ? { key: header, fingerprint: fingerprintOf(req.body) } : null;
  if (key) {
    const kept = twin.q.key.get(key.key) as
      | { impressao: string; resposta: string | null }
      | undefined;
    if (kept && kept.impressao !== key.fingerprint) {
      res.status(422).json({ erro: "Idempotency-Key used with another body" });
      return;
    }
    if (kept) {
      if (kept.resposta) res.status(201).type("json").send(kept.resposta);
      else res.status(409).json({ erro: "Idempotency-Key in use" });
      return;
    }
  }
  const traceparent = twin.has("tracing") ? traceOf(req.get("traceparent")) : null;
  const id = await save({ order, key, traceparent });
  res.status(201).json(bareAnswer(id, order));
}

/** The body as an order: by the contract's schema, or checked by hand. */
function orderOf(twin: Twin, body: unknown): BareOrder | null {
  if (!twin.has("validation")) return bareOrder(body);
  const parsed = NovoPedidoSchema.safeParse(body);
  return parsed.success ? bareOrder(parsed.data) : null;
}

const fingerprintOf = (body: unknown) =>
  createHash("sha256").update(JSON.stringify(body)).digest("hex");

/** The caller's traceparent's trace with a span of its own, or a new trace (not sampled). */
function traceOf(header: string | undefined): string {
  const ids = randomBytes(24).toString("hex");
  const parent = header && /^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/.test(header) ? header : null;
  return `00-${parent ? parent.slice(3, 35) : ids.slice(0, 32)}-${ids.slice(32, 48)}-00`;
}

/** A turn: saved in one transaction (one fsync), published in one request, then marked. */
async function saveTurn(twin: Twin, units: Unit[]): Promise<number[]> {
  const rows = twin.insertAll.immediate(units);
  const at = await publish(twin, rows);
  const answers = units.flatMap((u, i): [string, string][] =>
    u.key ? [[u.key.key, JSON.stringify(bareAnswer((rows[i] as Saved).id, u.order))]] : [],
  );
  if (twin.has("outbox") || twin.has("timeline") || answers.length > 0)
    withoutFsync(twin.db, () => twin.markAll.immediate(rows, at, answers));
  return rows.map((r) => r.id);
}

/** One order with its key and outbox row, inside the turn's transaction. */
function insertOne(q: Statements, deps: TwinDeps, u: Unit): Saved {
  const { cliente, item, quantidade, valorCentavos, criadoEm } = u.order;
  const id = Number(
    q.insertPedido.run(cliente, item, quantidade, valorCentavos, criadoEm).lastInsertRowid,
  );
  if (u.key) q.insertKey.run(u.key.key, u.key.fingerprint, id);
  const value = eventOf(deps.promises, id, u.order);
  const outboxId = deps.promises.has("outbox")
    ? Number(q.insertOutbox.run(id, value, u.traceparent).lastInsertRowid)
    : null;
  return { id, value, outboxId, traceparent: u.traceparent };
}

function eventOf(promises: ReadonlySet<ShopPromise>, id: number, o: BareOrder): string {
  const event = {
    versao: 1 as const,
    pedidoId: id,
    cliente: o.cliente,
    item: o.item,
    quantidade: o.quantidade,
    valor: o.valorCentavos / 100,
    criadoEm: o.criadoEm,
  };
  return promises.has("validation") ? PedidoCriado.encode(event) : JSON.stringify(event);
}

/** Publishes saved orders' events in one produce request (acks=all): each one's partition and offset. */
async function publish(twin: Twin, rows: Saved[]): Promise<Placed[]> {
  const placed = rows.map((r) => ({ r, partition: twin.partitionOf(String(r.id)) }));
  const written = await twin.producer.send({
    topic: twin.topic,
    acks: -1,
    messages: placed.map(({ r, partition }) => ({
      key: String(r.id),
      value: r.value,
      partition,
      ...(r.traceparent ? { headers: { traceparent: r.traceparent } } : {}),
    })),
  });
  const next = new Map(written.map((w) => [w.partition, BigInt(w.baseOffset ?? "0")]));
  return placed.map(({ partition }) => {
    const offset = next.get(partition) ?? 0n;
    next.set(partition, offset + 1n);
    return { partition, offset: String(offset) };
  });
}

/** The rows marked sent (partition and offset on them) and the keyed answers kept. */
function markRows(
  q: Statements,
  promises: ReadonlySet<ShopPromise>,
  rows: Saved[],
  at: Placed[],
  answers: [string, string][],
): void {
  const now = new Date().toISOString();
  rows.forEach((r, i) => {
    const { partition, offset } = at[i] as Placed;
    if (r.outboxId !== null) q.markSent.run(now, partition, offset, r.outboxId);
    else if (promises.has("timeline")) q.placed.run(partition, offset, r.id);
  });
  for (const [key, answer] of answers) q.saveAnswer.run(answer, key);
}

/** A commit whose loss is harmless (redone), made without waiting for the disk. */
function withoutFsync(db: Database.Database, work: () => void): void {
  db.exec("PRAGMA synchronous = NORMAL");
  try {
    work();
  } finally {
    db.exec("PRAGMA synchronous = FULL");
  }
}

/** An outbox row whose send failed (Kafka away) is sent again: none is lost. */
async function resendUnsent(twin: Twin): Promise<void> {
  const rows = twin.q.unsent.all() as Saved[];
  if (rows.length === 0) return;
  try {
    const at = await publish(twin, rows);
    withoutFsync(twin.db, () => twin.markAll.immediate(rows, at, []));
  } catch {
    // still pending: the next second tries again
  }
}

function metricsRoutes(): RequestHandler[] {
  const registry = new Registry();
  const requests = new Counter({
    name: "pedidos_total",
    help: "requests",
    labelNames: ["status"],
    registers: [registry],
  });
  const durations = new Histogram({
    name: "pedidos_segundos",
    help: "request duration",
    registers: [registry],
  });
  const measure: RequestHandler = (_req, res, next) => {
    const end = durations.startTimer();
    res.on("finish", () => {
      end();
      requests.inc({ status: String(res.statusCode) });
    });
    next();
  };
  const serve: RequestHandler = (req, res, next) => {
    if (req.method !== "GET" || req.path !== "/metrics") return next();
    registry.metrics().then((text) => res.type(registry.contentType).send(text), next);
  };
  return [measure, serve];
}

function securityHeaders(): RequestHandler[] {
  const headers: RequestHandler = (_req, res, next) => {
    res.setHeader("Cache-Control", "no-store");
    res.setHeader("Content-Security-Policy", "frame-ancestors 'none'");
    res.setHeader("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("X-Frame-Options", "DENY");
    next();
  };
  return [cors({ origin: process.env.FRONT_ORIGIN ?? "http://localhost:5173" }), headers];
}
