import { randomUUID } from "node:crypto";
import amqp, { type ConfirmChannel } from "amqplib";
import express from "express";
import { bareDatabase, listen, need, perTurn } from "./bare-order.ts";

/**
 * The broker edition's baseline (issue 36): its payment flow with the same promises,
 * written as plainly as it can be, in two roles on amqplib.
 *
 * - ROLE=orders: POST /pedidos stores an order; POST /pedidos/{id}/pagamentos stores the
 *   request once (keyed by solicitacaoId, synchronous=FULL), publishes it persistent and
 *   mandatory on a confirm channel and answers 202 once RabbitMQ confirmed it; consumers
 *   of the results (manual acks, prefetch 1 each) conclude the request and mark the order
 *   PAGO, then ack.
 * - ROLE=payments: consumers of the requests (manual acks, prefetch 1 each) insert each
 *   decision once (synchronous=FULL), publish it persistent and mandatory, and ack after
 *   its confirm; a repeat publishes the decision already stored.
 *
 * Quorum queues, as the shop's. Each role's writes of one event-loop turn share one
 * transaction (one fsync), as the shop's group commit does; publishes are pipelined on the
 * confirm channel, each awaited on its own confirm. No contract library, tracing, metrics,
 * retries or dead-letter queues. Each role prints the URL it listens on (payments serves nothing).
 */
const role = process.env.ROLE;
const prefix = need("PREFIX");
const COMMANDS = `${prefix}comandos`;
const EVENTS = `${prefix}eventos`;
const REQUESTS = `${prefix}solicitacoes`;
const RESULTS = `${prefix}resultados`;
const CONSUMERS = Number(process.env.CONSUMIDORES ?? 16);

const db = bareDatabase(need("DB_PATH"));
const connection = await amqp.connect(need("AMQP_URL"));
const publishing: ConfirmChannel = await connection.createConfirmChannel();
await publishing.assertExchange(COMMANDS, "direct", { durable: true });
await publishing.assertExchange(EVENTS, "topic", { durable: true });
for (const [queue, exchange, key] of [
  [REQUESTS, COMMANDS, "pagamento.solicitar"],
  [RESULTS, EVENTS, "pagamento.resultado"],
] as const) {
  await publishing.assertQueue(queue, { durable: true, arguments: { "x-queue-type": "quorum" } });
  await publishing.bindQueue(queue, exchange, key);
}
const unrouted = new Set<string>();
publishing.on("return", (m) => unrouted.add(String(m.properties.messageId)));

/** Persistent, mandatory, settled by the broker's confirm; a return fails it. */
function publish(exchange: string, key: string, body: unknown): Promise<void> {
  const messageId = randomUUID();
  return new Promise((resolve, reject) => {
    publishing.publish(
      exchange,
      key,
      Buffer.from(JSON.stringify(body)),
      { persistent: true, mandatory: true, contentType: "application/json", messageId },
      (error) => {
        if (error) reject(error);
        else if (unrouted.delete(messageId)) reject(new Error(`unrouted on ${exchange}`));
        else resolve();
      },
    );
  });
}

/** CONSUMERS consumers on `queue`, each on its channel with prefetch 1; ack after `handle`. */
async function consume(queue: string, handle: (body: Record<string, unknown>) => Promise<void>) {
  for (let i = 0; i < CONSUMERS; i++) {
    const ch = await connection.createChannel();
    await ch.prefetch(1);
    await ch.consume(queue, async (m) => {
      if (!m) return;
      await handle(JSON.parse(m.content.toString("utf8")));
      ch.ack(m);
    });
  }
}

const app = express();
app.use(express.json());

if (role === "orders") {
  db.exec(`CREATE TABLE IF NOT EXISTS pedidos (
      id TEXT PRIMARY KEY, cliente_id TEXT NOT NULL, status TEXT NOT NULL,
      total_centavos INTEGER NOT NULL, criado_em TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS solicitacoes (
      solicitacao_id TEXT PRIMARY KEY, pedido_id TEXT NOT NULL, cenario TEXT NOT NULL,
      valor_centavos INTEGER NOT NULL, estado TEXT NOT NULL, aprovado INTEGER,
      criada_em TEXT NOT NULL, concluida_em TEXT);`);
  const insertPedido = db.prepare(
    "INSERT INTO pedidos (id, cliente_id, status, total_centavos, criado_em) VALUES (?, ?, 'ABERTO', ?, ?)",
  );
  const pedido = db.prepare<[string], { total_centavos: number }>(
    "SELECT total_centavos FROM pedidos WHERE id = ?",
  );
  const insertRequest = db.prepare(
    "INSERT OR IGNORE INTO solicitacoes (solicitacao_id, pedido_id, cenario, valor_centavos, estado, criada_em) VALUES (?, ?, ?, ?, 'PENDENTE', ?)",
  );
  const inPayment = db.prepare(
    "UPDATE pedidos SET status = 'EM_PAGAMENTO' WHERE id = ? AND status = 'ABERTO'",
  );
  const conclude = db.prepare(
    "UPDATE solicitacoes SET estado = 'CONCLUIDA', aprovado = ?, concluida_em = ? WHERE solicitacao_id = ? AND estado = 'PENDENTE'",
  );
  const paid = db.prepare("UPDATE pedidos SET status = 'PAGO' WHERE id = ?");
  type Request = { id: string; solicitacaoId: string; cenario: string; total: number };
  const request = perTurn(
    db.transaction((requests: Request[]) =>
      requests.map(({ id, solicitacaoId, cenario, total }) => {
        insertRequest.run(solicitacaoId, id, cenario, total, new Date().toISOString());
        return inPayment.run(id).changes;
      }),
    ),
  );
  const applyResult = perTurn(
    db.transaction((results: Record<string, unknown>[]) =>
      results.map((r) => {
        const changed = conclude.run(
          r.aprovado ? 1 : 0,
          new Date().toISOString(),
          r.solicitacaoId,
        ).changes;
        if (changed > 0 && r.aprovado) paid.run(r.pedidoId);
        return changed;
      }),
    ),
  );
  app.post("/pedidos", (req, res) => {
    const { clienteId, itens } = req.body ?? {};
    if (typeof clienteId !== "string" || !Array.isArray(itens) || itens.length === 0) {
      res.status(400).json({ erro: "invalid body" });
      return;
    }
    const total = itens.reduce(
      (sum: number, i: { quantidade: number; precoUnitario: number }) =>
        sum + Math.round(i.precoUnitario * 100) * i.quantidade,
      0,
    );
    const id = randomUUID();
    insertPedido.run(id, clienteId, total, new Date().toISOString());
    res.status(201).json({ id, clienteId, status: "ABERTO", total: total / 100, itens });
  });
  app.post("/pedidos/:id/pagamentos", async (req, res) => {
    const { solicitacaoId, cenario } = req.body ?? {};
    if (typeof solicitacaoId !== "string" || (cenario !== "APROVAR" && cenario !== "RECUSAR")) {
      res.status(400).json({ erro: "invalid body" });
      return;
    }
    const order = pedido.get(req.params.id);
    if (!order) {
      res.status(404).json({ erro: "no such order" });
      return;
    }
    await request({ id: req.params.id, solicitacaoId, cenario, total: order.total_centavos });
    await publish(COMMANDS, "pagamento.solicitar", {
      versao: 1,
      solicitacaoId,
      pedidoId: req.params.id,
      valor: order.total_centavos / 100,
      cenario,
    });
    res.status(202).json({ solicitacaoId, pedidoId: req.params.id, estado: "PENDENTE" });
  });
  await consume(RESULTS, async (r) => {
    await applyResult(r);
  });
} else if (role === "payments") {
  db.exec(`CREATE TABLE IF NOT EXISTS decisoes (
    solicitacao_id TEXT PRIMARY KEY, pedido_id TEXT NOT NULL, aprovado INTEGER NOT NULL,
    motivo TEXT, decidida_em TEXT NOT NULL)`);
  const decide = db.prepare(
    "INSERT OR IGNORE INTO decisoes (solicitacao_id, pedido_id, aprovado, motivo, decidida_em) VALUES (?, ?, ?, ?, ?)",
  );
  const decision = db.prepare<
    [string],
    { aprovado: number; motivo: string | null; decidida_em: string }
  >("SELECT aprovado, motivo, decidida_em FROM decisoes WHERE solicitacao_id = ?");
  type Decided = { aprovado: number; motivo: string | null; decidida_em: string };
  const decideAll = perTurn(
    db.transaction((requests: Record<string, unknown>[]) =>
      requests.map((s) => {
        const approved = s.cenario === "APROVAR";
        decide.run(
          s.solicitacaoId,
          s.pedidoId,
          approved ? 1 : 0,
          approved ? null : "recusado",
          new Date().toISOString(),
        );
        return decision.get(String(s.solicitacaoId)) as Decided;
      }),
    ),
  );
  await consume(REQUESTS, async (s) => {
    const d = await decideAll(s);
    await publish(EVENTS, "pagamento.resultado", {
      versao: 1,
      solicitacaoId: s.solicitacaoId,
      pedidoId: s.pedidoId,
      aprovado: d.aprovado === 1,
      motivo: d.motivo,
      processadoEm: d.decidida_em,
    });
  });
} else {
  throw new Error(`bare-broker: ROLE is orders or payments, not ${role}`);
}

listen(app, `broker ${role}`);
