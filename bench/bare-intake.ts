import express from "express";
import { bareAnswer, bareDatabase, bareOrder, listen, need } from "./bare-order.ts";

/**
 * The intake's baseline (issue 36): a bare program that keeps the intake's storage promise
 * and nothing else of the shop. Express, the body checked by hand, the order inserted into
 * SQLite in WAL with synchronous=FULL (durable before the answer, as the orders API's), and
 * 201 with the row. No contract library, no tracing, no metrics, no outbox, no Kafka.
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

const app = express();
app.use(express.json());
app.post("/pedidos", (req, res) => {
  const order = bareOrder(req.body);
  if (!order) {
    res.status(400).json({ erro: "invalid body" });
    return;
  }
  const { cliente, item, quantidade, valorCentavos, criadoEm } = order;
  const { lastInsertRowid } = insert.run(cliente, item, quantidade, valorCentavos, criadoEm);
  res.status(201).json(bareAnswer(Number(lastInsertRowid), order));
});
listen(app, "intake");
