import express from "express";
import {
  type BareOrder,
  bareAnswer,
  bareDatabase,
  bareOrder,
  listen,
  need,
  perTurn,
} from "./bare-order.ts";

/**
 * The intake's baseline (issues 36, 49): a bare program that keeps the intake's storage
 * promise with the shop's cheapest design and nothing else of the shop. Express, the body
 * checked by hand, the orders of one event-loop turn inserted into SQLite in one
 * transaction (WAL, synchronous=FULL: one fsync for the turn, durable before any answer,
 * as the orders API's group commit), and 201 with each row. No contract library, no
 * tracing, no metrics, no outbox, no Kafka.
 */
const db = bareDatabase(need("DB_PATH"));
db.exec(`CREATE TABLE IF NOT EXISTS pedidos (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  cliente TEXT NOT NULL,
  item TEXT NOT NULL,
  quantidade INTEGER NOT NULL,
  valor_centavos INTEGER NOT NULL,
  status TEXT NOT NULL,
  criado_em TEXT NOT NULL
)`);
const insert = db.prepare(
  "INSERT INTO pedidos (cliente, item, quantidade, valor_centavos, status, criado_em) VALUES (?, ?, ?, ?, 'AGUARDANDO_PAGAMENTO', ?)",
);

const insertAll = db.transaction((orders: BareOrder[]) =>
  orders.map(({ cliente, item, quantidade, valorCentavos, criadoEm }) =>
    Number(insert.run(cliente, item, quantidade, valorCentavos, criadoEm).lastInsertRowid),
  ),
);
const save = perTurn((orders: BareOrder[]) => insertAll(orders));

const app = express();
app.use(express.json());
app.post("/pedidos", async (req, res) => {
  const order = bareOrder(req.body);
  if (!order) {
    res.status(400).json({ erro: "invalid body" });
    return;
  }
  res.status(201).json(bareAnswer(await save(order), order));
});
listen(app, "intake");
