import type { OutboxState, Pedido } from "@shop/contracts";
import { createTopicsWaiting } from "@shop/kafka";
import { beforeAll, describe, expect, it } from "vitest";
import { testKafka } from "../../../test/helpers/kafka.ts";
import { http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import type { OrdersApi } from "../../src/server.ts";

/**
 * Issue 14: the outbox relay sent its oldest rows in one produce request and retried the
 * same rows forever, so one row Kafka refuses for good stopped every later order. Here
 * pedidos-criados refuses record batches over 400 bytes: an order with long names is
 * refused, a short one fits.
 */
const shop = testShop("outbox-refusal");
const nomes = shop.names;
let api: OrdersApi;

beforeAll(async () => {
  const admin = testKafka().admin();
  await admin.connect();
  await createTopicsWaiting(admin, [
    {
      topic: nomes.topics.pedidosCriados,
      numPartitions: 3,
      replicationFactor: 1,
      configEntries: [{ name: "max.message.bytes", value: "400" }],
    },
  ]);
  await admin.disconnect();
  ({ api } = await shop.ordersApi());
}, 60_000);

const curto = { cliente: "Ana", item: "bola", quantidade: 1, precoUnitario: 1 };
const longo = { cliente: "A".repeat(100), item: "B".repeat(100), quantidade: 1, precoUnitario: 1 };

describe("An outbox row Kafka refuses for good", () => {
  it("When Kafka refuses an order's event for good, then that order answers 500 naming why, its row is set aside in /saude and the metrics, and later orders still answer 201", async () => {
    const recusado = await http<{ erro: string }>("POST", `${api.url}/pedidos`, longo);
    expect(recusado.status).toBe(500);
    expect(recusado.body.erro).toMatch(/refused its event for good/);

    for (let i = 0; i < 3; i++) {
      const ok = await http<Pedido>("POST", `${api.url}/pedidos`, curto);
      expect(ok.status).toBe(201);
    }

    const saude = await http<{ outbox: OutboxState }>("GET", `${api.url}/saude`);
    expect(saude.body.outbox.pendentes).toBe(0);
    expect(saude.body.outbox.postosDeLado).toHaveLength(1);
    expect(saude.body.outbox.postosDeLado[0]?.motivo).toMatch(/larger than the max message size/);

    const metricas = await (await fetch(`${api.url}/metrics`)).text();
    expect(metricas).toMatch(/^shop_outbox_set_aside 1$/m);

    const historico = await http<{ etapas: { etapa: string }[] }>(
      "GET",
      `${api.url}/pedidos/${saude.body.outbox.postosDeLado[0]?.pedidoId}/historico`,
    );
    expect(historico.body.etapas.map((e) => e.etapa)).toContain("evento-posto-de-lado");
  });

  it("When many orders arrive at once after a row was set aside, then every one is answered 201 and nothing stays pending (a batch over the limit goes a row at a time)", async () => {
    const respostas = await Promise.all(
      Array.from({ length: 12 }, () => http<Pedido>("POST", `${api.url}/pedidos`, curto)),
    );
    expect(respostas.map((r) => r.status)).toEqual(Array(12).fill(201));
    await waitFor(
      async () =>
        (await http<{ outbox: OutboxState }>("GET", `${api.url}/saude`)).body.outbox.pendentes ===
        0,
      { what: "no pending row" },
    );
  });
});
