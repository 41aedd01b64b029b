import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { shopConfig, uniqueName } from "../../../harness/env.ts";
import { ownKafka } from "../../../harness/own-kafka.ts";
import { kafkaSettings, ROOT, readInfraConfig } from "../../../infra/config.ts";
import {
  KAFKA_CLASSPATH,
  KAFKA_LIB,
  KAFKA_LOG4J,
  KAFKA_VERSION,
  quorumProperty,
} from "../../../infra/kafka/kafka.ts";
import { createTopic, testKafka, waitForConsumerToJoinGroup } from "../../helpers/kafka.ts";
import { waitFor } from "../../helpers/wait.ts";

describe("The real Kafka broker started by infra/", () => {
  it("When a 3-partition topic gets keyed records, then a group consumes them all, each key on one partition", async () => {
    const kafka = testKafka();
    const topic = uniqueName("harness");
    await createTopic(kafka, topic, 3);

    const admin = kafka.admin();
    await admin.connect();
    const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    expect(meta?.partitions).toHaveLength(3);
    await admin.disconnect();

    const producer = kafka.producer();
    await producer.connect();
    const messages = Array.from({ length: 30 }, (_, i) => ({
      key: String(i % 10),
      value: `v${i}`,
    }));
    await producer.send({ topic, acks: -1, messages });
    await producer.disconnect();

    const consumer = kafka.consumer({ groupId: uniqueName("harness-group"), maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const joined = waitForConsumerToJoinGroup(consumer);
    const seen: { key: string; value: string; partition: number }[] = [];
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        seen.push({ key: String(message.key), value: String(message.value), partition });
      },
    });
    await joined;
    await waitFor(() => seen.length === 30, { what: "30 records" });
    await consumer.disconnect();

    expect(seen.map((s) => s.value).sort()).toEqual(messages.map((m) => m.value).sort());
    const partitionsByKey = new Map<string, Set<number>>();
    for (const s of seen)
      partitionsByKey.set(s.key, (partitionsByKey.get(s.key) ?? new Set()).add(s.partition));
    for (const partitions of partitionsByKey.values()) expect(partitions.size).toBe(1);
    // Within a key, records arrive in write order.
    const forKey0 = seen.filter((s) => s.key === "0").map((s) => s.value);
    expect(forKey0).toEqual(["v0", "v10", "v20"]);
  });
});

describe("Kafka's Java tools for the benchmarks (issue 14)", () => {
  it("When a checkout has no Kafka jars (its Kafka came from Docker, say), then running a tool fetches them first and the tool runs", async () => {
    const jars = mkdtempSync(join(tmpdir(), "kafka-jars-"));
    const topic = uniqueName("ferramenta");
    await createTopic(testKafka(), topic, 1);
    const args = [
      "--topic",
      topic,
      "--num-records",
      "10",
      "--record-size",
      "10",
      "--throughput",
      "-1",
      "--producer-props",
      `bootstrap.servers=${shopConfig().kafka.brokers.join(",")}`,
      "acks=all",
    ];
    const script = `import { runKafkaTool } from ${JSON.stringify(join(ROOT, "infra/kafka/kafka.ts"))};
      const r = runKafkaTool("org.apache.kafka.tools.ProducerPerformance", ${JSON.stringify(args)});
      process.stdout.write(r.stdout + r.stderr); process.exitCode = r.status ?? 1;`;
    const r = spawnSync(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", script],
      {
        cwd: ROOT,
        env: { ...process.env, KAFKA_JARS_DIR: jars },
        encoding: "utf8",
        timeout: 240_000,
      },
    );
    expect(r.stdout).toMatch(/10 records sent/);
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(jars).some((f) => /^kafka-tools-.*\.jar$/.test(f))).toBe(true);
    rmSync(jars, { recursive: true, force: true });
  }, 240_000);
});

describe("Apache Kafka 4 and its KRaft quorum (issue 32)", () => {
  it("When infra formats a new node, then it runs the jars of the version pom.xml names, as a dynamic quorum whose voter has a directory id", async () => {
    expect(KAFKA_VERSION).toMatch(/^4\.\d+\.\d+$/);
    expect(readdirSync(KAFKA_LIB)).toContain(`kafka_2.13-${KAFKA_VERSION}.jar`);
    expect(readdirSync(KAFKA_LIB).filter((f) => /^kafka_2\.13-/.test(f))).toHaveLength(1);
    const kafka = ownKafka("quorum");
    try {
      await kafka.start();
      const quorum = spawnSync(
        "java",
        [
          KAFKA_LOG4J,
          "-cp",
          KAFKA_CLASSPATH,
          "org.apache.kafka.tools.MetadataQuorumCommand",
          "--bootstrap-server",
          kafka.brokers,
          "describe",
          "--status",
        ],
        { encoding: "utf8", timeout: 60_000 },
      );
      expect(quorum.status, quorum.stderr).toBe(0);
      const voters = JSON.parse(quorum.stdout.match(/CurrentVoters:\s+(\[.*\])/)?.[1] ?? "[]") as {
        id: number;
        directoryId: string;
      }[];
      expect(voters.map((v) => v.id)).toEqual([1]);
      // A static quorum's voters have none (the zero id); a dynamic one's, a real one.
      expect(voters[0]?.directoryId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(voters[0]?.directoryId).not.toBe("AAAAAAAAAAAAAAAAAAAAAA");
    } finally {
      await kafka.dispose();
    }
  }, 120_000);

  it("When a node's storage was formatted before as a static quorum (Kafka 3.9), then it keeps controller.quorum.voters; a new or dynamic one gets the bootstrap servers", () => {
    const dir = mkdtempSync(join(tmpdir(), "quorum-"));
    try {
      const p = { dir, data: join(dir, "data") } as Parameters<typeof quorumProperty>[0];
      const voters = "1@127.0.0.1:9093,2@127.0.0.1:9095";
      const dynamic = "controller.quorum.bootstrap.servers=127.0.0.1:9093,127.0.0.1:9095";
      expect(quorumProperty(p, voters)).toBe(dynamic);
      mkdirSync(p.data);
      writeFileSync(join(p.data, "meta.properties"), "version=1\n");
      expect(quorumProperty(p, voters)).toBe(`controller.quorum.voters=${voters}`);
      writeFileSync(join(dir, "dynamic-quorum"), "--standalone\n");
      expect(quorumProperty(p, voters)).toBe(dynamic);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("Kafka cluster mode settings (KAFKA_NODES)", () => {
  it("When KAFKA_NODES is 3 and KAFKA_BROKERS names one address, then the cluster's nodes are on p, p+2, p+4 with controllers on p+1, p+3, p+5, and the services get all three", () => {
    const k = kafkaSettings("127.0.0.1:9092", 9093, 3);
    expect(k.brokers).toEqual(["127.0.0.1:9092", "127.0.0.1:9094", "127.0.0.1:9096"]);
    expect(k.cluster?.nodes).toEqual([
      { port: 9092, controllerPort: 9093 },
      { port: 9094, controllerPort: 9095 },
      { port: 9096, controllerPort: 9097 },
    ]);
  });

  it("When KAFKA_BROKERS lists three addresses, then those are the nodes; with KAFKA_NODES=1 there is no cluster, and any other count is refused", () => {
    const k = kafkaSettings("127.0.0.1:19092,127.0.0.1:19192,127.0.0.1:19292", 9093, 3);
    expect(k.cluster?.nodes.map((n) => n.port)).toEqual([19092, 19192, 19292]);
    expect(kafkaSettings("127.0.0.1:9092", 9093, 1).cluster).toBeNull();
    expect(() =>
      readInfraConfig({
        KAFKA_NODES: "2",
        BROKER_USER: "u",
        BROKER_PASSWORD: "p",
        BROKER_ADMIN_USER: "a",
        BROKER_ADMIN_PASSWORD: "b",
      }),
    ).toThrow(/KAFKA_NODES/);
  });
});
