import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { createKafka } from "@shop/kafka";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shopConfig } from "../../harness/env.ts";
import { ownKafka } from "../../harness/own-kafka.ts";
import { type OwnRabbit, ownRabbit } from "../../harness/own-rabbit.ts";
import { ROOT } from "../../infra/config.ts";
import { makeCertificates, type TestCertificates } from "../helpers/certs.ts";
import {
  capturingLogger,
  http,
  programArgs,
  ServiceProcess,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../helpers/shop.ts";

/**
 * Issue 17: secured connections, as a managed cluster needs. A Kafka broker of the test's
 * own with a SASL_SSL listener (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; SCRAM credentials
 * written at start) and a RabbitMQ node of its own with an amqps:// listener, both with a
 * CA and certificate the test makes with openssl. The services reach them through the
 * settings of docs/configuration.md's table; a wrong password or an untrusted certificate stops a
 * service at start with an error that names the setting to fix, instead of a retry loop.
 */
const kafkaUser = { name: "shop-client", password: `pw-${randomUUID()}` };
let certs: TestCertificates;
const kafka = ownKafka("secure", {
  secure: {
    get keystoreFile() {
      return certs.keystoreFile;
    },
    get keystorePassword() {
      return certs.keystorePassword;
    },
    users: [kafkaUser],
  },
});
let rabbit: OwnRabbit;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  certs = makeCertificates();
  [rabbit] = await Promise.all([
    ownRabbit("secure", {
      tls: { caFile: certs.caFile, certFile: certs.certFile, keyFile: certs.keyFile },
    }),
    kafka.start(),
  ]);
}, 120_000);
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  await kafka.dispose();
  await rabbit?.dispose();
}, 120_000);

/** The Kafka settings of a client of the SASL_SSL listener. */
const kafkaSecure = (extra: Record<string, string> = {}) => ({
  KAFKA_BROKERS: kafka.secureBrokers,
  KAFKA_SSL: "true",
  KAFKA_SSL_CA_FILE: certs.caFile,
  KAFKA_SASL_MECHANISM: "scram-sha-256",
  KAFKA_SASL_USER: kafkaUser.name,
  KAFKA_SASL_PASSWORD: kafkaUser.password,
  ...extra,
});

/** The RabbitMQ settings of a client of the amqps:// listener. */
const rabbitSecure = (extra: Record<string, string> = {}) => {
  const r = shopConfig().rabbit;
  return {
    PORTA: "0",
    HOST: "127.0.0.1",
    DB_PATH: tempDb("secure-orders"),
    BROKER_HOST: "127.0.0.1",
    BROKER_PORT: String(rabbit.tlsPort),
    BROKER_VHOST: "/",
    BROKER_USER: r.user,
    BROKER_PASSWORD: r.password,
    BROKER_TLS: "true",
    BROKER_CA_FILE: certs.caFile,
    ...extra,
  };
};

/** Runs a service that is expected not to start: its exit code and everything it printed. */
function failedStart(dir: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; output: string; ms: number }>((resolve) => {
    const at = Date.now();
    execFile(
      process.execPath,
      programArgs(dir),
      { cwd: join(ROOT, dir), env: { ...process.env, ...env }, timeout: 90_000 },
      (error, stdout, stderr) =>
        resolve({
          code: error ? (typeof error.code === "number" ? error.code : null) : 0,
          output: `${stdout}${stderr}`,
          ms: Date.now() - at,
        }),
    );
  });
}

describe("Secured connections (issue 17)", () => {
  it("When the orders API reaches Kafka over SASL_SSL with SCRAM-SHA-256 and the test's CA, then an order is created and its event acknowledged", async () => {
    const prefix = uniquePrefix("secure");
    const api = await ServiceProcess.start("orders-api", "orders-api", {
      ...serviceEnv(prefix, { DB_PATH: tempDb("secure") }),
      ...kafkaSecure(),
    });
    running.push(api);
    const res = await http<{ id: number; status: string }>("POST", `${api.url()}/pedidos`, {
      cliente: "Ana",
      item: "caneca",
      quantidade: 1,
      precoUnitario: 10,
    });
    // 201, not 500: Kafka acknowledged PedidoCriado through the secured listener.
    expect(res.status).toBe(201);
  }, 90_000);

  it.each(["plain", "scram-sha-256", "scram-sha-512"] as const)(
    "When a client authenticates with %s over TLS, then Kafka lets it in",
    async (mechanism) => {
      const client = createKafka([kafka.secureBrokers], "secure-test", capturingLogger("t"), {
        ssl: { caFile: certs.caFile },
        sasl: { mechanism, username: kafkaUser.name, password: kafkaUser.password },
      });
      const admin = client.admin();
      await admin.connect();
      try {
        expect(Array.isArray(await admin.listTopics())).toBe(true);
      } finally {
        await admin.disconnect();
      }
    },
  );

  it("When the Kafka password is wrong, then the orders API does not start and says which settings to fix", async () => {
    const run = await failedStart("orders-api", {
      ...serviceEnv(uniquePrefix("secure-bad"), { DB_PATH: tempDb("secure-bad") }),
      ...kafkaSecure({ KAFKA_SASL_PASSWORD: `${kafkaUser.password}-wrong` }),
    });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/KAFKA_SASL_PASSWORD/);
  }, 120_000);

  it("When the Kafka broker's certificate is signed by a CA the client does not trust, then the orders API does not start and names KAFKA_SSL_CA_FILE", async () => {
    const run = await failedStart("orders-api", {
      ...serviceEnv(uniquePrefix("secure-ca"), { DB_PATH: tempDb("secure-ca") }),
      ...kafkaSecure({ KAFKA_SSL_CA_FILE: certs.otherCaFile }),
    });
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/KAFKA_SSL_CA_FILE/);
  }, 120_000);

  it("When the broker edition's orders service connects with amqps:// and the test's CA, then a payment request is confirmed by RabbitMQ", async () => {
    const orders = await ServiceProcess.start("broker-orders", "broker/orders", rabbitSecure());
    running.push(orders);
    const created = await http<{ id: string }>("POST", `${orders.url()}/pedidos`, {
      clienteId: "c1",
      itens: [{ sku: "S", quantidade: 1, precoUnitario: 10 }],
    });
    expect(created.status).toBe(201);
    const paid = await http("POST", `${orders.url()}/pedidos/${created.body.id}/pagamentos`, {
      solicitacaoId: randomUUID(),
      cenario: "APROVAR",
    });
    // 202: stored, and its message confirmed by RabbitMQ over TLS.
    expect(paid.status).toBe(202);
  }, 90_000);

  it("When the RabbitMQ password is wrong, then the orders service does not start and names BROKER_PASSWORD", async () => {
    const run = await failedStart(
      "broker/orders",
      rabbitSecure({ BROKER_PASSWORD: `${shopConfig().rabbit.password}-wrong` }),
    );
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/BROKER_PASSWORD/);
  }, 120_000);

  it("When RabbitMQ's certificate is signed by a CA the client does not trust, then the orders service does not start and names BROKER_CA_FILE", async () => {
    const run = await failedStart(
      "broker/orders",
      rabbitSecure({ BROKER_CA_FILE: certs.otherCaFile }),
    );
    expect(run.code, run.output).toBe(1);
    expect(run.output).toMatch(/BROKER_CA_FILE/);
  }, 120_000);
});
