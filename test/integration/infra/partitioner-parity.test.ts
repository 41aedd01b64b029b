import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Partitioners } from "kafkajs";
import { describe, expect, it } from "vitest";
import { shopConfig, uniqueName } from "../../../harness/env.ts";
import { ROOT } from "../../../infra/config.ts";
import { KAFKA_CLASSPATH, KAFKA_LOG4J } from "../../../infra/kafka/kafka.ts";
import { createTopic, kafkajsPartition, testKafka } from "../../helpers/kafka.ts";
import { waitFor } from "../../helpers/wait.ts";

/** At least 500 keys: ASCII, accented UTF-8, emoji, empty and very long. */
function parityKeys(): string[] {
  const keys: string[] = [""];
  for (let i = 1; i <= 200; i++) keys.push(String(i));
  for (let i = 0; i < 100; i++) keys.push(`pedido-${i * 7919}`);
  for (let i = 0; i < 80; i++) keys.push(`ação-${i}`, `São Paulo ${i}`);
  for (let i = 0; i < 60; i++) keys.push(`🛒${i}👩‍💻`);
  for (let i = 0; i < 10; i++) keys.push(`${"k".repeat(1000 * (i + 1))}-${i}`);
  keys.push("ß", "日本語のキー", "\u0000", " ", "\t");
  return keys;
}

const PARTITION_COUNTS = [3, 7, 12];

describe("Rule: writers in different implementations map a key to the same partition (murmur2)", () => {
  it("When kafkajs's default partitioner and the Java client partition the same keys, then they agree", async () => {
    const keys = parityKeys();
    expect(keys.length).toBeGreaterThanOrEqual(500);
    const hexKeys = keys.map((k) => Buffer.from(k, "utf8").toString("hex"));
    const dir = mkdtempSync(join(tmpdir(), "parity-"));
    const keysFile = join(dir, "keys.txt");
    const outFile = join(dir, "java.txt");
    writeFileSync(keysFile, `${hexKeys.join("\n")}\n`);

    const kafka = testKafka();
    const topic = uniqueName("parity");
    await createTopic(kafka, topic, 3);

    // The Java client itself, from the same Maven jars as the broker.
    const java = spawnSync(
      "java",
      [
        "-cp",
        KAFKA_CLASSPATH,
        KAFKA_LOG4J,
        join(ROOT, "test/integration/infra/PartitionerParity.java"),
        shopConfig().kafka.brokers.join(","),
        topic,
        keysFile,
        outFile,
        ...PARTITION_COUNTS.map(String),
      ],
      { encoding: "utf8", timeout: 120_000 },
    );
    expect(java.status, java.stderr).toBe(0);

    const javaLines = readFileSync(outFile, "utf8").trim().split("\n");
    expect(javaLines).toHaveLength(keys.length);
    const mismatches: string[] = [];
    javaLines.forEach((line, i) => {
      const javaPartitions = line.split(" ").slice(1).map(Number);
      const key = Buffer.from(hexKeys[i] as string, "hex");
      PARTITION_COUNTS.forEach((n, j) => {
        const mine = kafkajsPartition(key, n);
        if (mine !== javaPartitions[j]) {
          mismatches.push(
            `key ${JSON.stringify(keys[i]).slice(0, 40)} n=${n}: kafkajs ${mine}, java ${javaPartitions[j]}`,
          );
        }
      });
    });
    expect(mismatches).toEqual([]);

    // And on the real broker: the same keys written by kafkajs land where Java's landed.
    const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    await producer.send({
      topic,
      acks: -1,
      messages: hexKeys.map((h) => ({
        key: Buffer.from(h, "hex"),
        value: "kafkajs",
        headers: { producer: "kafkajs" },
      })),
    });
    await producer.disconnect();

    const landed = new Map<string, number>(); // "producer:keyhex" -> partition
    const consumer = kafka.consumer({ groupId: uniqueName("parity-check"), maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        const who = String(message.headers?.producer);
        landed.set(`${who}:${message.key?.toString("hex") ?? ""}`, partition);
      },
    });
    const distinct = new Set(hexKeys).size;
    await waitFor(() => landed.size >= 2 * distinct, {
      timeoutMs: 60_000,
      what: "both producers' records",
    });
    await consumer.disconnect();

    const disagreements = hexKeys.filter(
      (h) => landed.get(`java:${h}`) !== landed.get(`kafkajs:${h}`),
    );
    expect(disagreements).toEqual([]);
    expect(new Set(landed.values()).size).toBe(3);
  });
});
