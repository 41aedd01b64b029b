import { afterAll, beforeAll, describe, it } from "vitest";
import { ownKafka } from "../helpers/own-kafka.ts";
import { ServiceProcess, serviceEnv, tempDb, testPrefix } from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";
import { expectConsistent, streamOfOrders } from "./harness.ts";

/**
 * Fault injection on the event-log edition: real processes, a real Kafka broker of this
 * file's own (so that it can be killed), a stream of orders while the fault happens.
 */
const kafka = ownKafka("faults");
const running: ServiceProcess[] = [];

beforeAll(async () => {
  await kafka.start();
}, 120_000);
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  await kafka.dispose();
}, 120_000);

function shop(name: string) {
  const prefix = testPrefix(name);
  const dbPath = tempDb(name);
  const env = (extra: Record<string, string> = {}) => ({
    ...serviceEnv(prefix, extra),
    KAFKA_BROKERS: kafka.brokers,
  });
  const start = async (
    what: "orders-api" | "payments",
    label: string,
    extra: Record<string, string> = {},
  ) => {
    const p = await ServiceProcess.start(
      label,
      what,
      env(what === "orders-api" ? { DB_PATH: dbPath, ...extra } : extra),
    );
    running.push(p);
    return p;
  };
  const payments = (instancia: string) =>
    start("payments", instancia, { INSTANCIA: instancia, TEMPO_DECISAO_MS: "100" });
  /** The end-of-scenario checks, against the API that runs last. */
  const consistente = (api: ServiceProcess, stream: ReturnType<typeof streamOfOrders>) =>
    expectConsistent({
      apiUrl: api.url(),
      stream,
      ordersDb: dbPath,
      kafkaBrokers: kafka.brokers,
      prefix,
    });
  return { start, payments, consistente };
}

describe("Fault injection: event-log edition", () => {
  it("When a payments instance is killed -9 mid-stream with two running, then every order is decided once and analytics agrees", async () => {
    const s = shop("f-kill-payments");
    const api = await s.start("orders-api", "orders-api");
    const [one] = await Promise.all([s.payments("caixa-1"), s.payments("caixa-2")]);
    const stream = streamOfOrders(() => api.url(), 60);
    await waitFor(() => stream.created.length >= 15);
    await one?.kill();
    await stream.done;
    await s.consistente(api, stream);
  }, 240_000);

  it("When the Kafka broker is killed -9 and restarted mid-stream, then nothing is lost: the outbox publishes what waited", async () => {
    const s = shop("f-kill-kafka");
    const api = await s.start("orders-api", "orders-api");
    await s.payments("caixa-1");
    const stream = streamOfOrders(() => api.url(), 50, 4, 100);
    await waitFor(() => stream.created.length >= 10);
    await kafka.kill();
    await waitFor(() => stream.unconfirmed.length >= 2, {
      timeoutMs: 30_000,
      what: "orders placed while Kafka is down",
    });
    await kafka.start();
    await stream.done;
    await s.consistente(api, stream);
  }, 240_000);

  it("When the orders API is killed -9 between its commit and the publish, then after a restart the outbox recovers every order", async () => {
    const s = shop("f-kill-api");
    let api = await s.start("orders-api", "orders-api");
    await s.payments("caixa-1");
    // Kafka away: orders are committed with their events, none can be published.
    await kafka.stop();
    const stream = streamOfOrders(() => api.url(), 12, 4, 0);
    await waitFor(async () => {
      const res = await fetch(`${api.url()}/saude`);
      return ((await res.json()) as { outbox: { pendentes: number } }).outbox.pendentes >= 4;
    });
    await api.kill();
    await stream.done;
    await kafka.start();
    api = await s.start("orders-api", "orders-api-2");
    await s.consistente(api, stream);
  }, 240_000);

  it("When every service gets SIGTERM under load, then in-flight work finishes, and after a restart nothing is lost or doubled", async () => {
    const s = shop("f-sigterm");
    let api = await s.start("orders-api", "orders-api");
    let payments = await s.payments("caixa-1");
    const stream = streamOfOrders(() => api.url(), 40, 4, 20);
    await waitFor(() => stream.created.length >= 15);
    const codes = await Promise.all([api.stop("SIGTERM"), payments.stop("SIGTERM")]);
    for (const code of codes)
      if (code !== 0) throw new Error(`a service exited with ${code} on SIGTERM`);
    api = await s.start("orders-api", "orders-api-2");
    payments = await s.payments("caixa-1");
    await stream.done;
    await s.consistente(api, stream);
  }, 240_000);
});
