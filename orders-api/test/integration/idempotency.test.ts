import { randomUUID } from "node:crypto";
import type { Pedido } from "@shop/contracts";
import { beforeAll, describe, expect, it } from "vitest";
import type { FreshStore } from "../../../harness/orders-store.ts";
import { http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import type { OrdersApi } from "../../src/server.ts";

/**
 * Issue 14: Idempotency-Key on POST /pedidos (IETF httpapi draft, as Stripe uses it).
 * The Kafka-down retry (a 500, then the same key again) is in outbox.test.ts, which has
 * a broker of its own to stop.
 */
const shop = testShop("idempotency");
let db: FreshStore;
let api: OrdersApi;

beforeAll(async () => {
  ({ api, db } = await shop.ordersApi());
}, 60_000);

const pedido = { cliente: "Ana", item: "caneca", quantidade: 2, precoUnitario: 18.9 };
const pedidos = () => db.count("SELECT COUNT(*) AS n FROM pedidos");
const postar = (body: unknown, chave?: string) =>
  http<Pedido & { erro?: string }>(
    "POST",
    `${api.url}/pedidos`,
    body,
    chave === undefined ? {} : { "Idempotency-Key": chave },
  );

describe("Idempotency-Key on POST /pedidos", () => {
  it("When the same key comes again with the same body, then the first answer comes back (status and body) and nothing is created", async () => {
    const chave = randomUUID();
    const antes = await pedidos();
    const primeira = await postar(pedido, chave);
    expect(primeira.status).toBe(201);
    expect(primeira.headers.get("idempotent-replayed")).toBeNull();
    const segunda = await postar(pedido, chave);
    expect(segunda.status).toBe(201);
    expect(segunda.body).toEqual(primeira.body);
    expect(segunda.headers.get("idempotent-replayed")).toBe("true");
    expect(await pedidos()).toBe(antes + 1);
  });

  it("When the same key comes with another body, then 422 and nothing is created", async () => {
    const chave = randomUUID();
    expect((await postar(pedido, chave)).status).toBe(201);
    const antes = await pedidos();
    const outra = await postar({ ...pedido, quantidade: 3 }, chave);
    expect(outra.status).toBe(422);
    expect(outra.body.erro).toMatch(/different body/);
    expect(await pedidos()).toBe(antes);
  });

  it("When many requests with one key arrive at once, then exactly one order is created and every answer is its 201 or a 409", async () => {
    const chave = randomUUID();
    const antes = await pedidos();
    const respostas = await Promise.all(Array.from({ length: 8 }, () => postar(pedido, chave)));
    expect(await pedidos()).toBe(antes + 1);
    const criados = respostas.filter((r) => r.status === 201);
    expect(criados.length).toBeGreaterThanOrEqual(1);
    expect(new Set(criados.map((r) => r.body.id)).size).toBe(1);
    for (const r of respostas) expect([201, 409]).toContain(r.status);
  });

  it("When the key is not 1 to 255 visible ASCII characters, then 400 naming it, and nothing is created", async () => {
    const antes = await pedidos();
    for (const chave of ["x".repeat(256), "com espaco", "a\tb"]) {
      const r = await fetch(`${api.url}/pedidos`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": chave },
        body: JSON.stringify(pedido),
      });
      expect(r.status, chave).toBe(400);
      expect(Object.keys(((await r.json()) as { campos: object }).campos)).toEqual([
        "idempotency-key",
      ]);
    }
    expect(await pedidos()).toBe(antes);
  });

  it("When no key is sent, then every request creates an order, as before", async () => {
    const antes = await pedidos();
    await postar(pedido);
    await postar(pedido);
    expect(await pedidos()).toBe(antes + 2);
  });
});
