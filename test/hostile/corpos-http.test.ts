import { randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readConfig as brokerOrdersConfig } from "../../broker/orders/src/config.ts";
import { type OrdersService, startOrders } from "../../broker/orders/src/server.ts";
import { readConfig as ordersConfig } from "../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../orders-api/src/server.ts";
import { readConfig as paymentsConfig } from "../../payments/src/config.ts";
import { type PaymentsInstance, startPayments } from "../../payments/src/server.ts";
import { brokerEnv } from "../helpers/broker.ts";
import { createTestVhost, type TestVhost } from "../helpers/rabbit.ts";
import { capturingLogger, http, serviceEnv, tempDb, testPrefix } from "../helpers/shop.ts";

/**
 * Hostile input on every HTTP body of both editions: property-based (fast-check), at
 * least 10,000 generated bodies per endpoint. Never a 5xx; nothing stored for an invalid body.
 */
const RUNS = 10_000;
const PARALLEL = 16;
const prefix = testPrefix("hostil");
let api: OrdersApi;
let syncPayments: PaymentsInstance;
let vhost: TestVhost;
let brokerOrders: OrdersService;
let brokerDb: string;

beforeAll(async () => {
  api = await startOrdersApi(
    ordersConfig(serviceEnv(prefix, { DB_PATH: tempDb("hostil") })),
    capturingLogger("orders-api"),
  );
  syncPayments = await startPayments(
    paymentsConfig(
      serviceEnv(prefix, { MODO: "sincrono", TEMPO_DECISAO_MS: "0", KAFKA_BROKERS: "127.0.0.1:1" }),
    ),
    capturingLogger("payments"),
    () => {},
  );
  vhost = await createTestVhost("hostil");
  const env = brokerEnv(vhost, "broker-orders");
  brokerDb = env.DB_PATH as string;
  brokerOrders = await startOrders(brokerOrdersConfig(env), capturingLogger("broker-orders"));
}, 60_000);

afterAll(async () => {
  await brokerOrders?.stop();
  await vhost?.dispose();
  await syncPayments?.stop();
  await api?.stop();
});

/** Generated values that are sometimes right, mostly wrong in one or many ways. */
const texto = fc.oneof(
  fc.string(),
  fc.constant(""),
  fc.constant("   "),
  fc.string({ unit: "grapheme", maxLength: 30 }),
);
const numero = fc.oneof(
  fc.integer({ min: -5, max: 60 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(0, 0.1, 18.9, 1.999, 1e308, -0, 100.01),
);
const qualquer = fc.oneof(
  texto,
  numero,
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.anything(), { maxLength: 3 }),
  fc.object(),
);
const talvez = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: qualquer });
const corpo = (campos: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        Object.fromEntries(Object.entries(campos).map(([k, v]) => [k, talvez(v)])),
        { requiredKeys: [] },
      ),
    },
    { weight: 1, arbitrary: fc.anything() },
    { weight: 1, arbitrary: fc.string().map((s) => ({ __raw: s })) },
  );

interface Tally {
  byStatus: Map<number, number>;
}

/** Sends RUNS generated bodies, PARALLEL at a time; fails on the first 5xx. */
async function bombardear(url: string, arb: fc.Arbitrary<unknown>): Promise<Tally> {
  const bodies = fc.sample(arb, { numRuns: RUNS, seed: 20261121 });
  const byStatus = new Map<number, number>();
  let next = 0;
  async function worker() {
    while (next < bodies.length) {
      const b = bodies[next++];
      const raw =
        typeof b === "object" && b !== null && "__raw" in b
          ? String((b as { __raw: string }).__raw)
          : (JSON.stringify(b) ?? "null");
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: raw,
      });
      await res.arrayBuffer();
      if (res.status >= 500) throw new Error(`${res.status} for body ${raw.slice(0, 200)}`);
      byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
    }
  }
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  return { byStatus };
}

const contar = (t: Tally, status: number) => t.byStatus.get(status) ?? 0;

describe("Hostile HTTP bodies (fast-check, 10,000 cases per endpoint)", () => {
  it("Event-log POST /pedidos: never a 5xx, and exactly the 201s are stored", async () => {
    const t = await bombardear(
      `${api.url}/pedidos`,
      corpo({ cliente: texto, item: texto, quantidade: numero, precoUnitario: numero }),
    );
    expect(contar(t, 400)).toBeGreaterThan(RUNS / 2);
    const stored = (await http<unknown[]>("GET", `${api.url}/pedidos?limite=5000`)).body.length;
    expect(stored).toBe(contar(t, 201));
  }, 240_000);

  it("Payments POST /pagamentos (synchronous configuration): never a 5xx, and only valid bodies are decided", async () => {
    const t = await bombardear(
      `${syncPayments.url}/pagamentos`,
      corpo({ pedidoId: numero, valor: numero }),
    );
    const decided = (await http<unknown[]>("GET", `${syncPayments.url}/pagamentos`)).body.length;
    expect(decided).toBe(Math.min(1000, contar(t, 200)));
    expect(contar(t, 400)).toBeGreaterThan(RUNS / 2);
  }, 240_000);

  it("Broker POST /pedidos: never a 5xx, and exactly the 201s are stored", async () => {
    const item = fc.record(
      { sku: texto, quantidade: numero, precoUnitario: numero },
      { requiredKeys: [] },
    );
    const t = await bombardear(
      `${brokerOrders.url}/pedidos`,
      corpo({ clienteId: texto, itens: fc.array(talvez(item), { maxLength: 3 }) }),
    );
    const db = new Database(brokerDb, { readonly: true });
    const stored = (db.prepare("SELECT COUNT(*) AS n FROM pedidos").get() as { n: number }).n;
    db.close();
    expect(stored).toBe(contar(t, 201));
  }, 240_000);

  it("Broker POST /pedidos/{id}/itens: never a 5xx, and exactly the 200s add an item", async () => {
    const { body } = await http<{ id: string }>("POST", `${brokerOrders.url}/pedidos`, {
      clienteId: "c",
      itens: [{ sku: "A", quantidade: 1, precoUnitario: 1 }],
    });
    const t = await bombardear(
      `${brokerOrders.url}/pedidos/${body.id}/itens`,
      corpo({ sku: texto, quantidade: numero, precoUnitario: numero }),
    );
    const itens = (
      await http<{ itens: unknown[] }>("GET", `${brokerOrders.url}/pedidos/${body.id}`)
    ).body.itens.length;
    expect(itens).toBe(1 + contar(t, 200));
  }, 240_000);

  it("Broker POST /pedidos/{id}/pagamentos: never a 5xx, and only a valid body creates a payment request", async () => {
    const { body } = await http<{ id: string }>("POST", `${brokerOrders.url}/pedidos`, {
      clienteId: "c",
      itens: [{ sku: "A", quantidade: 1, precoUnitario: 1 }],
    });
    const uuid = fc.oneof(fc.uuid(), fc.constant(randomUUID()), texto);
    const t = await bombardear(
      `${brokerOrders.url}/pedidos/${body.id}/pagamentos`,
      corpo({
        solicitacaoId: uuid,
        cenario: fc.oneof(fc.constantFrom("APROVAR", "RECUSAR"), texto),
      }),
    );
    const db = new Database(brokerDb, { readonly: true });
    const requests = (
      db.prepare("SELECT COUNT(*) AS n FROM solicitacoes WHERE pedido_id = ?").get(body.id) as {
        n: number;
      }
    ).n;
    db.close();
    // The first valid body opens the request (202); later new keys are 409; repeats of it 202.
    expect(requests).toBe(contar(t, 202) > 0 ? 1 : 0);
    expect(contar(t, 400)).toBeGreaterThan(RUNS / 2);
  }, 240_000);
});

describe("Oversized, mistyped and deeply nested bodies", () => {
  const endpoints = () => [
    `${api.url}/pedidos`,
    `${syncPayments.url}/pagamentos`,
    `${brokerOrders.url}/pedidos`,
  ];

  it("When a body is over 1 MB, then 413", async () => {
    const big = JSON.stringify({ cliente: "x".repeat(1_100_000) });
    for (const url of endpoints()) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: big,
      });
      expect(res.status, url).toBe(413);
    }
  });

  it("When the content type is not JSON, then 415", async () => {
    for (const url of endpoints()) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "cliente=Ana",
      });
      expect(res.status, url).toBe(415);
    }
  });

  it("When the JSON is nested 100,000 levels deep, then 400 or 413, never a crash", async () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    const deepObject = `${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`;
    for (const url of endpoints()) {
      for (const body of [deep, deepObject]) {
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        expect([400, 413], url).toContain(res.status);
      }
    }
    expect((await fetch(`${api.url}/pedidos`)).status).toBe(200);
  });
});

describe("Security headers", () => {
  it("When any API answers, then it sets the security headers and hides its framework", async () => {
    for (const url of [
      `${api.url}/pedidos`,
      `${syncPayments.url}/saude`,
      `${brokerOrders.url}/pedidos/x`,
    ]) {
      const res = await fetch(url);
      expect(res.headers.get("x-content-type-options"), url).toBe("nosniff");
      expect(res.headers.get("x-frame-options"), url).toBe("SAMEORIGIN");
      expect(res.headers.get("content-security-policy"), url).toBeTruthy();
      expect(res.headers.get("x-powered-by"), url).toBeNull();
    }
  });
});
