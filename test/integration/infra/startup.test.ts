import { afterAll, describe, expect, it } from "vitest";
import { readConfig as ordersConfig } from "../../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../../orders-api/src/server.ts";
import { readConfig as paymentsConfig } from "../../../payments/src/config.ts";
import { type PaymentsInstance, startPayments } from "../../../payments/src/server.ts";
import { capturingLogger, http, serviceEnv, tempDb, uniquePrefix } from "../../helpers/shop.ts";
import { waitFor } from "../../helpers/wait.ts";

/**
 * Issue 14: a clean start printed error-level lines from kafkajs ("Topic creation
 * errors", "The group is rebalancing") for conditions kafkajs handles. A newcomer reads
 * them as failures. They are info now; real errors stay errors.
 */
const prefix = uniquePrefix("arranque");
const logs = [
  capturingLogger("orders-api"),
  capturingLogger("caixa-1"),
  capturingLogger("caixa-2"),
];
let servicos: [OrdersApi, PaymentsInstance, PaymentsInstance] | undefined;

afterAll(async () => {
  for (const s of servicos ?? []) await s.stop();
});

describe("A clean start", () => {
  it("When the orders API and two payments instances start at once on new topics, then none prints an error-level line", async () => {
    servicos = await Promise.all([
      startOrdersApi(ordersConfig(serviceEnv(prefix, { DB_PATH: tempDb("arranque") })), logs[0]),
      startPayments(
        paymentsConfig(serviceEnv(prefix, { INSTANCIA: "caixa-1" })),
        logs[1],
        () => {},
      ),
      startPayments(
        paymentsConfig(serviceEnv(prefix, { INSTANCIA: "caixa-2" })),
        logs[2],
        () => {},
      ),
    ]);
    const [, p1, p2] = servicos;
    // Settled: the two instances hold the topic's three partitions between them.
    await waitFor(
      async () => {
        let n = 0;
        for (const p of [p1, p2]) {
          const s = (
            await http<{ consumidor: { particoes: Record<string, number[]> } }>(
              "GET",
              `${p.url}/saude`,
            )
          ).body;
          n += Object.values(s.consumidor.particoes).flat().length;
        }
        return n === 3;
      },
      { timeoutMs: 30_000, what: "the group to settle" },
    );
    const linhas = logs.flatMap((l) =>
      l.lines.map((x) => JSON.parse(x) as { level: string; msg: string }),
    );
    expect(linhas.filter((l) => l.level === "error")).toEqual([]);
  }, 60_000);
});
