import { kafkaNames, type Pedido, type Processado, pedidoKey } from "@shop/contracts";
import { beforeAll, describe, expect, it } from "vitest";
import { shopConfig } from "../../../harness/env.ts";
import type { OrdersApi } from "../../../orders-api/src/server.ts";
import { committedOffsets, endOffsets, kafkajsPartition } from "../../../test/helpers/kafka.ts";
import { capturingLogger, http, serviceEnv } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";
import { readConfig } from "../../src/config.ts";
import { type PaymentsInstance, startPayments } from "../../src/server.ts";

/**
 * Rule E6: payments reads pedidos-criados on its own thread and spends 3 seconds per record.
 * One instance decides one record at a time, its three partitions taking turns; the group's
 * other instances are what decide in parallel (Rule E9). PARTICOES_EM_PARALELO is the
 * documented way out, for benchmarks.
 */
const shop = testShop("one-at-a-time");
const { prefix } = shop;
let api: OrdersApi;
const running: PaymentsInstance[] = [];
// Instances stopped by stopAll are not stopped twice: what is running when the file ends is.
shop.own({ stop: () => Promise.all(running.splice(0).map((p) => p.stop())) });

/** The spec's 3 s, not a shortened wait: what is measured is the spec's own timing. */
const SPEC_WAIT_MS = 3000;

async function startInstance(instancia: string, extra: Record<string, string> = {}) {
  const p = await startPayments(
    readConfig(serviceEnv(prefix, { INSTANCIA: instancia, ...extra })),
    capturingLogger(`payments ${instancia}`),
    () => {},
  );
  running.push(p);
  return p;
}

/**
 * Stops every instance once the group has committed all it read: the next instances then
 * start after the orders already decided, not with a re-read of them.
 */
async function stopAll() {
  const brokers = shopConfig().kafka.brokers.join(",");
  const { groups, topics } = kafkaNames(prefix);
  await waitFor(
    async () => {
      const ends = await endOffsets(brokers, topics.pedidosCriados);
      const done = await committedOffsets(brokers, groups.pagamentos, topics.pedidosCriados);
      return [...ends].every(([p, end]) => end === 0 || done.get(p) === end);
    },
    { timeoutMs: 30_000, intervalMs: 250, what: "the pagamentos group to commit what it read" },
  );
  await Promise.all(running.splice(0).map((p) => p.stop()));
}

/** Orders created until each of the 3 partitions has one: the first order of each. */
async function onePerPartition(): Promise<Map<number, number>> {
  const first = new Map<number, number>();
  while (first.size < 3) {
    const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
      cliente: "Rui",
      item: "caneca",
      quantidade: 1,
      precoUnitario: 12.5,
    });
    expect(res.status).toBe(201);
    const partition = kafkajsPartition(pedidoKey(res.body.id));
    if (!first.has(partition)) first.set(partition, res.body.id);
  }
  return first;
}

/** Each instance's decisions of these orders, once all are decided. */
async function decisionsOf(ids: number[], instances: PaymentsInstance[]): Promise<Processado[]> {
  return waitFor(
    async () => {
      const all = (
        await Promise.all(
          instances.map(async (p) => (await http<Processado[]>("GET", `${p.url}/pagamentos`)).body),
        )
      ).flat();
      const mine = all.filter((d) => ids.includes(d.pedidoId));
      return mine.length === ids.length && mine;
    },
    { timeoutMs: 60_000, intervalMs: 200, what: `${ids.length} decisions` },
  );
}

const times = (ds: Processado[]) => ds.map((d) => Date.parse(d.processadoEm)).sort((a, b) => a - b);

/** Every instance holds its share of pedidos-criados' partitions: the group has settled. */
async function settled(instances: PaymentsInstance[]) {
  const share = 3 / instances.length;
  await waitFor(
    async () => {
      const held = await Promise.all(
        instances.map(
          async (p) =>
            Object.values(
              (
                await http<{ consumidor: { particoes: Record<string, number[]> } }>(
                  "GET",
                  `${p.url}/saude`,
                )
              ).body.consumidor.particoes,
            ).flat().length,
        ),
      );
      return held.every((n) => n === share);
    },
    { timeoutMs: 60_000, intervalMs: 250, what: `${share} partition(s) per instance` },
  );
}

beforeAll(async () => {
  ({ api } = await shop.ordersApi());
}, 60_000);

describe("Rule E6: one payments instance decides one record at a time, 3 s each", () => {
  it("When one instance (the default setting) has orders waiting on all three partitions, then its decisions are at least 3 s apart", async () => {
    const orders = await onePerPartition();
    const caixa = await startInstance("caixa-1");
    // Every order created, the extra ones too: the instance decides each in turn.
    const ids = Array.from({ length: Math.max(...orders.values()) }, (_, i) => i + 1);
    const decided = await decisionsOf(ids, [caixa]);
    expect(new Set(decided.map((d) => d.particao))).toEqual(new Set([0, 1, 2]));
    const t = times(decided);
    for (let i = 1; i < t.length; i++) {
      expect(
        (t[i] as number) - (t[i - 1] as number),
        `gap before decision ${i + 1}`,
      ).toBeGreaterThanOrEqual(SPEC_WAIT_MS - 5);
    }
    await stopAll();
  }, 120_000);

  it("When PARTICOES_EM_PARALELO=3, then one instance decides its three partitions side by side", async () => {
    // Waiting before the instance starts, so that one fetch brings the three partitions: the
    // next fetch from a broker waits until every batch of the last one is handled.
    const orders = await onePerPartition();
    const caixa = await startInstance("caixa-1", { PARTICOES_EM_PARALELO: "3" });
    const ids = Array.from(
      { length: Math.max(...orders.values()) - Math.min(...orders.values()) + 1 },
      (_, i) => Math.min(...orders.values()) + i,
    );
    const firsts = [...orders.values()];
    const t = times((await decisionsOf(ids, [caixa])).filter((d) => firsts.includes(d.pedidoId)));
    expect((t[2] as number) - (t[0] as number)).toBeLessThan(SPEC_WAIT_MS / 2);
    await stopAll();
  }, 120_000);

  it("Rule E9: when three instances (the default setting) share the group, then the first orders of the three partitions are decided in parallel, one by each", async () => {
    const three = await Promise.all(["caixa-1", "caixa-2", "caixa-3"].map((n) => startInstance(n)));
    await settled(three);
    const orders = await onePerPartition();
    const decided = await decisionsOf([...orders.values()], three);
    expect(new Set(decided.map((d) => d.instancia))).toEqual(
      new Set(["caixa-1", "caixa-2", "caixa-3"]),
    );
    const t = times(decided);
    expect((t[2] as number) - (t[0] as number)).toBeLessThan(SPEC_WAIT_MS / 2);
  }, 120_000);
});
