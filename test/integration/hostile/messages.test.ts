import { randomBytes } from "node:crypto";
import {
  ERROR_QUEUES,
  EXCHANGES,
  kafkaNames,
  pedidoTopics,
  REPLICATION_FACTOR,
  ROUTING_KEYS,
} from "@shop/contracts";
import { ensureTopics } from "@shop/kafka";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVhost, type ShopVhost } from "../../../harness/vhost.ts";
import { brokerEnv, publishRaw, readyCount } from "../../helpers/broker.ts";
import { testKafka } from "../../helpers/kafka.ts";
import { http, ServiceProcess, serviceEnv, tempDb, uniquePrefix } from "../../helpers/shop.ts";
import { waitFor } from "../../helpers/wait.ts";

/** Random bytes and wrong-shape JSON published straight to every topic and queue. */
const WRONG_SHAPES = [
  "null",
  "[]",
  '"text"',
  "42",
  '{"versao": 1}',
  '{"versao": 2, "pedidoId": 1}',
  '{"versao": 1, "pedidoId": -1, "status": "APROVADO"}',
  '{"versao": 1, "solicitacaoId": "x", "pedidoId": "y", "valor": 1, "cenario": "APROVAR"}',
];
const hostis = (n: number): Buffer[] => [
  ...WRONG_SHAPES.map((s) => Buffer.from(s)),
  ...Array.from({ length: n - WRONG_SHAPES.length }, () =>
    randomBytes(1 + Math.floor(Math.random() * 200)),
  ),
];

const processes: ServiceProcess[] = [];
const alive = () =>
  processes.every((p) => p.child.exitCode === null && p.child.signalCode === null);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
});

describe("Hostile records on every Kafka topic", () => {
  const prefix = uniquePrefix("hostil-kafka");
  const nomes = kafkaNames(prefix);
  let orders: ServiceProcess;

  beforeAll(async () => {
    await ensureTopics(testKafka(), pedidoTopics(nomes), REPLICATION_FACTOR);
    orders = await ServiceProcess.start(
      "orders-api",
      "orders-api",
      serviceEnv(prefix, { DB_PATH: tempDb("hk") }),
    );
    const payments = await ServiceProcess.start(
      "payments",
      "payments",
      serviceEnv(prefix, { TEMPO_DECISAO_MS: "0" }),
    );
    processes.push(orders, payments);
  }, 60_000);

  it("When 100 random or wrong-shape records hit each topic, then all 200 land in the dead-letter topics, no process exits, and a valid order is still decided", async () => {
    const kafka = testKafka();
    const producer = kafka.producer();
    await producer.connect();
    for (const topic of [nomes.topics.pedidosCriados, nomes.topics.pagamentosResultados]) {
      await producer.send({
        topic,
        acks: -1,
        messages: hostis(100).map((value, i) => ({ key: `k${i}`, value })),
      });
    }
    await producer.disconnect();

    const admin = kafka.admin();
    await admin.connect();
    const dead = async (topic: string) =>
      (await admin.fetchTopicOffsets(topic)).reduce((s, o) => s + Number(o.high), 0);
    await waitFor(
      async () =>
        (await dead(nomes.dlq.pedidosCriados)) === 100 &&
        (await dead(nomes.dlq.pagamentosResultados)) === 100,
      {
        timeoutMs: 60_000,
        intervalMs: 500,
        what: "200 dead letters",
      },
    );
    await admin.disconnect();
    expect(alive()).toBe(true);

    const res = await http<{ id: number }>("POST", `${orders.url()}/pedidos`, {
      cliente: "a",
      item: "b",
      quantidade: 1,
      precoUnitario: 1,
    });
    await waitFor(
      async () =>
        (await http<{ status: string }>("GET", `${orders.url()}/pedidos/${res.body.id}`)).body
          .status === "PAGO",
    );
  }, 120_000);
});

describe("Hostile messages on every RabbitMQ queue", () => {
  let vhost: ShopVhost;
  beforeAll(async () => {
    vhost = await createVhost("hostil-amqp");
    const orders = await ServiceProcess.start(
      "broker-orders",
      "broker/orders",
      brokerEnv(vhost, "ho"),
    );
    const payments = await ServiceProcess.start(
      "broker-payments",
      "broker/payments",
      brokerEnv(vhost, "hp"),
    );
    processes.push(orders, payments);
  }, 60_000);
  afterAll(async () => {
    await vhost?.dispose();
  });

  it("When 12 random or wrong-shape messages hit each queue, then each lands in its .erros queue after 3 attempts and no process exits", async () => {
    for (const body of hostis(12)) {
      await publishRaw(vhost, EXCHANGES.commands, ROUTING_KEYS.solicitar, body.toString("latin1"));
      await publishRaw(vhost, EXCHANGES.events, ROUTING_KEYS.resultado, body.toString("latin1"));
    }
    await waitFor(
      async () =>
        (await readyCount(vhost, ERROR_QUEUES.solicitacoes)) === 12 &&
        (await readyCount(vhost, ERROR_QUEUES.resultados)) === 12,
      { timeoutMs: 90_000, intervalMs: 500, what: "24 messages in the .erros queues" },
    );
    expect(alive()).toBe(true);
  }, 120_000);
});
