import { readFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { join } from "node:path";
import { kafkaNames, type Pedido, ResultadoPagamento } from "@shop/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { send } from "../../harness/http.ts";
import { readConfig } from "../../orders-api/src/config.ts";
import { type OrdersApi, startOrdersApi } from "../../orders-api/src/server.ts";
import { testKafka } from "../helpers/kafka.ts";
import { capturingLogger, queryRows, serviceEnv, tempDb, uniquePrefix } from "../helpers/shop.ts";
import { waitFor } from "../helpers/wait.ts";

/**
 * docs/code-tour.md follows two paths file by file. Here they are run, and V8's own call
 * counts (precise coverage, as `node --experimental-test-coverage` reads them) say which
 * of the orders API's files each one entered: those must be the tour's, no more, no fewer.
 * A refactor that moves a step to another file fails this until the tour says so.
 */
const ROOT = join(import.meta.dirname, "../..");
const prefix = uniquePrefix("tour");
const dbPath = tempDb("tour");
const body = { cliente: "Ana", item: "caneca", quantidade: 2, precoUnitario: 18.9 };
const session = new Session();
let api: OrdersApi;

/** Calls since the last look, per function of the shop (file#offset), not counting loads. */
async function callsSinceLast(): Promise<Map<string, number>> {
  const { result } = await session.post("Profiler.takePreciseCoverage");
  const calls = new Map<string, number>();
  for (const script of result) {
    const file = script.url.replace(/^file:\/\//, "").replace(/\?.*$/, "");
    if (!file.startsWith(`${ROOT}/`) || file.includes("/node_modules/")) continue;
    const relative = file.slice(ROOT.length + 1);
    if (relative.startsWith("test/") || relative.startsWith("harness/")) continue;
    for (const f of script.functions) {
      const range = f.ranges[0];
      // A script's top level starts at offset 0: its load, not a call.
      if (range && range.count > 0 && range.startOffset > 0)
        calls.set(`${relative}#${range.startOffset}`, range.count);
    }
  }
  return calls;
}

/**
 * The shop's files with a function that `work` called more often than a longer idle
 * while did (2.5 s: the outbox relay's 1 s poll runs there at least twice, so a poll
 * during `work` is not taken for its path).
 */
async function filesEnteredBy(work: () => Promise<void>): Promise<Set<string>> {
  await callsSinceLast();
  await new Promise((r) => setTimeout(r, 2_500));
  const idle = await callsSinceLast();
  await work();
  const busy = await callsSinceLast();
  const files = new Set<string>();
  for (const [fn, n] of busy) if (n > (idle.get(fn) ?? 0)) files.add(fn.split("#")[0] as string);
  return files;
}

/**
 * The orders API's files entered must be the tour's exactly; the tour's other files
 * (libs/, contracts/) must have been entered.
 */
function expectTour(entered: Set<string>, title: string): void {
  const named = tourFiles(title);
  const ordersApi = (files: Iterable<string>) =>
    [...files].filter((f) => f.startsWith("orders-api/")).sort();
  expect(ordersApi(entered)).toEqual(ordersApi(named));
  for (const f of named) expect(entered, `${f} (named by the tour)`).toContain(f);
}

/** The files a table of the tour names, under the heading that starts with `title`. */
function tourFiles(title: string): string[] {
  const tour = readFileSync(join(ROOT, "docs/code-tour.md"), "utf8");
  const section = tour.slice(tour.indexOf(`## ${title}`)).split("\n## ")[0] as string;
  const files = section
    .split("\n")
    .filter((l) => /^\| \d+ \|/.test(l))
    .map((l) => /\]\(\.\.\/([^)]+)\)/.exec(l)?.[1] as string);
  return [...new Set(files)];
}

beforeAll(async () => {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false });
  api = await startOrdersApi(
    readConfig(serviceEnv(prefix, { DB_PATH: dbPath })),
    capturingLogger("orders-api"),
  );
  // Warm: the first request loads and compiles what the later ones only call.
  await send("POST", `${api.url}/pedidos`, body, { "idempotency-key": `${prefix}warm` });
});

afterAll(async () => {
  await api?.stop();
  await session.post("Profiler.stopPreciseCoverage").catch(() => {});
  session.disconnect();
});

describe("The code tour (docs/code-tour.md), run", () => {
  it("When POST /pedidos runs with and without an Idempotency-Key, then it enters exactly the orders API files its tour names", async () => {
    const entered = await filesEnteredBy(async () => {
      const plain = await send("POST", `${api.url}/pedidos`, body);
      const keyed = await send("POST", `${api.url}/pedidos`, body, {
        "idempotency-key": `${prefix}k`,
      });
      expect([plain.status, keyed.status]).toEqual([201, 201]);
    });
    expectTour(entered, "POST /pedidos");
  });

  it("When a ResultadoPagamento arrives, then until the order row changes it enters exactly the orders API files its tour names", async () => {
    const created = await send<Pedido>("POST", `${api.url}/pedidos`, body);
    const producer = testKafka().producer();
    await producer.connect();
    const status = () =>
      queryRows<Pedido>(dbPath, "SELECT status FROM pedidos WHERE id = ?", created.body.id)[0]
        ?.status;
    try {
      const entered = await filesEnteredBy(async () => {
        await producer.send({
          topic: kafkaNames(prefix).topics.pagamentosResultados,
          messages: [
            {
              key: String(created.body.id),
              value: ResultadoPagamento.encode({
                versao: 1,
                pedidoId: created.body.id,
                status: "APROVADO",
                motivo: null,
                instancia: "tour",
                processadoEm: new Date().toISOString(),
              }),
            },
          ],
        });
        await waitFor(() => status() === "PAGO", { what: "the order row PAGO" });
      });
      expectTour(entered, "A ResultadoPagamento");
    } finally {
      await producer.disconnect();
    }
  });
});
