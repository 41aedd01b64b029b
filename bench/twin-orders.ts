import express from "express";
import { Kafka, logLevel } from "kafkajs";
import { bareDatabase, listen, need } from "./bare-order.ts";
import { PROMISES, type ShopPromise } from "./promises.ts";
import { partitionCountOf, twinIntake } from "./twin-intake.ts";

/**
 * The intake's twin as a program (bench/twin-intake.ts): POST /pedidos keeping the promises
 * PROMISES names (comma-separated, promises.ts's names; none: the lean twin), on
 * TOPIC_PEDIDOS of KAFKA_BROKERS, its orders in DB_PATH. npm run bench -- --only=prices
 * runs one per step of the price list.
 */
const promises = new Set<ShopPromise>();
for (const p of (process.env.PROMISES ?? "").split(",").filter(Boolean)) {
  if (!(PROMISES as readonly string[]).includes(p))
    throw new Error(`twin-orders: unknown promise ${p}; PROMISES names ${PROMISES.join(", ")}`);
  promises.add(p as ShopPromise);
}
const kafka = new Kafka({
  clientId: "twin-orders",
  brokers: need("KAFKA_BROKERS").split(","),
  logLevel: logLevel.ERROR,
});
const topic = need("TOPIC_PEDIDOS");
const producer = kafka.producer();
await producer.connect();
const partitionCount = await partitionCountOf(kafka, topic);

const app = express();
app.disable("x-powered-by");
twinIntake(app, { db: bareDatabase(need("DB_PATH")), producer, topic, partitionCount, promises });
listen(app, "twin orders");
