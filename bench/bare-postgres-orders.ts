import express from "express";
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import { bareAnswer, bareOrder, listen, need, perTurn } from "./bare-order.ts";

/**
 * The scale-out row's anchor (issue 57): POST /pedidos on PostgreSQL written as plainly as
 * it can be, keeping only durability, as the lean twin does on SQLite (twin-intake.ts with
 * no promise): a turn's orders in one INSERT (one commit, one WAL flush before any answer),
 * their events in one produce request with acks=all, 201 once Kafka acknowledged. Several
 * run on one database, as the orders APIs do. No outbox, no keys, no timeline, no contract
 * library, no tracing, no metrics.
 */
const kafka = new Kafka({
  clientId: "bare-postgres-orders",
  brokers: need("KAFKA_BROKERS").split(","),
  logLevel: logLevel.ERROR,
});
const topic = need("TOPIC_PEDIDOS");
const pool = new pg.Pool({ connectionString: need("DATABASE_URL"), max: 8 });
// Two programs start at once on one database: one creates the table, the other waits.
const setup = await pool.connect();
try {
  await setup.query("BEGIN");
  await setup.query("SELECT pg_advisory_xact_lock(57058)");
  await setup.query(`CREATE TABLE IF NOT EXISTS pedidos_gemeo (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, cliente TEXT NOT NULL,
    item TEXT NOT NULL, quantidade INTEGER NOT NULL, valor_centavos BIGINT NOT NULL,
    status TEXT NOT NULL, criado_em TEXT NOT NULL)`);
  await setup.query("COMMIT");
} finally {
  setup.release();
}
const producer = kafka.producer();
await producer.connect();

type Order = NonNullable<ReturnType<typeof bareOrder>>;
/** A turn: its orders in one statement (their ids in the order given), their events in one request. */
const save = perTurn(async (orders: Order[]) => {
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO pedidos_gemeo (cliente, item, quantidade, valor_centavos, status, criado_em)
     SELECT c, i, q, v, 'AGUARDANDO_PAGAMENTO', e
     FROM unnest($1::text[], $2::text[], $3::int[], $4::bigint[], $5::text[]) AS x(c, i, q, v, e)
     RETURNING id`,
    [
      orders.map((o) => o.cliente),
      orders.map((o) => o.item),
      orders.map((o) => o.quantidade),
      orders.map((o) => o.valorCentavos),
      orders.map((o) => o.criadoEm),
    ],
  );
  const ids = rows.map((r) => Number(r.id));
  await producer.send({
    topic,
    acks: -1,
    messages: orders.map((o, i) => ({
      key: String(ids[i]),
      value: JSON.stringify({ versao: 1, ...bareAnswer(ids[i] as number, o), pedidoId: ids[i] }),
    })),
  });
  return ids;
});

const app = express();
app.disable("x-powered-by");
app.use(express.json());
app.post("/pedidos", (req, res, next) => {
  const order = bareOrder(req.body);
  if (!order) {
    res.status(400).json({ erro: "invalid body" });
    return;
  }
  save(order).then((id) => res.status(201).json(bareAnswer(id, order)), next);
});
listen(app, "postgres orders");
