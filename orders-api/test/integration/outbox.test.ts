import { randomUUID } from "node:crypto";
import type { OutboxState, Pedido, Plataforma } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ownKafka } from "../../../harness/own-kafka.ts";
import { readConfig as paymentsConfig } from "../../../payments/src/config.ts";
import { type PaymentsInstance, startPayments } from "../../../payments/src/server.ts";
import {
  capturingLogger,
  http,
  ServiceProcess,
  serviceEnv,
  tempDb,
  uniquePrefix,
} from "../../../test/helpers/shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import { readConfig } from "../../src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../src/server.ts";

/** The outbox (OUTBOX=ligado, the default): nothing is orphaned. A broker of its own. */
const kafka = ownKafka("fault-outbox");
const prefix = uniquePrefix("outbox");
const env = (extra: Record<string, string> = {}) => ({
  ...serviceEnv(prefix, extra),
  KAFKA_BROKERS: kafka.brokers,
});
let payments: PaymentsInstance;

beforeAll(async () => {
  await kafka.start();
  payments = await startPayments(
    paymentsConfig(env({ TEMPO_DECISAO_MS: "0", INSTANCIA: "caixa-outbox" })),
    capturingLogger("payments"),
    () => {},
  );
}, 120_000);

afterAll(async () => {
  await kafka.start();
  await payments?.stop();
  await kafka.dispose();
}, 120_000);

const pedido = { cliente: "Leo", item: "bola", quantidade: 2, precoUnitario: 15 };
const decidido = (url: string, id: number) =>
  waitFor(
    async () => {
      const p = (await http<Pedido>("GET", `${url}/pedidos/${id}`)).body;
      return p.status !== "AGUARDANDO_PAGAMENTO" && p;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `order ${id} to be decided` },
  );

describe("Outbox for the event-log orders API", () => {
  let api: OrdersApi;

  it("When Kafka is up, then 201 comes once this order's event is acknowledged, and it is decided", async () => {
    api = await startOrdersApi(
      readConfig(env({ DB_PATH: tempDb("outbox") })),
      capturingLogger("orders-api"),
    );
    const res = await http<Pedido>("POST", `${api.url}/pedidos`, pedido);
    expect(res.status).toBe(201);
    expect((await decidido(api.url, res.body.id)).status).toBe("PAGO");
    expect(
      (await http<{ outbox: OutboxState }>("GET", `${api.url}/saude`)).body.outbox.pendentes,
    ).toBe(0);
  }, 60_000);

  it("When Kafka is down, then 500 after about 5 s with the order saved and its event pending (visible in /saude and /plataforma); when Kafka is back the relay publishes it with no new request", async () => {
    await kafka.stop();
    const started = Date.now();
    const res = await http<{ erro: string }>("POST", `${api.url}/pedidos`, pedido);
    expect(res.status).toBe(500);
    expect((Date.now() - started) / 1000).toBeGreaterThanOrEqual(4);
    expect((Date.now() - started) / 1000).toBeLessThanOrEqual(7);
    expect(res.body.erro).toMatch(/the outbox will publish the event as soon as Kafka is back/);
    const id = Number((res.body.erro.match(/order (\d+)/) as RegExpMatchArray)[1]);

    const saude = (await http<{ outbox: OutboxState }>("GET", `${api.url}/saude`)).body.outbox;
    expect(saude.pendentes).toBe(1);
    expect(saude.idadeMaisAntigoMs).toBeGreaterThanOrEqual(4000);
    // Issue 56: the panel's endpoint answers without Kafka, with the outbox and why.
    const painel = (await http<Plataforma>("GET", `${api.url}/plataforma`)).body;
    expect(painel.outbox?.pendentes).toBe(1);
    expect(painel.indisponivel).toMatch(/Kafka/);
    expect(painel.topicos).toEqual([]);

    await kafka.start();
    expect((await decidido(api.url, id)).status).toBe("PAGO");
    await waitFor(
      async () =>
        (await http<{ outbox: OutboxState }>("GET", `${api.url}/saude`)).body.outbox.pendentes ===
        0,
    );
    await api.stop();
  }, 120_000);

  it("Issue 14: when a POST /pedidos with an Idempotency-Key answers 500 with Kafka down and the client retries with the same key, then once Kafka is back there is exactly one order and one decision", async () => {
    // Topics and groups of its own: order ids start at 1 in every database.
    const proprio = (extra: Record<string, string>) => ({
      ...env(extra),
      KAFKA_PREFIXO: uniquePrefix("outbox-idem"),
    });
    const envIdem = proprio({ DB_PATH: tempDb("outbox-idempotencia") });
    const retry = await startOrdersApi(readConfig(envIdem), capturingLogger("orders-api-idem"));
    const chave = randomUUID();
    const headers = { "Idempotency-Key": chave };
    try {
      await kafka.stop();
      const primeira = await http<{ erro: string }>(
        "POST",
        `${retry.url}/pedidos`,
        pedido,
        headers,
      );
      expect(primeira.status).toBe(500);
      const id = Number((primeira.body.erro.match(/order (\d+)/) as RegExpMatchArray)[1]);
      // The web form's retry: same key, same body. The first answer again, nothing new.
      const segunda = await http<{ erro: string }>("POST", `${retry.url}/pedidos`, pedido, headers);
      expect(segunda.status).toBe(500);
      expect(segunda.body).toEqual(primeira.body);
      expect(segunda.headers.get("idempotent-replayed")).toBe("true");

      await kafka.start();
      const fresh = await startPayments(
        paymentsConfig({
          ...envIdem,
          TEMPO_DECISAO_MS: "0",
          INSTANCIA: "caixa-outbox-idem",
        }),
        capturingLogger("payments-idem"),
        () => {},
      );
      try {
        expect((await decidido(retry.url, id)).status).toBe("PAGO");
        const terceira = await http("POST", `${retry.url}/pedidos`, pedido, headers);
        expect(terceira.status).toBe(500);
        const todos = (await http<Pedido[]>("GET", `${retry.url}/pedidos`)).body;
        expect(todos.map((p) => p.id)).toEqual([id]);
        // The one payments instance of these topics decided the order once: one charge.
        const decisoes = (
          await http<{ pedidoId: number }[]>("GET", `${fresh.url}/pagamentos`)
        ).body.filter((d) => d.pedidoId === id);
        expect(decisoes).toHaveLength(1);
      } finally {
        await fresh.stop();
      }
    } finally {
      await kafka.start();
      await retry.stop();
    }
  }, 120_000);

  it("When the orders API is killed -9 between its commit and the publish, then after a restart the outbox publishes the event and the order is decided", async () => {
    const dbPath = tempDb("outbox-kill");
    let proc = await ServiceProcess.start("orders-api", "orders-api", env({ DB_PATH: dbPath }));
    await kafka.stop();
    // The request is committed (order + event row) but cannot be published; kill it mid-wait.
    const pending = http<{ erro: string }>("POST", `${proc.url()}/pedidos`, pedido).catch(
      () => null,
    );
    await waitFor(
      async () => (await http<Pedido[]>("GET", `${proc.url()}/pedidos`)).body.length > 0,
      { what: "the commit" },
    );
    const [saved] = (await http<Pedido[]>("GET", `${proc.url()}/pedidos`)).body;
    await proc.kill();
    await pending;

    await kafka.start();
    proc = await ServiceProcess.start("orders-api-2", "orders-api", env({ DB_PATH: dbPath }));
    // What this test proves is the outbox's recovery, so a payments instance that has not
    // lived through this file's earlier outages decides the order (see the note).
    const fresh = await startPayments(
      paymentsConfig(env({ TEMPO_DECISAO_MS: "0", INSTANCIA: "caixa-outbox-2" })),
      capturingLogger("payments-2"),
      () => {},
    );
    try {
      expect((await decidido(proc.url(), saved?.id as number)).status).toBe("PAGO");
    } finally {
      await fresh.stop();
      await proc.stop();
    }
  }, 120_000);
});
