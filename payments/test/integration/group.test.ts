import type { Pedido } from "@shop/contracts";
import { beforeAll, describe, expect, it } from "vitest";
import type { OrdersApi } from "../../../orders-api/src/server.ts";
import { groupInKafka } from "../../../test/helpers/kafka.ts";
import { http, type ServiceProcess } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";

/**
 * Rules E9 and E10: payments instances as real processes in one consumer group share the
 * 3 partitions; each order is charged by one instance only; partitions move when one leaves.
 */
const shop = testShop("group");
const nomes = shop.names;
const topico = nomes.topics.pedidosCriados;
let api: OrdersApi;
const instances = new Map<string, ServiceProcess>();

interface Saude {
  instancia: string;
  consumidor: { conectado: boolean; particoes: Record<string, number[]> };
}
interface Processado {
  pedidoId: number;
  instancia: string;
}

async function startInstance(name: string) {
  instances.set(
    name,
    await shop.start(name, "payments", { INSTANCIA: name, TEMPO_DECISAO_MS: "150" }),
  );
}

async function assignment(): Promise<Map<string, number[]>> {
  const result = new Map<string, number[]>();
  for (const [name, p] of instances) {
    const saude = (await http<Saude>("GET", `${p.url()}/saude`)).body;
    result.set(name, saude.consumidor?.particoes[topico] ?? []);
  }
  return result;
}

/** Kafka's own view of the group: each member's client id and the partitions it holds. */
const membrosNoKafka = async () => (await groupInKafka(topico, nomes.groups.pagamentos)).membros;

/** Waits until the group has settled: every partition held by exactly one live instance. */
async function settled(): Promise<Map<string, number[]>> {
  return waitFor(
    async () => {
      const a = await assignment();
      const all = [...a.values()].flat().sort();
      return all.join(",") === "0,1,2" ? a : null;
    },
    { timeoutMs: 60_000, intervalMs: 250, what: "the group to settle on partitions 0,1,2" },
  );
}

async function pedir(n: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
      cliente: "Gil",
      item: `item-${i}`,
      quantidade: 1,
      precoUnitario: 10 + i,
    });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  return ids;
}

async function decididos(ids: number[]): Promise<Pedido[]> {
  return waitFor(
    async () => {
      const all = (await http<Pedido[]>("GET", `${api.url}/pedidos?limite=5000`)).body.filter((p) =>
        ids.includes(p.id),
      );
      return (
        all.length === ids.length && all.every((p) => p.status !== "AGUARDANDO_PAGAMENTO") && all
      );
    },
    { timeoutMs: 60_000, intervalMs: 200, what: `${ids.length} orders to be decided` },
  );
}

async function processadosPor(name: string): Promise<number[]> {
  const p = instances.get(name) as ServiceProcess;
  return (await http<Processado[]>("GET", `${p.url()}/pagamentos`)).body.map((x) => x.pedidoId);
}

beforeAll(async () => {
  ({ api } = await shop.ordersApi());
}, 60_000);

describe("Rules E9 and E10: payments instances in the pagamentos group", () => {
  it("When two instances share the group, then every order is charged by exactly one instance and both take part", async () => {
    await Promise.all([startInstance("caixa-1"), startInstance("caixa-2")]);
    const a = await settled();
    expect((a.get("caixa-1") ?? []).length).toBeGreaterThan(0);
    expect((a.get("caixa-2") ?? []).length).toBeGreaterThan(0);

    const ids = await pedir(12);
    const pedidos = await decididos(ids);
    const por = new Set(pedidos.map((p) => p.processadoPor));
    expect(por).toEqual(new Set(["caixa-1", "caixa-2"]));

    const um = await processadosPor("caixa-1");
    const dois = await processadosPor("caixa-2");
    for (const id of ids) {
      expect([um.includes(id), dois.includes(id)].filter(Boolean), `order ${id}`).toHaveLength(1);
    }
  }, 120_000);

  it("When one instance stops, then its partitions move to the other, which processes the orders that remain", async () => {
    await instances.get("caixa-2")?.stop();
    instances.delete("caixa-2");
    const a = await settled();
    expect(a.get("caixa-1")).toEqual([0, 1, 2]);
    // Kafka agrees: one member left in the group, holding the three partitions.
    await waitFor(
      async () => {
        const m = await membrosNoKafka();
        return m.size === 1 && m.get("caixa-1")?.join(",") === "0,1,2";
      },
      { timeoutMs: 30_000, what: "Kafka's group description to show caixa-1 alone with 0,1,2" },
    );

    const ids = await pedir(6);
    const pedidos = await decididos(ids);
    expect(new Set(pedidos.map((p) => p.processadoPor))).toEqual(new Set(["caixa-1"]));
  }, 120_000);

  it("When 4 instances share 3 partitions, then one instance stays idle", async () => {
    await Promise.all(["caixa-2", "caixa-3", "caixa-4"].map(startInstance));
    const a = await waitFor(
      async () => {
        const now = await settled();
        return [...now.values()].every((ps) => ps.length <= 1) && now;
      },
      { timeoutMs: 60_000, intervalMs: 250, what: "one partition per busy instance" },
    );
    const idle = [...a.entries()].filter(([, ps]) => ps.length === 0).map(([n]) => n);
    expect(idle).toHaveLength(1);
    // Kafka agrees: four members, the idle one a member with no partition.
    const noKafka = await waitFor(
      async () => {
        const m = await membrosNoKafka();
        return m.size === 4 && m;
      },
      { timeoutMs: 30_000, what: "four members in Kafka's group description" },
    );
    expect(noKafka.get(idle[0] as string)).toEqual([]);
  }, 120_000);
});
