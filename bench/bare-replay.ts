import { randomUUID } from "node:crypto";
import { Kafka, logLevel } from "kafkajs";

/**
 * The replay's baseline (issue 36): a bare kafkajs consumer of the same records, from offset
 * 0 in a group of its own, that parses each value's JSON and nothing else (no contract, no
 * view, no decoding thread), with kafkajs's own defaults. It prints how many it read and
 * exits once it has read TOTAL.
 */
const brokers = (process.env.KAFKA_BROKERS ?? "127.0.0.1:9092").split(",");
const topics = (process.env.TOPICS ?? "").split(",").filter(Boolean);
const total = Number(process.env.TOTAL);
if (topics.length === 0 || !Number.isInteger(total) || total <= 0) {
  console.error("bare-replay: TOPICS (comma-separated) and TOTAL (a whole number) are needed");
  process.exit(2);
}

const kafka = new Kafka({ clientId: "bare-replay", brokers, logLevel: logLevel.ERROR });
const consumer = kafka.consumer({ groupId: `bare-replay-${randomUUID()}`, maxWaitTimeInMs: 50 });
let read = 0;
let parsed = 0;
const done = new Promise<void>((resolve) => {
  void (async () => {
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          if (m.value)
            parsed += (JSON.parse(m.value.toString("utf8")) as { versao: number }).versao;
          read++;
        }
        if (read >= total) resolve();
      },
    });
  })();
});
await done;
await consumer.disconnect();
console.log(JSON.stringify({ read, parsed }));
process.exit(0);
