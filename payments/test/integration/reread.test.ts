import type { Pedido } from "@shop/contracts";
import { beforeAll, describe, expect, it } from "vitest";
import type { OrdersApi } from "../../../orders-api/src/server.ts";
import { capturingLogger, http } from "../../../test/helpers/shop.ts";
import { testShop } from "../../../test/helpers/test-shop.ts";
import { waitFor } from "../../../test/helpers/wait.ts";

/**
 * Rule E8: payments commits automatically every few seconds, so a crash may make it read a
 * record again. The idempotent orders API tolerates it.
 */
const shop = testShop("reread");
const ordersLog = capturingLogger("orders-api");
let api: OrdersApi;

beforeAll(async () => {
  ({ api } = await shop.ordersApi({}, ordersLog));
}, 60_000);

/** Payments as a process, with a long commit interval: the crash surely comes before the commit. */
const startPayments = () =>
  shop.start("payments", "payments", {
    INSTANCIA: "caixa-1",
    TEMPO_DECISAO_MS: "700",
    COMMIT_INTERVAL_MS: "60000",
  });

describe("Rule E8: a crash before the offset commit makes payments read a record again", () => {
  it("When payments is killed -9 after a decision but before its commit, then after a restart it decides that order again and the orders API ignores the repeat", async () => {
    // Orders first, so that the instance fetches them together in one batch per partition.
    const ids: number[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await http<Pedido>("POST", `${api.url}/pedidos`, {
        cliente: "Ivo",
        item: "cabo",
        quantidade: 1,
        precoUnitario: 5,
      });
      ids.push(res.body.id);
    }

    const first = await startPayments();
    const line = await first.waitForLine(/partition=\d offset=\d+ pedido=\d+/);
    await first.kill();
    const pedidoId = Number((line.match(/pedido=(\d+)/) as RegExpMatchArray)[1]);

    const afterCrash = await waitFor(async () => {
      const p = (await http<Pedido>("GET", `${api.url}/pedidos/${pedidoId}`)).body;
      return p.status === "PAGO" && p;
    });

    const second = await startPayments();
    await second.waitForLine(new RegExp(`pedido=${pedidoId} `), 30_000);
    // The repeat reached the orders API and changed nothing: its timeline says so.
    await waitFor(
      async () =>
        (
          await http<{ etapas: { etapa: string }[] }>(
            "GET",
            `${api.url}/pedidos/${pedidoId}/historico`,
          )
        ).body.etapas.some((e) => e.etapa === "resultado-repetido"),
      { what: "the orders API to ignore the repeated result" },
    );

    expect((await http<Pedido>("GET", `${api.url}/pedidos/${pedidoId}`)).body).toEqual(afterCrash);
    // And the rest are all decided, each once in effect.
    await waitFor(async () => {
      const all = (await http<Pedido[]>("GET", `${api.url}/pedidos`)).body;
      return all.filter((p) => ids.includes(p.id)).every((p) => p.status === "PAGO");
    });
  }, 120_000);
});
