import express from "express";
import { Kafka, logLevel } from "kafkajs";
import { bareDatabase, listen, need } from "./bare-order.ts";
import { partitionCountOf, twinIntake } from "./twin-intake.ts";

/**
 * The pipeline's baseline (issue 36): the same rules as the shop's pipeline, written as
 * plainly as they can be, in two roles.
 *
 * - ROLE=orders: POST /pedidos is the lean twin's (bench/twin-intake.ts with no promise):
 *   the order stored (SQLite, WAL, synchronous=FULL), its PedidoCriado published with
 *   acks=all and 201 once Kafka acknowledged it, as the shop does it at its cheapest: a
 *   turn's orders in one transaction (one fsync) and their events in one produce request
 *   (the shop's group commit and publishInTurn); a consumer of the results applies each to
 *   the order row while it awaits payment, one transaction a batch, and commits after.
 * - ROLE=payments: a consumer of the orders' events that inserts each decision once (its
 *   idempotency row, synchronous=FULL) before publishing it with acks=all, and commits
 *   after; a repeat publishes the decision already stored.
 *
 * No contract library, no tracing, no metrics, no outbox, no decision wait. Each role
 * serves GET /particoes (the partitions its consumer holds) so the benchmark can wait for
 * the groups to settle.
 */
const role = process.env.ROLE;
const kafka = new Kafka({
  clientId: `bare-${role}`,
  brokers: need("KAFKA_BROKERS").split(","),
  logLevel: logLevel.ERROR,
});
const pedidosTopic = need("TOPIC_PEDIDOS");
const resultadosTopic = need("TOPIC_RESULTADOS");
const db = bareDatabase(need("DB_PATH"));
const producer = kafka.producer();
await producer.connect();
const held: number[] = [];
const app = express();
app.get("/particoes", (_req, res) => {
  res.json(held);
});

const consumer = kafka.consumer({ groupId: need("GROUP") });
consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
  held.splice(0, held.length, ...Object.values(payload.memberAssignment).flat());
});

if (role === "orders") {
  // The intake is the lean twin's (bench/twin-intake.ts with no promise): its table too.
  const partitionCount = await partitionCountOf(kafka, pedidosTopic);
  twinIntake(app, { db, producer, topic: pedidosTopic, partitionCount, promises: new Set() });
  const apply = db.prepare(
    "UPDATE pedidos SET status = ?, motivo = ?, processado_por = ?, decidido_em = ? WHERE id = ? AND status = 'AGUARDANDO_PAGAMENTO'",
  );
  const applyAll = db.transaction((messages: { value: Buffer | null }[]) => {
    const now = new Date().toISOString();
    for (const m of messages) {
      const r = JSON.parse(String(m.value));
      apply.run(r.status, r.motivo, r.instancia, now, r.pedidoId);
    }
  });
  await consumer.connect();
  await consumer.subscribe({ topic: resultadosTopic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      applyAll(batch.messages);
    },
  });
} else if (role === "payments") {
  const instancia = need("INSTANCIA");
  db.exec(`CREATE TABLE IF NOT EXISTS decisoes (
    pedido_id INTEGER PRIMARY KEY, status TEXT NOT NULL, motivo TEXT, processado_em TEXT NOT NULL)`);
  const decide = db.prepare(
    "INSERT OR IGNORE INTO decisoes (pedido_id, status, motivo, processado_em) VALUES (?, ?, ?, ?)",
  );
  const decided = db.prepare<
    [number],
    { status: string; motivo: string | null; processado_em: string }
  >("SELECT status, motivo, processado_em FROM decisoes WHERE pedido_id = ?");
  const decideAll = db.transaction((messages: { value: Buffer | null }[]) =>
    messages.map((m) => {
      const p = JSON.parse(String(m.value));
      const approved = p.valor <= 100;
      decide.run(
        p.pedidoId,
        approved ? "APROVADO" : "RECUSADO",
        approved ? null : "limite do cartão de teste",
        new Date().toISOString(),
      );
      const d = decided.get(p.pedidoId) as {
        status: string;
        motivo: string | null;
        processado_em: string;
      };
      return {
        key: String(p.pedidoId),
        value: JSON.stringify({
          versao: 1,
          pedidoId: p.pedidoId,
          status: d.status,
          motivo: d.motivo,
          instancia,
          processadoEm: d.processado_em,
        }),
      };
    }),
  );
  await consumer.connect();
  await consumer.subscribe({ topic: pedidosTopic, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      const results = decideAll(batch.messages);
      if (results.length > 0)
        await producer.send({ topic: resultadosTopic, acks: -1, messages: results });
    },
  });
} else {
  throw new Error(`bare-pipeline: ROLE is orders or payments, not ${role}`);
}

listen(app, String(role));
