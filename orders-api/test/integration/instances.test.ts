import { kafkaNames, type Pedido } from "@shop/contracts";
import type { Admin, Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshStore, freshOrdersStore } from "../../../harness/orders-store.ts";
import { aResultado } from "../../../test/helpers/fixtures.ts";
import { testKafka } from "../../../test/helpers/kafka.ts";
import { capturingLogger, http, serviceEnv, uniquePrefix } from "../../../test/helpers/shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import { readConfig } from "../../src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../src/server.ts";

/**
 * Issue 37: two orders API instances on one PostgreSQL database (the `postgres` project
 * only: two SQLite files would be two shops). What one writes the other reads; a key is
 * one order whichever instance each request reaches; each order's PedidoCriado is
 * written to Kafka once although both relays run; the results' partitions are split
 * between the two members of the pedidos-api group.
 */
const prefix = uniquePrefix("instancias");
const names = kafkaNames(prefix);
const body = { cliente: "Ana", item: "caneca", quantidade: 1, precoUnitario: 18.9 };
let db: FreshStore;
let apis: OrdersApi[] = [];
let admin: Admin;
let producer: Producer;

beforeAll(async () => {
  db = await freshOrdersStore("instancias");
  for (const name of ["1", "2"])
    apis.push(
      await startOrdersApi(
        readConfig(serviceEnv(prefix, { ...db.env, INSTANCIA: name })),
        capturingLogger(`orders-api-${name}`),
      ),
    );
  const kafka = testKafka();
  admin = kafka.admin();
  producer = kafka.producer();
  await Promise.all([admin.connect(), producer.connect()]);
}, 120_000);

afterAll(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
  for (const api of apis) await api.stop();
  apis = [];
  await db?.drop();
});

/**
 * Rounds the relay of instance `name` finished, from GET /metrics (both instances run in this
 * process and share its registry; each counts under its own label).
 */
async function relayRounds(name: string): Promise<number> {
  const text = await (await fetch(`${apis[0]?.url}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`shop_outbox_relay_rounds_total{instancia="orders-api-${name}"}`));
  return Number(line?.split(" ")[1] ?? 0);
}

const post = (api: OrdersApi, key?: string) =>
  http<Pedido & { erro?: string }>(
    "POST",
    `${api.url}/pedidos`,
    body,
    key ? { "Idempotency-Key": key } : {},
  );
const [a, b] = [() => apis[0] as OrdersApi, () => apis[1] as OrdersApi];

/** Records written to the PedidoCriado topic: the sum of its partitions' end offsets. */
async function recordsWritten(): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(names.topics.pedidosCriados);
  return offsets.reduce((sum, p) => sum + Number(p.high), 0);
}

describe("Two orders API instances on one PostgreSQL", () => {
  it("When orders go to both instances, then each reads the other's, and each event is written to Kafka once", async () => {
    const before = await recordsWritten();
    const created: Pedido[] = [];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => post(i % 2 === 0 ? a() : b())),
    );
    for (const r of answers) {
      expect(r.status).toBe(201);
      created.push(r.body);
    }
    for (const p of created.slice(0, 4)) {
      expect((await http<Pedido>("GET", `${a().url}/pedidos/${p.id}`)).body).toEqual(p);
      expect((await http<Pedido>("GET", `${b().url}/pedidos/${p.id}`)).body).toEqual(p);
    }
    expect(new Set(created.map((p) => p.id)).size).toBe(20);
    // Two more rounds of each relay (its rounds counted in /metrics), and still one record each.
    const [ra, rb] = [await relayRounds("1"), await relayRounds("2")];
    await waitFor(
      async () => (await relayRounds("1")) >= ra + 2 && (await relayRounds("2")) >= rb + 2,
      {
        what: "two more rounds of each relay",
      },
    );
    expect(await recordsWritten()).toBe(before + 20);
    expect(await db.count("SELECT COUNT(*) AS n FROM outbox WHERE enviado_em IS NULL")).toBe(0);
  });

  it("When one Idempotency-Key reaches both instances at once, then there is one order, and every answer is its 201 or a 409", async () => {
    const key = `race-${Date.now()}`;
    const before = await db.count("SELECT COUNT(*) AS n FROM pedidos");
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post(i % 2 === 0 ? a() : b(), key)),
    );
    expect(await db.count("SELECT COUNT(*) AS n FROM pedidos")).toBe(before + 1);
    const ids = new Set(answers.filter((r) => r.status === 201).map((r) => r.body.id));
    expect(ids.size).toBe(1);
    for (const r of answers) expect([201, 409]).toContain(r.status);
    const again = await post(b(), key);
    expect(again.status).toBe(201);
    expect(ids.has(again.body.id)).toBe(true);
  });

  it("When results arrive, then the pedidos-api group has both instances as members, each with result partitions, and every order is decided once", async () => {
    await waitFor(
      async () => {
        const [group] = (await admin.describeGroups([names.groups.pedidosApi])).groups;
        return group?.state === "Stable" && group.members.length === 2;
      },
      { what: "both instances in the pedidos-api group", timeoutMs: 30_000 },
    );
    const owners = apis.map(
      (api) => api.consumer?.status().partitions[names.topics.pagamentosResultados] ?? [],
    );
    expect(owners.every((o) => o.length > 0)).toBe(true);
    expect(owners.flat().sort()).toEqual([0, 1, 2]);

    const orders = await Promise.all(Array.from({ length: 6 }, (_, i) => post(i % 2 ? a() : b())));
    for (const { body: p } of orders) {
      const value = JSON.stringify(aResultado({ pedidoId: p.id, instancia: "caixa-t" }));
      // Twice: a repeated result changes nothing, whichever instance reads it.
      await producer.send({
        topic: names.topics.pagamentosResultados,
        messages: [
          { key: String(p.id), value },
          { key: String(p.id), value },
        ],
      });
    }
    for (const { body: p } of orders)
      await waitFor(
        async () =>
          (await http<Pedido>("GET", `${a().url}/pedidos/${p.id}`)).body.status === "PAGO",
        {
          what: `order ${p.id} PAGO`,
        },
      );
    const ids = orders.map((o) => o.body.id);
    const applied = await db.count(
      `SELECT COUNT(*) AS n FROM historico WHERE etapa = 'resultado-aplicado' AND pedido_id IN (${ids.map(() => "?").join(",")})`,
      ...ids,
    );
    expect(applied).toBe(6);
  });
});
